# Session 22, command 1: calibrate.py's spread (3 runs of the median-of-5 version), then DLRM:
# ondemand at W/B 2 (faults reference), plan at W/B 1.5, 2 and 3 with 4 interleaved reps of 30 steps.
mkdir -p $OUT/s
t0=$(date +%s)
for i in 1 2 3; do python3 tests/gpu/calibrate.py 1 >> $OUT/s/calib-spread.jsonl; done
echo "calib $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
STEPS=6 BUILD=build-lead RATIOS="2" POLICIES="ondemand" REPS=1 RUN_LIMIT_S=90 bash bench/suite.sh dlrm $OUT/s/ond grid > $OUT/s/ond.log 2>&1
echo "ondemand rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
STEPS=30 BUILD=build-lead RATIOS="1.5 2 3" POLICIES="plan" REPS=4 RUN_LIMIT_S=60 bash bench/suite.sh dlrm $OUT/s/plan grid > $OUT/s/plan.log 2>&1
echo "plan rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
cat $OUT/s/times.log; cat $OUT/s/calib-spread.jsonl
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
