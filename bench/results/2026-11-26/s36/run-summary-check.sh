# Session 36: tests/gpu/run.sh's replay section on train_sim at W/B 2 only,
# for the summary line's new wording (the full checks ran on a4b8248).
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
SECTIONS=replay CASES=sim RATIOS=2 timeout 500 bash tests/gpu/run.sh $OUT/s/gpu > $OUT/s/gpu-checks.log 2>&1
echo "rc=$?" >> $OUT/s/gpu-checks.log
grep -E "umreplay: policy" $OUT/s/gpu-checks.log
tail -12 $OUT/s/gpu-checks.log
rm -f $OUT/s/gpu/*.db
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
