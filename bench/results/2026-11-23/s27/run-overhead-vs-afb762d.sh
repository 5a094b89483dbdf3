# Session 27: DLRM's plan at B = 1.25 W (idle) on afb762d (session 26) beside 4d5fd5a, with plain, 6 interleaved repetitions.
M=${M:-dlrm}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
COMPARE=build-lead/old OVERHEAD_VARIANTS=plan REPS=${REPS:-6} OVERHEAD_STEPS=30 BUILD=build-lead timeout ${LIMIT:-560} bash bench/suite.sh $M $OUT/s overhead > $OUT/s/$M-overhead.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/$M-overhead.log
tail -1 $OUT/s/$M-overhead.log
python3 bench/pooled_steps.py $OUT/s/$M-outputs.tar.gz
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
