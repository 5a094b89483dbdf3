# c60ad8f (build-lead) beside 64c1c1b (build-diag, diagnostic switches off) on the same plans, interleaved
mkdir -p $OUT/s
t0=$(date +%s)
for m in $MODELS; do
BUILD=build-lead COMPARE=build-diag RATIOS="2" POLICIES="plan" REPS=3 RUN_LIMIT_S=90 bash bench/suite.sh $m $OUT/s grid > $OUT/s/$m.log 2>&1
echo "$m rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/$m.log
done
grep -h "rc=" $OUT/s/*.log | tail -n 30
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
