# Session 89: the arena's fences ordered on the GPU (common/cuda/fence_order.h)
# against the host's wait for them. build/ is this session's build;
# build-old/ is 6367448 (session 88's last), whose allocations wait on the
# host. Recording and planning use build/; the two builds' replays take
# turns. MODELS (ViT-B/16 and ResNet-152, whose convolutions use a second
# stream, so their allocations met pending fences) at W/B 2 under plan,
# REPS rounds, with ideal beside; the suite checks every output against
# the plain run's. Run from the repository root on the GPU machine:
#   OUT=$OUT bash bench/results/2026-12-03/s89/run-order.sh
set -uo pipefail
OUT=${OUT:?}
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
mkdir -p "$OUT/s"
for m in ${MODELS:-vit resnet152}; do
	BUILD=build COMPARE=build-old RATIOS=2 POLICIES=plan REPS=${REPS:-2} RUN_LIMIT_S=100 \
		timeout "${MODEL_LIMIT_S:-200}" bash bench/suite.sh "$m" "$OUT/s" grid >"$OUT/s/$m.log" 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
python3 bench/suite_report.py "$OUT/s" 2>&1 | sed -n '/^| model/,/^$/p'
tar czf "$OUT/order.tgz" -C "$OUT" s && rm -rf "$OUT/s"
