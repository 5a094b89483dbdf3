# Session 32: plan replays of train_sim and the PyTorch MLP with the gate
# that waits for the worker to issue a launch's prefetch (build) beside the
# one that does not (build-old, 67a368a), interleaved, same recordings and
# plans. Run from the repository root on the GPU machine: bash THIS.
set -uo pipefail
OUT=${OUT:-/tmp/s32}
REPS=${REPS:-2}
RATIOS=${RATIOS:-1.5 2 3}
BUILDS=${BUILDS:-build-old build}
MAXM=8G
W=/tmp/s32-work; rm -rf "$W"; mkdir -p "$W" "$OUT/s/stats"
SIM=build/examples/train_sim
sim=($SIM --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
mlp=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
for name in sim mlp; do
	declare -n cmd=$name
	"${cmd[@]}" >"$W/$name.plain" 2>&1
	build/bin/umrec -q -o "$W/$name.db" --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>&1
	w=$(build/bin/umplan "$W/$name.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	for ratio in $RATIOS; do
		budget=$(python3 -c "print(int($w / $ratio))")
		build/bin/umplan "$W/$name.db" --capacity "$budget" -o "$W/$name.$ratio.plan" >/dev/null 2>&1
		for rep in $(seq 1 $REPS); do
			for b in $BUILDS; do
				tag=$name.$ratio.$b.$rep
				$b/bin/umreplay --plan "$W/$name.$ratio.plan" --policy plan --gpu-budget "$budget" \
					--max-managed $MAXM --stats "$OUT/s/stats/$tag.json" -- "${cmd[@]}" >"$W/$tag.out" 2>"$W/$tag.err"
				rc=$?
				same=no
				diff <(grep -E '^(checksum|step|iter) ' "$W/$name.plain") <(grep -E '^(checksum|step|iter) ' "$W/$tag.out") >/dev/null && [ $rc -eq 0 ] && same=yes
				python3 - "$OUT/s/stats/$tag.json" "$tag" "$same" <<'PY' | tee -a "$OUT/s/table.txt"
import json, statistics, sys
d = json.load(open(sys.argv[1])); m = d["measured"]; g = m["host"]["prefetch_gates"]
st = lambda v: statistics.median(v[1:] if len(v) > 2 else v)
print("%-22s same=%s iter_ms=%.1f faults/iter=%d fault_MB=%.1f htod_MB/iter=%.0f dtoh_MB/iter=%.0f gates waits=%d issue_waits=%s unissued=%d gate_ms=%.1f callback_ms=%.0f" % (
    sys.argv[2], sys.argv[3], st([t / 1e6 for t in d["iteration_ns"]]), st([i["fault_migrations"] for i in m["iterations"]]),
    m["fault_bytes"] / 1e6, st([i["htod_bytes"] / 1e6 for i in m["iterations"]]), st([i["dtoh_bytes"] / 1e6 for i in m["iterations"]]),
    g["waits"], g.get("issue_waits", "-"), g["unissued"], g["ns"] / 1e6, m["host"]["callback_ns"] / 1e6))
PY
			done
		done
	done
done
tar czf "$OUT/all.tar.gz" -C "$OUT" s && rm -rf "$OUT/s/stats"
