# Session 32: the wait for an unissued prefetch made only where faulting
# would cost more than the worker's queue (build) beside 67a368a
# (build-old): train_sim and the MLP at W/B 2 and 3, plan, one repetition
# each; ViT-B/16 at W/B 2, plan, two interleaved repetitions; then the GPU
# checks' replay part for the MLP at W/B 2 with the build.
set -uo pipefail
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
OUT=$OUT/mlp-sim REPS=1 RATIOS="2 3" timeout 200 \
	bash bench/results/2026-11-25/s32/run-gate-issue-ab.sh > $OUT/s/mlp-sim.log 2>&1
echo "mlp-sim rc=$? $(( $(date +%s) - t0 )) s"
cp $OUT/mlp-sim/s/table.txt $OUT/s/mlp-sim-table.txt
COMPARE=build-old RATIOS=2 POLICIES=plan REPS=2 RUN_LIMIT_S=90 \
	timeout 230 bash bench/suite.sh vit $OUT/s grid > $OUT/s/vit.log 2>&1
echo "vit rc=$? $(( $(date +%s) - t0 )) s"
SECTIONS=replay CASES=mlp RATIOS=2 timeout 180 bash tests/gpu/run.sh $OUT/s/gpu > $OUT/s/gpu-checks.log 2>&1
echo "gpu checks rc=$? $(( $(date +%s) - t0 )) s"
rm -f $OUT/s/gpu/*.db
tar czf $OUT/all.tar.gz -C $OUT s mlp-sim/all.tar.gz && rm -rf $OUT/s/*-outputs.tar.gz
