# Session 27: replay's overhead when memory suffices, plain against plan at B = 1.25 W (idle), many interleaved repetitions.
M=${M:-dlrm}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
OVERHEAD_VARIANTS=plan REPS=${REPS:-10} OVERHEAD_STEPS=30 BUILD=build-lead timeout ${LIMIT:-560} bash bench/suite.sh $M $OUT/s overhead > $OUT/s/$M-overhead.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/$M-overhead.log
tail -1 $OUT/s/$M-overhead.log
python3 bench/pooled_steps.py $OUT/s/$M-outputs.tar.gz
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
