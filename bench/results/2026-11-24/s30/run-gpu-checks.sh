# Session 30: tests/gpu/run.sh on the final build.
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
BUILD=build-lead timeout 570 bash tests/gpu/run.sh $OUT/s/gpu > $OUT/s/gpu-checks.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/gpu-checks.log
tail -45 $OUT/s/gpu-checks.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
