# Session 22, command 2: every GPU check (tests/gpu/run.sh) on f7689c6 (e9590f0's C code)
mkdir -p $OUT/s
BUILD=build-lead bash tests/gpu/run.sh $OUT/s/gpu > $OUT/s/gpu-checks.log 2>&1
echo "rc=$?" >> $OUT/s/gpu-checks.log
tail -n 75 $OUT/s/gpu-checks.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
