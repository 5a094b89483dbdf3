# Session 36: does the slow first replay after a recording stay slow for a
# long run, or only start slow? ViT-B/16 at W/B 2 with STEPS (30) steps:
# record, plan, the plain program, then three plan replays; each replay's
# iteration times in groups of five (medians), its faults and eviction-call
# time (vit-replays.sh's table line). From the repository root on the GPU
# machine: bash THIS.
set -uo pipefail
W=/tmp/s36-long
STEPS=${STEPS:-30}
. "$(dirname "$0")/../s35/vit-replays.sh"
record_and_plan
"${cmd[@]}" >"$W/plain.out" 2>&1
for rep in 1 2 3; do
	replay_plan "plan.$rep"
	python3 - "$OUT/s/plan.$rep.json" <<'PY' | tee -a "$OUT/s/table.txt"
import json, statistics, sys
ms = [t / 1e6 for t in json.load(open(sys.argv[1]))["iteration_ns"]]
print("  iteration ms, median of each five:", [round(statistics.median(ms[i:i + 5])) for i in range(0, len(ms), 5)])
PY
done
tar czf "$OUT/all.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
