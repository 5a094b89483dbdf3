# Session 33: where plan's faults come from on BERT-large and ResNet-152 at
# W/B 2: ondemand and plan (with ideal, the grid's reference), one repetition,
# stats kept (engine.refault_blocks against measured.fault_migrations).
set -uo pipefail
MODELS_RUN=${MODELS_RUN:-bert resnet152}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
for m in $MODELS_RUN; do
	RATIOS=2 POLICIES="ondemand plan" REPS=1 RUN_LIMIT_S=90 \
		timeout 280 bash bench/suite.sh $m $OUT/s grid > $OUT/s/$m.log 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
