# Session 34: a plan eviction keeps blocks shared with live tensors (build,
# 2a6b1eb) beside 5d5a102 (build-old), in one command: ResNet-152, ViT-B/16
# and BERT-large at W/B 2, ideal and plan, REPS interleaved repetitions
# (bench/suite.sh grid with COMPARE), stats kept.
set -uo pipefail
REPS=${REPS:-2}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
for m in ${MODELS_AB:-resnet152 vit bert}; do
	t0=$(date +%s)
	COMPARE=build-old RATIOS=2 POLICIES=plan REPS=$REPS RUN_LIMIT_S=90 \
		timeout ${MODEL_LIMIT_S:-180} bash bench/suite.sh $m $OUT/s grid > $OUT/s/$m.log 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
