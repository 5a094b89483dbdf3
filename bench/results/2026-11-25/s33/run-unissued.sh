# Session 33: plan's faults at W/B 2 against the model's two counts, on
# 037cd57 (engine.unissued_blocks) carried as build-late: BERT-large,
# ResNet-152 and ViT-B/16 under plan (with ideal, the grid's reference),
# one repetition each, stats kept.
set -uo pipefail
MODELS_RUN=${MODELS_RUN:-bert resnet152 vit}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-late/lib
t0=$(date +%s)
for m in $MODELS_RUN; do
	BUILD=build-late RATIOS=2 POLICIES="plan" REPS=1 RUN_LIMIT_S=90 \
		timeout 190 bash bench/suite.sh $m $OUT/s grid > $OUT/s/$m.log 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
