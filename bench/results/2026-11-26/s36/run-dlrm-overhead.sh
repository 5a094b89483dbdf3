# Session 36: DLRM's idle replay against plain with the suite's warm-up
# (a plan replay at B = 1.25 W right after the recording, left out), then
# REPS (12) rotated rounds of plain and plan at B = 1.25 W, 200-step runs;
# pooled and paired step times against plain (warm-up steps: the first 5).
export LD_LIBRARY_PATH=$PWD/build/lib
WARMUP=1 OVERHEAD_VARIANTS=plan OVERHEAD_STEPS=200 REPS=${REPS:-12} bash bench/suite.sh dlrm $OUT/s overhead || exit 1
python3 bench/pooled_steps.py $OUT/s/dlrm-outputs.tar.gz | tee $OUT/s/pooled.txt
python3 - $OUT/s/dlrm.csv <<'PY' | tee $OUT/s/table.txt
import csv, sys
print("| run | experiment | policy | rep | step ms | same output |")
print("| ---: | --- | --- | ---: | ---: | --- |")
for n, r in enumerate(csv.DictReader(open(sys.argv[1])), 1):
    print(f"| {n} | {r['experiment']} | {r['policy']} | {r['rep']} | {r['step_ms']} | {r['same_output']} |")
PY
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
