# Session 46: bench/results/2026-11-29/s46/sync_in_capture.cu, each case in
# its own process, on the device machine (built here with
#   nvcc -O2 -o build/s46/sync_in_capture bench/results/2026-11-29/s46/sync_in_capture.cu -lcuda
# and carried as build/s46):
#   bash bench/results/2026-11-29/s46/sync_in_capture.sh
# Output: sync_in_capture.log.
for c in other-global other-relaxed other-b-relaxed self-relaxed self-global free0-other-global free0-self-global; do
	timeout 30 build/s46/sync_in_capture $c 2>&1 || echo "$c: exit $?"
done
