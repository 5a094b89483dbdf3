# Session 23, command 4: the suite's DLRM grid with 4261d60's planner (the last host table in part):
# plan at W/B 1.5, 2 and 3, 4 interleaved repetitions of 30 steps, ideal beside them.
mkdir -p $OUT/s
t0=$(date +%s)
STEPS=30 BUILD=build-lead RATIOS="1.5 2 3" POLICIES="plan" REPS=4 RUN_LIMIT_S=60 bash bench/suite.sh dlrm $OUT/s grid > $OUT/s/dlrm.log 2>&1
echo "dlrm rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/dlrm.log
tail -n 20 $OUT/s/dlrm.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
