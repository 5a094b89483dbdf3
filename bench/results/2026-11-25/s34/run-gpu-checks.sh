# Session 34: tests/gpu/run.sh on the final build (0fade50, the code of 5d5a102) carried as build/.
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
timeout 560 bash tests/gpu/run.sh $OUT/s/gpu > $OUT/s/gpu-checks.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/gpu-checks.log
tail -100 $OUT/s/gpu-checks.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
