# Session 37: is the slow first replay after a recording the kernel writing
# the new trace back to disk? ViT-B/16 at W/B 2, STEPS (15) steps, twice:
# record and plan, then two plan replays; the second time a `sync` (timed)
# comes between the plan and the replays. The plain program runs first.
# After the plan and after each replay: the dirty and writeback memory, and
# the CPU time stolen from this VM so far (/proc/stat).
# From the repository root on the GPU machine: bash THIS.
set -uo pipefail
W=/tmp/s37-sync
STEPS=${STEPS:-15}
. "$(dirname "$0")/../s35/vit-replays.sh"
state() { # TAG: one line of table.txt
	echo "$1: $(grep -E '^(MemFree|Dirty|Writeback):' /proc/meminfo | tr -s ' ' | tr '\n' ' ')steal_ticks=$(awk '/^cpu /{print $9}' /proc/stat)" |
		tee -a "$OUT/s/table.txt"
}
"${cmd[@]}" >"$W/plain.out" 2>&1
for variant in nosync sync; do
	record_and_plan
	state "$variant, trace of $(du -m "$W/vit.db" | cut -f1) MB planned"
	if [ $variant = sync ]; then
		t0=$(date +%s%N)
		sync
		echo "sync took $((($(date +%s%N) - t0) / 1000000)) ms" | tee -a "$OUT/s/table.txt"
		state "$variant, after sync"
	fi
	for rep in 1 2; do
		replay_plan "$variant.$rep"
		state "$variant, after replay $rep"
	done
done
tar czf "$OUT/all.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
