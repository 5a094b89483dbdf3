# Session 82: with CHECKS=1 the GPU checks' cache section first; then
# MODELS (ViT-B/16 and GPT-2 small) at W/B RATIO (2) under ondemand and plan, one
# round, the build carried as build/ (aaf6eb8): the plan's faults as a
# share of ondemand's with the wait for late prefetches. Run from the
# repository root on the GPU machine:
#   CHECKS=1 OUT=$OUT bash THIS
#   MODELS="bert resnet152" MODEL_LIMIT_S=200 OUT=$OUT bash THIS
#   MODELS=vit RATIO=3 MODEL_LIMIT_S=150 OUT=$OUT bash THIS
set -uo pipefail
OUT=${OUT:?}
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
[ -n "${CHECKS:-}" ] && bash bench/results/2026-11-29/s46/run-gpu-checks.sh cache 2>&1 | tail -3
mkdir -p "$OUT/s"
for m in ${MODELS:-vit gpt2}; do
	RATIOS=${RATIO:-2} POLICIES="ondemand plan" REPS=1 RUN_LIMIT_S=120 \
		timeout "${MODEL_LIMIT_S:-220}" bash bench/suite.sh "$m" "$OUT/s" grid >"$OUT/s/$m.log" 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
python3 bench/suite_report.py "$OUT/s" 2>&1 | sed -n '/^| model/,/^$/p'
tar czf "$OUT/models.tgz" -C "$OUT" s && rm -rf "$OUT/s"
