# Session 45, for a later session (not run: no device time was left):
# the capture probe on a per-thread default stream, whose captures the
# fences count from their beginning to their end (docs/replay.md, "Frees
# and stream-ordered allocations inside a capture"). On the device
# machine:
#   bash bench/results/2026-11-29/s45/capture_free_per_thread.sh
export LD_LIBRARY_PATH=$PWD/build/lib
P=build/gpu-probes/capture_free_probe
B=build/bin
for mode in free free-other async; do
	PROBE_BLOCKING=per-thread timeout 60 $P $mode >/tmp/cfp.plain 2>&1
	echo "$mode: plain exit $? $(tail -1 /tmp/cfp.plain)"
	for run in "$B/umrec -q -o /tmp/cfp.db --max-managed 8G --" "$B/umreplay -q --policy ideal --max-managed 8G --"; do
		PROBE_BLOCKING=per-thread timeout 60 $run $P $mode >/tmp/cfp.out 2>&1
		echo "  ${run%% *}: exit $? $(tail -1 /tmp/cfp.out)"
	done
done
