# Session 32: ViT-B/16 and ResNet-152 at W/B 2, the build under test
# (build) beside 67a368a (build-old) in the same command, same recordings
# and plans: POLICIES (ondemand plan) with REPS (1) interleaved repetitions.
# Command B ran it as is, command C with POLICIES=plan REPS=2 (README.md).
set -uo pipefail
POLICIES=${POLICIES:-ondemand plan}
REPS=${REPS:-1}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
for m in vit resnet152; do
	COMPARE=build-old RATIOS=2 POLICIES="$POLICIES" REPS=$REPS RUN_LIMIT_S=90 \
		timeout 280 bash bench/suite.sh $m $OUT/s grid > $OUT/s/$m.log 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
tar czf $OUT/all.tar.gz -C $OUT s
