# Session 35: plan replays of train_sim and the PyTorch MLP with launches
# held on the GPU for prefetches not issued yet (build) beside the build
# without holds (build-old, 5d5a102), same recordings and plans; the build
# that runs first alternates between rounds. Each run is cut off after
# RUN_LIMIT_S (a hold that never ends would show as rc 124). From the
# repository root on the GPU machine: bash THIS.
set -uo pipefail
OUT=${OUT:-/tmp/s35}
REPS=${REPS:-2}
RATIOS=${RATIOS:-1.5 2 3}
CASES=${CASES:-sim mlp}
RUN_LIMIT_S=${RUN_LIMIT_S:-90}
builds=(${BUILDS:-build build-old})
MAXM=8G
W=/tmp/s35-work; rm -rf "$W"; mkdir -p "$W" "$OUT/s/stats"
sim=(build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
mlp=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
for name in $CASES; do
	declare -n cmd=$name
	"${cmd[@]}" >"$W/$name.plain" 2>&1
	build/bin/umrec -q -o "$W/$name.db" --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>&1
	w=$(build/bin/umplan "$W/$name.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	for ratio in $RATIOS; do
		budget=$(python3 -c "print(int($w / $ratio))")
		build/bin/umplan "$W/$name.db" --capacity "$budget" -o "$W/$name.$ratio.plan" >/dev/null 2>&1
		for rep in $(seq 1 $REPS); do
			k=$(((rep - 1) % ${#builds[@]}))
			for b in "${builds[@]:k}" "${builds[@]:0:k}"; do
				tag=$name.$ratio.$b.$rep
				timeout $RUN_LIMIT_S $b/bin/umreplay --plan "$W/$name.$ratio.plan" --policy plan --gpu-budget "$budget" \
					--max-managed $MAXM --stats "$OUT/s/stats/$tag.json" -- "${cmd[@]}" >"$W/$tag.out" 2>"$W/$tag.err"
				rc=$?
				same=no
				diff <(grep -E '^(checksum|step|iter) ' "$W/$name.plain") <(grep -E '^(checksum|step|iter) ' "$W/$tag.out") >/dev/null && [ $rc -eq 0 ] && same=yes
				[ $rc -eq 124 ] && { echo "$tag cut off after $RUN_LIMIT_S s: stopping"; tail -n 3 "$W/$tag.err"; break 4; }
				[ $rc -eq 0 ] || { echo "$tag rc=$rc"; tail -n 3 "$W/$tag.err"; continue; }
				python3 - "$OUT/s/stats/$tag.json" "$tag" "$same" <<'PY' | tee -a "$OUT/s/table.txt"
import json, statistics, sys
d = json.load(open(sys.argv[1])); m = d["measured"]; g = m["host"]["prefetch_gates"]
st = lambda v: statistics.median(v[1:] if len(v) > 2 else v)
print("%-26s same=%s iter_ms=%.1f faults/iter=%d htod_MB/iter=%.0f dtoh_MB/iter=%.0f unissued_blocks/iter=%d gates waits=%d unissued=%d held=%s released sync=%s order=%s late=%s gate_ms=%.1f" % (
    sys.argv[2], sys.argv[3], st([t / 1e6 for t in d["iteration_ns"]]), st([i["fault_migrations"] for i in m["iterations"]]),
    st([i["htod_bytes"] / 1e6 for i in m["iterations"]]), st([i["dtoh_bytes"] / 1e6 for i in m["iterations"]]),
    st([i["unissued_blocks"] for i in m["iterations"]]),
    g["waits"], g["unissued"], g.get("held", "-"), g.get("released_at_sync", "-"), g.get("released_for_order", "-"), g.get("released_late", "-"), g["ns"] / 1e6))
PY
			done
		done
	done
done
tar czf "$OUT/all.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
