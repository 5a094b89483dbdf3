# Session 93: dead blocks discarded beside the evictions on their way out,
# on the lane (488c789, carried as build/), beside 1e6ae82 (build-old/,
# a64eb57's replayer) on train_sim in turn; then the replay section's
# checks on 488c789 at W/B 1.5 and 2, cut at CHECKS_LIMIT_S (320) to fit
# the session's last device time. From the repository root on the GPU
# machine:
#   OUT=$OUT bash bench/results/2026-12-04/s93/run-lane.sh
set -uo pipefail
OUT=${OUT:?}
SIM_ONLY=1 OUT=$OUT bash bench/results/2026-12-04/s90/run-ahead.sh
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
mkdir -p "$OUT/replay"
SECTIONS=replay CASES="sim mlp" RATIOS="1.5 2" timeout "${CHECKS_LIMIT_S:-320}" \
	bash tests/gpu/run.sh "$OUT/replay/gpu" >"$OUT/replay/gpu-checks.log" 2>&1
echo "rc=$? $(($(date +%s) - t0)) s, build $(cat build/COMMIT)" >>"$OUT/replay/gpu-checks.log"
grep -E '^== |passed' "$OUT/replay/gpu-checks.log" | grep -vE 'PASS' | tail -20
tail -3 "$OUT/replay/gpu-checks.log"
find "$OUT/replay/gpu" -name '*.db' -delete
cd "$OUT" && tar czf replay-lane.tgz replay && rm -rf replay
