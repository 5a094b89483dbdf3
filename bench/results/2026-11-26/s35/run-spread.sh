# Session 35: how far apart are plan replays of one build, one recording
# and one plan? ViT-B/16 at W/B 2: N plan replays in a row after one plain
# run (vit-replays.sh), for the spread a step-time difference between
# builds must beat. From the repository root on the GPU machine: bash THIS.
set -uo pipefail
N=${N:-20}
W=/tmp/s35-spread
. "$(dirname "$0")/vit-replays.sh"
record_and_plan
"${cmd[@]}" >"$W/plain.out" 2>&1
echo "plain $(grep -E '^per_step_ms' "$W/plain.out")" | tee -a "$OUT/s/table.txt"
for i in $(seq "$N"); do
	replay_plan "plan.$i"
done
tar czf "$OUT/all.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
