# Session 28: one bench/suite.sh command with many interleaved repetitions, pooled afterwards (bench/pooled_steps.py).
# M=model PARTS=parts; REPS, STEPS, OVERHEAD_*, RATIOS, POLICIES are passed through (README.md has the three commands).
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
BUILD=build-lead timeout ${LIMIT:-560} bash bench/suite.sh $M $OUT/s "$PARTS" > $OUT/s/$M.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/$M.log
tail -4 $OUT/s/$M.log
python3 bench/pooled_steps.py $OUT/s/$M-outputs.tar.gz
python3 bench/pooled_steps.py $OUT/s/$M-outputs.tar.gz --ref ideal 2>/dev/null
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
