# Session 26: the MLP's replay checks with the idle cases (afb762d's replayer, run.sh of this commit),
# then DLRM's base part (plain, ideal, plan at B = 1.25 W, now idle), 5 interleaved repetitions of 30 steps.
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
SECTIONS=replay CASES=mlp RATIOS=2 BUILD=build-lead bash tests/gpu/run.sh $OUT/s/checks > $OUT/s/gpu-checks.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/gpu-checks.log
tail -16 $OUT/s/gpu-checks.log
t0=$(date +%s)
REPS=5 STEPS=30 BUILD=build-lead bash bench/suite.sh dlrm $OUT/s base > $OUT/s/dlrm-base.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/dlrm-base.log
tail -2 $OUT/s/dlrm-base.log
python3 bench/suite_report.py $OUT/s 2>&1 | grep -B2 -A4 "plan vs plain" | head -12
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
