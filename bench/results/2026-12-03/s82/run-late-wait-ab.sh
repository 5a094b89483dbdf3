# Session 82: plan replays with a launch waiting for the worker to issue a
# prefetch that its own ops or the launch before it brought (build) beside
# the build without that wait (build-old, 3ac83a3), alternating, one
# recording and one plan per case. train_sim and the PyTorch MLP at W/B
# RATIOS, REPS rounds; then ViT-B/16 at W/B 2 through bench/suite.sh's
# grid (plan, with ideal as each build's reference). Run from the
# repository root on the GPU machine with both builds present:
#   OUT=$OUT bash THIS
set -uo pipefail
OUT=${OUT:?}
REPS=${REPS:-2}
RATIOS=${RATIOS:-1.5 2 3}
MODELS=${MODELS:-vit}
MAXM=8G
W=/tmp/s82-work; rm -rf "$W"; mkdir -p "$W" "$OUT/s/stats"
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
sim=(build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
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
		for rep in $(seq 1 "$REPS"); do
			builds="build build-old"
			[ $((rep % 2)) -eq 0 ] && builds="build-old build"
			for b in $builds; do
				tag=$name.$ratio.$b.$rep
				$b/bin/umreplay --plan "$W/$name.$ratio.plan" --policy plan --gpu-budget "$budget" \
					--max-managed $MAXM --stats "$OUT/s/stats/$tag.json" -- "${cmd[@]}" >"$W/$tag.out" 2>"$W/$tag.err"
				rc=$?
				same=no
				diff <(grep -E '^(checksum|step|iter) ' "$W/$name.plain") <(grep -E '^(checksum|step|iter) ' "$W/$tag.out") >/dev/null &&
					[ $rc -eq 0 ] && same=yes
				python3 - "$OUT/s/stats/$tag.json" "$tag" "$same" <<'PY' | tee -a "$OUT/s/table.txt"
import json, statistics, sys
d = json.load(open(sys.argv[1])); m = d["measured"]; g = m["host"]["prefetch_gates"]
st = lambda v: statistics.median(v[1:] if len(v) > 2 else v)
print("%-24s same=%s iter_ms=%.1f faults/iter=%d htod_MB/iter=%.0f dtoh_MB/iter=%.0f late_gated=%s issue_waits=%s expired=%s issue_wait_ms=%s unissued=%d gate_ms=%.1f" % (
    sys.argv[2], sys.argv[3], st([t / 1e6 for t in d["iteration_ns"]]), st([i["fault_migrations"] for i in m["iterations"]]),
    st([i["htod_bytes"] / 1e6 for i in m["iterations"]]), st([i["dtoh_bytes"] / 1e6 for i in m["iterations"]]),
    d["engine"].get("late_gated_launches", "-"), g.get("issue_waits", "-"), g.get("issue_waits_expired", "-"),
    "%.1f" % (g["issue_wait_ns"] / 1e6) if "issue_wait_ns" in g else "-", g["unissued"], g["ns"] / 1e6))
PY
			done
		done
	done
done
echo "sim, mlp: $(( $(date +%s) - t0 )) s"
for m in $MODELS; do
	COMPARE=build-old RATIOS=2 POLICIES=plan REPS=${MODEL_REPS:-3} RUN_LIMIT_S=90 \
		timeout "${MODEL_LIMIT_S:-330}" bash bench/suite.sh "$m" "$OUT/s" grid >"$OUT/s/$m.log" 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
	python3 bench/suite_report.py "$OUT/s" 2>&1 | tail -30
done
tar czf "$OUT/all.tar.gz" -C "$OUT" s
