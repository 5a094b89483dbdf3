# Session 32: ViT-B/16 and ResNet-152 at W/B 2, plan only, two interleaved
# repetitions of the build under test (build) beside 67a368a (build-old),
# same recordings and plans (the timing question run-models-ab.sh left).
set -uo pipefail
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
for m in vit resnet152; do
	COMPARE=build-old RATIOS=2 POLICIES=plan REPS=2 RUN_LIMIT_S=90 \
		timeout 280 bash bench/suite.sh $m $OUT/s grid > $OUT/s/$m.log 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s/*-outputs.tar.gz
