export LD_LIBRARY_PATH=$PWD/build/lib
for c in copy-only many-streams reused-handle two-threads double-free stream-churn; do
	echo "plain $(timeout 60 build/gpu-probes/fence_probe $c | tail -1)"
	echo "umrec $(timeout 60 build/bin/umrec -q -o /tmp/f.db --max-managed 8G -- build/gpu-probes/fence_probe $c | tail -1)"
done
for k in non-blocking blocking per-thread; do
	echo "$k plain $(PROBE_STREAM=$k timeout 60 build/gpu-probes/capture_free_probe realloc-busy | tail -1)"
	echo "$k attached $(PROBE_STREAM=$k timeout 60 build/bin/umreplay -q --policy ideal --max-managed 8G -- build/gpu-probes/capture_free_probe realloc-busy | tail -1)"
done
