# Session 35: is a plan replay right after another program's run slower?
# (run-numa.sh: of three unpinned ViT-B/16 replays at W/B 2, the first ran
# 462-498 ms per steady iteration, the next two 316-357, with the same
# faults and traffic.) One recording and plan; then twice: the plain
# program, then three plan replays. Around each replay, the kernel's
# transparent-huge-page and compaction counters (/proc/vmstat) and free
# memory. From the repository root on the GPU machine: bash THIS.
set -uo pipefail
MAXM=12G
export LD_LIBRARY_PATH=$PWD/build/lib
. bench/models.sh
mkdir -p "$OUT/s"
W=/tmp/s35-first; rm -rf "$W"; mkdir -p "$W"
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null
read -ra cmd < <(model_command vit "$(default_batch vit)")
build/bin/umrec -q -o "$W/vit.db" --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>&1
w=$(build/bin/umplan "$W/vit.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
budget=$((w / 2))
build/bin/umplan "$W/vit.db" --capacity $budget -o "$W/vit.plan" >/dev/null
counters() { # the vmstat counters named, and MemFree in MB
	echo "$(grep -E '^(thp_fault_alloc|thp_fault_fallback|compact_stall|compact_fail|pgmajfault) ' /proc/vmstat | tr '\n' ' ')MemFree_MB $(($(grep MemFree /proc/meminfo | tr -s ' ' | cut -d' ' -f2) / 1024))"
}
for round in 1 2; do
	"${cmd[@]}" >"$W/plain.$round.out" 2>&1
	echo "plain.$round $(grep -E '^per_step_ms' "$W/plain.$round.out")" | tee -a "$OUT/s/table.txt"
	for rep in 1 2 3; do
		tag=plan.$round.$rep
		echo "$tag before: $(counters)" >>"$OUT/s/vmstat.txt"
		build/bin/umreplay -q --plan "$W/vit.plan" --policy plan --gpu-budget $budget --max-managed $MAXM \
			--stats "$OUT/s/$tag.json" -- "${cmd[@]}" >"$W/$tag.out" 2>&1
		echo "$tag after:  $(counters)" >>"$OUT/s/vmstat.txt"
		same=no
		diff <(grep -E '^(checksum|step) ' "$W/plain.1.out") <(grep -E '^(checksum|step) ' "$W/$tag.out") >/dev/null && same=yes
		python3 - "$OUT/s/$tag.json" "$tag" $same <<'PY' | tee -a "$OUT/s/table.txt"
import json, sys
d = json.load(open(sys.argv[1])); m = d["measured"]
print("%-10s same=%s iteration_ms=%s faults=%s dtoh_MB=%s evict_call_ms=%.0f" % (sys.argv[2], sys.argv[3],
      [round(t / 1e6) for t in d["iteration_ns"]], [i["fault_migrations"] for i in m["iterations"]],
      [round(i["dtoh_bytes"] / 1e6) for i in m["iterations"]], m["host"]["driver_calls"]["evict"]["ns"] / 1e6))
PY
	done
done
cat "$OUT/s/vmstat.txt"
tar czf "$OUT/all.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
