# Session 36: the suite's warm-up on ResNet-152 at W/B 2 after a fresh
# recording: WARMUP=1, then REPS (4) rounds of ideal, ondemand and plan; rows in run
# order (table.txt) and pooled and paired step times against ideal.
export LD_LIBRARY_PATH=$PWD/build/lib
WARMUP=1 RATIOS=2 POLICIES="ondemand plan" REPS=${REPS:-4} bash bench/suite.sh resnet152 $OUT/s grid || exit 1
python3 - $OUT/s/resnet152.csv <<'PY' | tee $OUT/s/table.txt
import csv, sys
print("| run | experiment | policy | rep | step ms | faults / iter | same output |")
print("| ---: | --- | --- | ---: | ---: | ---: | --- |")
for n, r in enumerate(csv.DictReader(open(sys.argv[1])), 1):
    print(f"| {n} | {r['experiment']} | {r['policy']} | {r['rep']} | {r['step_ms']} | {r['faults_per_iter']} | {r['same_output']} |")
PY
python3 bench/pooled_steps.py $OUT/s/resnet152-outputs.tar.gz --ref ideal --skip 1 | tee $OUT/s/pooled.txt
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
