# Session 44: the probe's capture fails under umrec and umreplay even with
# thread B idle; which part of umkit, or of managed memory, breaks it
# (tests/gpu/capture_wake_probe.cu). On the device machine:
#   bash bench/results/2026-11-26/s44/capture_wake_split3.sh
export LD_LIBRARY_PATH=$PWD/build/lib
P=build/gpu-probes/capture_wake_probe
try() { # try LABEL ENV... -- RUN...
	local label=$1; shift
	env "$@" > /tmp/split3.out 2>&1
	echo "$label: exit $? $(grep -E '^capture|failed' /tmp/split3.out | tail -1)"
}
R=(build/bin/umrec -q -o /tmp/split3.db)
try "plain" PROBE_CAPTURE_MODE=relaxed $P capture nothing
try "plain, managed buffers" PROBE_CAPTURE_MODE=relaxed PROBE_MANAGED=1 $P capture nothing
try "plain, managed buffers, no eager" PROBE_CAPTURE_MODE=relaxed PROBE_MANAGED=1 PROBE_NO_EAGER=1 $P capture nothing
try "umrec" PROBE_CAPTURE_MODE=relaxed "${R[@]}" --max-managed 8G -- $P capture nothing
try "umrec, no eager" PROBE_CAPTURE_MODE=relaxed PROBE_NO_EAGER=1 "${R[@]}" --max-managed 8G -- $P capture nothing
try "umrec --no-managed" PROBE_CAPTURE_MODE=relaxed "${R[@]}" --no-managed -- $P capture nothing
try "umrec, global mode" PROBE_CAPTURE_MODE=global "${R[@]}" --max-managed 8G -- $P capture nothing
try "umrec, stream used before the capture" PROBE_CAPTURE_MODE=relaxed PROBE_USE_STREAM_FIRST=1 "${R[@]}" --max-managed 8G -- $P capture nothing
try "umreplay ideal, stream used before the capture" PROBE_CAPTURE_MODE=relaxed PROBE_USE_STREAM_FIRST=1 build/bin/umreplay -q --policy ideal --max-managed 8G -- $P capture nothing
try "umreplay ideal, stream used before, B mallocs" PROBE_CAPTURE_MODE=relaxed PROBE_USE_STREAM_FIRST=1 build/bin/umreplay -q --policy ideal --max-managed 8G -- $P capture malloc
