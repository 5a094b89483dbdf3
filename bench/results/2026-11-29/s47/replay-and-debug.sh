# Session 47, first device command: the capture-free probe on each kind
# of stream under an attached replay at UMKIT_LOG=debug (session 46's
# `fence_refusals 1` ran with PROBE_BLOCKING= set empty, which the probe
# read as a blocking stream), then the replay section of the GPU checks
# on this build (not run since 6fc00ac):
#   bash bench/results/2026-11-29/s47/replay-and-debug.sh
export LD_LIBRARY_PATH=$PWD/build/lib
mkdir -p $OUT/debug
for stream in non-blocking blocking per-thread; do
	PROBE_STREAM=$stream UMKIT_LOG=debug timeout 60 build/bin/umreplay --policy ideal \
		--max-managed 8G --stats $OUT/debug/$stream.json -- \
		build/gpu-probes/capture_free_probe free-realloc > $OUT/debug/$stream.log 2>&1
	echo "rc=$?" >> $OUT/debug/$stream.log
	echo "== $stream: $(grep -o '"fence_refusals": *[0-9]*' $OUT/debug/$stream.json)"
	grep -i -E "fence|refus|synchron|capture|rc=" $OUT/debug/$stream.log | sort | uniq -c | sort -rn | head -12
done
bash bench/results/2026-11-29/s46/run-gpu-checks.sh replay
