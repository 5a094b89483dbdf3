# Session 36: does the suite's warm-up replay take the slow first replay
# after a recording? MODEL (vit, resnet152, ...) at W/B RATIO (2; on a fresh machine
# the suite records first): WARMUP=1, then REPS rounds of ideal, ondemand
# and plan; every row's step time and faults per iteration in run order
# (table.txt), and the pooled and paired step times against ideal, the
# warm-up included as its own row. Usage: bash THIS MODEL REPS
MODEL=${1:?usage: run-warmup.sh MODEL REPS} REPS=${2:?usage: run-warmup.sh MODEL REPS}
export LD_LIBRARY_PATH=$PWD/build/lib
WARMUP=1 RATIOS=${RATIO:-2} POLICIES="ondemand plan" REPS=$REPS bash bench/suite.sh $MODEL $OUT/s grid || exit 1
python3 - $OUT/s/$MODEL.csv <<'PY' | tee $OUT/s/table.txt
import csv, sys
print("| run | experiment | policy | rep | step ms | faults / iter | same output |")
print("| ---: | --- | --- | ---: | ---: | ---: | --- |")
for n, r in enumerate(csv.DictReader(open(sys.argv[1])), 1):
    print(f"| {n} | {r['experiment']} | {r['policy']} | {r['rep']} | {r['step_ms']} | {r['faults_per_iter']} | {r['same_output']} |")
PY
python3 bench/pooled_steps.py $OUT/s/$MODEL-outputs.tar.gz --ref ideal --skip 1 | tee $OUT/s/pooled.txt
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
