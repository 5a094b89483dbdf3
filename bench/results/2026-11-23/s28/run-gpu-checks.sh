# Session 28: tests/gpu/run.sh, run on 37615ba (the replayer of 389a624) and on 383e8f7 (with the new host statistics).
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
BUILD=build-lead timeout 570 bash tests/gpu/run.sh $OUT/s/gpu > $OUT/s/gpu-checks.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/gpu-checks.log
tail -45 $OUT/s/gpu-checks.log
grep -h '"prefetch_gates"\|gated_launches' -r $OUT/s/gpu --include=*.json | sort | uniq -c | sort -rn | head -8
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
