# Session 32: a narrower wait (build-jit: a launch waits for the worker to
# issue its prefetch only when that prefetch is the newest one queued, i.e.
# made at this launch or with nothing queued since) beside 67a368a
# (build-old): ViT-B/16 at W/B 2, plan, two interleaved repetitions; then
# train_sim and the MLP at W/B 2 and 3, one each. build-jit is the build of
# the wait-always change with rp_exec.c's gate_launch returning early (and
# counting the launch unissued) unless ticket equals the newest prefetch
# job's ticket.
set -uo pipefail
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
COMPARE=build-old BUILD=build-jit RATIOS=2 POLICIES=plan REPS=2 RUN_LIMIT_S=90 \
	timeout 280 bash bench/suite.sh vit $OUT/s grid > $OUT/s/vit.log 2>&1
echo "vit rc=$? $(( $(date +%s) - t0 )) s"
OUT=$OUT/mlp-sim REPS=1 RATIOS="2 3" BUILDS="build-old build-jit" timeout 200 \
	bash bench/results/2026-11-25/s32/run-gate-issue-ab.sh > $OUT/s/mlp-sim.log 2>&1
echo "mlp-sim rc=$? $(( $(date +%s) - t0 )) s"
cp $OUT/mlp-sim/s/table.txt $OUT/s/mlp-sim-table.txt
tar czf $OUT/all.tar.gz -C $OUT s mlp-sim/all.tar.gz && rm -rf $OUT/s/*-outputs.tar.gz
