# Session 44: narrowing what breaks the probe's capture under umrec
# (tests/gpu/capture_wake_probe.cu): what thread B does, and the capture
# mode. On the device machine:
#   bash bench/results/2026-11-26/s44/capture_wake_split2.sh
export LD_LIBRARY_PATH=$PWD/build/lib
P=build/gpu-probes/capture_wake_probe
for mode in relaxed thread_local global; do
	for b in nothing stream none; do
		for how in plain umrec "umreplay ideal"; do
			case $how in
			plain) run=() ;;
			umrec) run=(build/bin/umrec -q -o /tmp/split2.db --max-managed 8G --) ;;
			"umreplay ideal") run=(build/bin/umreplay -q --policy ideal --max-managed 8G --) ;;
			esac
			PROBE_CAPTURE_MODE=$mode "${run[@]}" $P capture $b > /tmp/split2.out 2>&1
			echo "$mode, B $b, $how: exit $? $(grep -E '^capture|failed' /tmp/split2.out | tail -1)"
		done
	done
done
