# Session 86: umrec's write_dst (schema version 3) on ViT-B/16 (the
# suite's batch, 5 steps). Records it with build/, measures the trace
# (tests/gpu/check_trace.py: how many copies and memsets have a
# destination, how many into the arena's allocations), plans it at W/B 2
# as it is and with write_dst emptied (every write then possibly into any
# allocation, as before version 3), and replays the two plans REPS times
# in turn under build/'s replayer, outputs checked against a plain run.
# From the repository root on the GPU machine:
#   REPS=2 OUT=$OUT bash THIS
set -uo pipefail
OUT=${OUT:?}
REPS=${REPS:-2}
MAXM=16G
W=/tmp/s86-wd; rm -rf "$W"; mkdir -p "$W" "$OUT/wd/stats"
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
cmd=(python3 examples/pytorch/vit.py --arch vit_base_patch16_224 --steps 5 --nvtx --batch-size 32)
"${cmd[@]}" >"$W/plain" 2>&1
build/bin/umrec -q -o "$W/vit.db" --max-managed $MAXM -- "${cmd[@]}" >"$W/rec.out" 2>"$W/rec.err"
echo "umrec rc=$? $(( $(date +%s) - t0 )) s"
python3 tests/gpu/check_trace.py "$W/vit.db" | tee "$OUT/wd/check_trace.json"
python3 - "$W/vit.db" "$W/anywhere.db" <<'PY'
import sqlite3, sys
src = sqlite3.connect(sys.argv[1])
src.execute("VACUUM INTO ?", (sys.argv[2],))
dst = sqlite3.connect(sys.argv[2])
dst.execute("DELETE FROM write_dst")
dst.commit()
PY
w=$(build/bin/umplan "$W/vit.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
budget=$((w / 2))
for v in vit anywhere; do
	build/bin/umplan "$W/$v.db" --capacity $budget -o "$W/$v.plan" --report >"$OUT/wd/$v.report.txt" 2>&1
	build/bin/umplan "$W/$v.db" --capacity $budget --json >"$OUT/wd/$v.plan.json" 2>&1
	grep -E "plan moves|fresh alloc|issued at the kernel|link busy" "$OUT/wd/$v.report.txt"
done
for rep in $(seq 1 "$REPS"); do
	order="vit anywhere"
	[ $((rep % 2)) -eq 0 ] && order="anywhere vit"
	for v in $order; do
		tag=$v.$rep
		build/bin/umreplay --plan "$W/$v.plan" --policy plan --gpu-budget $budget --max-managed $MAXM \
			--stats "$OUT/wd/stats/$tag.json" -- "${cmd[@]}" >"$W/$tag.out" 2>"$W/$tag.err"
		rc=$?
		same=no
		diff <(grep -E '^(checksum|step|loss)' "$W/plain") <(grep -E '^(checksum|step|loss)' "$W/$tag.out") >/dev/null &&
			[ $rc -eq 0 ] && same=yes
		python3 - "$OUT/wd/stats/$tag.json" "$tag" "$same" <<'PY' | tee -a "$OUT/wd/table.txt"
import json, statistics, sys
d = json.load(open(sys.argv[1])); m = d["measured"]; h = m["host"]; e = d["engine"]
st = lambda v: statistics.median(v[1:] if len(v) > 2 else v)
print("%-12s same=%s iter_ms=%.1f faults/iter=%d htod_MB/iter=%.0f dtoh_MB/iter=%.0f prefetch_calls=%d dp_calls=%d issue_waits=%d (%.0f ms) room_waits=%d (%.0f ms)" % (
    sys.argv[2], sys.argv[3], st([t / 1e6 for t in d["iteration_ns"]]), st([i["fault_migrations"] for i in m["iterations"]]),
    st([i["htod_bytes"] / 1e6 for i in m["iterations"]]), st([i["dtoh_bytes"] / 1e6 for i in m["iterations"]]),
    e["ops"]["prefetch"]["calls"], e["ops"]["discard_prefetch"]["calls"],
    h["prefetch_gates"]["issue_waits"], h["prefetch_gates"]["issue_wait_ns"] / 1e6, h["room_waits"], h["room_wait_ns"] / 1e6))
PY
	done
done
grep checksum "$W/plain"
echo "total $(( $(date +%s) - t0 )) s"
cp "$W/vit.db" "$OUT/wd/vit.db"
tar czf "$OUT/wd.tgz" -C "$OUT" wd && rm -rf "$OUT/wd"
