# Session 35: is a plan replay right after another program's run slower?
# (run-numa.sh: of three unpinned ViT-B/16 replays at W/B 2, the first ran
# 462-498 ms per steady iteration, the next two 316-357, with the same
# faults and traffic.) One recording and plan; then twice: the plain
# program, then three plan replays. Around each replay, the kernel's
# transparent-huge-page and compaction counters (/proc/vmstat) and free
# memory. From the repository root on the GPU machine: bash THIS.
set -uo pipefail
W=/tmp/s35-first
. "$(dirname "$0")/vit-replays.sh"
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null
record_and_plan
counters() { # the vmstat counters named, and MemFree in MB
	echo "$(grep -E '^(thp_fault_alloc|thp_fault_fallback|compact_stall|compact_fail|pgmajfault) ' /proc/vmstat | tr '\n' ' ')MemFree_MB $(($(grep MemFree /proc/meminfo | tr -s ' ' | cut -d' ' -f2) / 1024))"
}
for round in 1 2; do
	"${cmd[@]}" >"$W/plain.$round.out" 2>&1
	[ $round = 1 ] && cp "$W/plain.1.out" "$W/plain.out"
	echo "plain.$round $(grep -E '^per_step_ms' "$W/plain.$round.out")" | tee -a "$OUT/s/table.txt"
	for rep in 1 2 3; do
		echo "plan.$round.$rep before: $(counters)" >>"$OUT/s/vmstat.txt"
		replay_plan "plan.$round.$rep"
		echo "plan.$round.$rep after:  $(counters)" >>"$OUT/s/vmstat.txt"
	done
done
cat "$OUT/s/vmstat.txt"
tar czf "$OUT/all.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
