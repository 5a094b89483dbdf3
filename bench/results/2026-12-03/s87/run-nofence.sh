# Session 87, a diagnostic (unsafe): does the program's thread waiting for
# the arena's fences cost the plan its step? build/ is main (df6811f's C
# code); build-nofence/ is the same with no-fence-wait.patch, whose arena
# reuses a freed range without waiting for the GPU (a kernel may then
# write a new tensor while an old one's kernel still reads it; the suite's
# outputs check says whether it did). Recording and planning use build/;
# the two builds' replays take turns. MODELS (ViT-B/16, ResNet-152, whose
# allocations wait for fences since their convolutions use a second
# stream) at W/B 2 under plan, REPS rounds, with ideal beside. Run from the
# repository root on the GPU machine:
#   OUT=$OUT bash bench/results/2026-12-03/s87/run-nofence.sh
# COMPARE and ARCHIVE name another build to set beside build/ and the
# archive (session 89's run-order.sh).
set -uo pipefail
OUT=${OUT:?}
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
mkdir -p "$OUT/s"
for m in ${MODELS:-vit resnet152}; do
	BUILD=build COMPARE=${COMPARE:-build-nofence} RATIOS=2 POLICIES=plan REPS=${REPS:-2} RUN_LIMIT_S=100 \
		timeout "${MODEL_LIMIT_S:-200}" bash bench/suite.sh "$m" "$OUT/s" grid >"$OUT/s/$m.log" 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
python3 bench/suite_report.py "$OUT/s" 2>&1 | sed -n '/^| model/,/^$/p'
tar czf "$OUT/${ARCHIVE:-nofence}.tgz" -C "$OUT" s && rm -rf "$OUT/s"
