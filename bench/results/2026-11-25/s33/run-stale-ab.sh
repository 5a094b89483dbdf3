# Session 33: the stale-block repopulation (build, c6ef87a) beside 9cf9bae
# (build-old) in one command: BERT-large at W/B 2, ideal and plan, REPS
# interleaved repetitions (bench/suite.sh grid with COMPARE), stats kept.
set -uo pipefail
REPS=${REPS:-2}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
COMPARE=build-old RATIOS=2 POLICIES=plan REPS=$REPS RUN_LIMIT_S=90 \
	timeout 400 bash bench/suite.sh bert $OUT/s grid > $OUT/s/bert.log 2>&1
echo "bert rc=$? $(( $(date +%s) - t0 )) s"
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
