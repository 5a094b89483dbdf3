# Session 22, command 5: DLRM at W/B 2, plan against ideal with every kernel timed (--kernel-times): does the host tables' cost show on the GPU?
mkdir -p $OUT/s
t0=$(date +%s)
KERNEL_TIMES=1 STEPS=30 BUILD=build-lead RATIOS="2" POLICIES="plan" REPS=3 RUN_LIMIT_S=60 bash bench/suite.sh dlrm $OUT/s grid > $OUT/s/dlrm.log 2>&1
echo "dlrm rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/dlrm.log
tail -n 2 $OUT/s/dlrm.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
