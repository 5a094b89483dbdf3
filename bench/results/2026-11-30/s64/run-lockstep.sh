# Session 64: replay's cost when memory suffices, each run taking its
# steps in turn with a plain one (bench/overhead_lockstep.sh), for DLRM,
# ResNet-152 and GPT-2 small; results in $OUT/lockstep/.
#   bash bench/results/2026-11-30/s64/run-lockstep.sh
export LD_LIBRARY_PATH=$PWD/build/lib
for m in ${MODELS_STEPS:-dlrm:2000 resnet152:300 gpt2:300}; do
	bash bench/overhead_lockstep.sh ${m%%:*} $OUT/lockstep ${m##*:} | tail -25
done
