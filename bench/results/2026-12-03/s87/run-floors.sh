# Session 87: MODELS (ViT-B/16, GPT-2 small, ResNet-152, BERT-large) at W/B
# RATIOS (2) under plan, one round, through bench/suite.sh's grid, the build
# carried as build/: the plans' capacity floors beside their measured steps
# (the grid's "floor ms" and "x floor"). Run from the repository root on
# the GPU machine:
#   OUT=$OUT bash bench/results/2026-12-03/s87/run-floors.sh
set -uo pipefail
OUT=${OUT:?}
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
mkdir -p "$OUT/s"
for m in ${MODELS:-vit gpt2 resnet152 bert}; do
	RATIOS=${RATIOS:-2} POLICIES=plan REPS=1 RUN_LIMIT_S=100 \
		timeout "${MODEL_LIMIT_S:-120}" bash bench/suite.sh "$m" "$OUT/s" grid >"$OUT/s/$m.log" 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
python3 bench/suite_report.py "$OUT/s" 2>&1 | sed -n '/^| model/,/^$/p'
tar czf "$OUT/floors.tgz" -C "$OUT" s && rm -rf "$OUT/s"
