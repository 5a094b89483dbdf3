# Session 26: replay's overhead when memory suffices, afb762d (idle while the plan has nothing to do)
# beside 7feb9a5 (follows every launch), one command per model: bench/suite.sh's overhead part.
M=${M:-dlrm}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
REPS=${REPS:-3} OVERHEAD_STEPS=${STEPS:-30} COMPARE=build-lead/old BUILD=build-lead bash bench/suite.sh $M $OUT/s overhead > $OUT/s/$M-overhead.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/$M-overhead.log
tail -5 $OUT/s/$M-overhead.log
python3 bench/suite_report.py $OUT/s 2>&1 | grep -A12 "overhead" | head -30
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
