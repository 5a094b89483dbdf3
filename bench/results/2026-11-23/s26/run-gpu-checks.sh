# Session 26: the GPU checks on afb762d (idle while the plan has nothing to do; mlp.idle and mlp.woken).
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
BUILD=build-lead bash tests/gpu/run.sh $OUT/s > $OUT/s/gpu-checks.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/gpu-checks.log
grep -E "mlp\.(idle|woken)" $OUT/s/gpu-checks.log | tail -8
tail -3 $OUT/s/gpu-checks.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
