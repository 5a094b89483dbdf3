# Session 85: the PyTorch MLP and train_sim (plan at W/B RATIOS, REPS
# rounds in turn, bench/results/2026-12-03/s82/run-late-wait-ab.sh) and
# ViT-B/16 (plan at W/B 2 through bench/suite.sh's grid, REPS runs) under
# build/ (a build with evict-stream-exp/evict-stream.patch or
# two-streams/two-streams.patch applied to 2d9fe3c) beside build-old/
# (2d9fe3c). Run from the repository root on the GPU machine with both
# builds present:
#   RATIOS="2 3" REPS=2 OUT=$OUT bash THIS
set -uo pipefail
OUT=${OUT:?}
export LD_LIBRARY_PATH=$PWD/build/lib
MODELS=" " RATIOS="${RATIOS:-2 3}" REPS=${REPS:-2} OUT=$OUT \
	bash bench/results/2026-12-03/s82/run-late-wait-ab.sh 2>&1 | tail -20
mkdir -p "$OUT/s"
COMPARE=build-old RATIOS=2 POLICIES=plan REPS=${REPS:-2} RUN_LIMIT_S=90 \
	bash bench/suite.sh vit "$OUT/s" grid >"$OUT/s/vit.log" 2>&1
echo "vit rc=$?"
python3 bench/suite_report.py "$OUT/s" 2>&1 | grep "| vit"
tar czf "$OUT/vit.tgz" -C "$OUT" s
