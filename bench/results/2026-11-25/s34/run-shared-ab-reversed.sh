# Session 34: the shared-block A/B again with the order of the builds
# reversed: 5d5a102 (build-old) runs first in each round, 2a6b1eb (blocks
# shared with live tensors kept; build-new) second. ResNet-152 and ViT-B/16
# at W/B 2, ideal and plan, REPS interleaved repetitions, stats kept.
set -uo pipefail
REPS=${REPS:-2}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-old/lib
for m in ${MODELS_AB:-resnet152 vit}; do
	t0=$(date +%s)
	BUILD=build-old COMPARE=build-new RATIOS=2 POLICIES=plan REPS=$REPS RUN_LIMIT_S=90 \
		timeout ${MODEL_LIMIT_S:-180} bash bench/suite.sh $m $OUT/s grid > $OUT/s/$m.log 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
