# BERT-large at W/B 2 under plan, c60ad8f: plans made assuming each eviction bandwidth
mkdir -p $OUT/s
t0=$(date +%s)
for bw in 9 13 18; do
mkdir -p $OUT/s/dtoh$bw
DTOH_BW=$bw BUILD=build-lead RATIOS="2" POLICIES="plan" REPS=2 RUN_LIMIT_S=90 bash bench/suite.sh bert $OUT/s/dtoh$bw grid > $OUT/s/dtoh$bw/bert.log 2>&1
echo "dtoh $bw rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/dtoh$bw/bert.log
done
grep -h "rc=" $OUT/s/*/*.log | tail -n 30
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
