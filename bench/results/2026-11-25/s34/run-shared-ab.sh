# Session 34: a plan eviction keeps blocks shared with live tensors (2a6b1eb)
# beside 5d5a102, in one command: ResNet-152, ViT-B/16 and BERT-large at
# W/B 2, ideal and plan, REPS interleaved repetitions (bench/suite.sh grid
# with COMPARE), stats kept. FIRST runs first in each round (default build/,
# 2a6b1eb), SECOND after it (default build-old/, 5d5a102).
set -uo pipefail
REPS=${REPS:-2}
FIRST=${FIRST:-build} SECOND=${SECOND:-build-old}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/$FIRST/lib
for m in ${MODELS_AB:-resnet152 vit bert}; do
	t0=$(date +%s)
	BUILD=$FIRST COMPARE=$SECOND RATIOS=2 POLICIES=plan REPS=$REPS RUN_LIMIT_S=90 \
		timeout ${MODEL_LIMIT_S:-180} bash bench/suite.sh $m $OUT/s grid > $OUT/s/$m.log 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
