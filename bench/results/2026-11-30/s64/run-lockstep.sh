# Session 64: replay's cost when memory suffices, each run taking its
# steps in turn with plain ones (bench/overhead_lockstep.sh); results in
# $OUT/lockstep/. The first command ran d6c889e's script (one ring of two
# runs, plain against plain, then one against the plan) with
# MODELS_STEPS="dlrm:2000 resnet152:300 gpt2:300" (lockstep-1/); the
# second this one, ROUNDS rounds of three runs (lockstep-2/):
#   MODELS_STEPS=dlrm:500 ROUNDS=12 bash bench/results/2026-11-30/s64/run-lockstep.sh
export LD_LIBRARY_PATH=$PWD/build/lib
for m in ${MODELS_STEPS:-dlrm:500}; do
	bash bench/overhead_lockstep.sh ${m%%:*} $OUT/lockstep ${m##*:} | tail -12
done
