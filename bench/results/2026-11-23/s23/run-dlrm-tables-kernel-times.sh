# Session 23, command 1: DLRM under plan at W/B 1.25, 1.5, 2 and 3 with kernel times:
# GPU busy per step against the number of host-placed tables (the intercept is what the
# always-chosen 32 MiB buffer, alloc 26, costs).
mkdir -p $OUT/s
t0=$(date +%s)
KERNEL_TIMES=1 STEPS=20 BUILD=build-lead RATIOS="1.25 1.5 2 3" POLICIES="plan" REPS=2 RUN_LIMIT_S=60 bash bench/suite.sh dlrm $OUT/s grid > $OUT/s/dlrm.log 2>&1
echo "dlrm rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/dlrm.log
tail -n 14 $OUT/s/dlrm.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
