# Session 26 review: a smoke run of the refactored launch decoding (recorder and replayer) and subscriber ownership:
# tests/gpu/run.sh's replay section on the MLP at W/B 2, with the idle and woken cases.
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
SECTIONS=replay CASES=mlp RATIOS=2 BUILD=build-lead bash tests/gpu/run.sh $OUT/s/checks > $OUT/s/gpu-checks.log 2>&1
echo "rc=$?" >> $OUT/s/gpu-checks.log
tail -16 $OUT/s/gpu-checks.log
tar czf $OUT/all.tar.gz -C $OUT s/gpu-checks.log && rm -rf $OUT/s
