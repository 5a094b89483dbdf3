# Session 46: tests/gpu/fence_probe.cu two-threads in a process umrec does
# not record (the second of sh -c "A && B"), 8 times with the build carried
# as build/old (8dc39d4) and 8 with the one in build/ (the shim binding the
# context). On the device machine, carrying build/bin build/lib build/old
# build/gpu-probes:
#   bash bench/results/2026-11-29/s46/unrecorded_two_threads.sh
# Output: unrecorded_two_threads.log.
export LD_LIBRARY_PATH=$PWD/build/lib
P=build/gpu-probes/fence_probe
for b in old new; do
	B=build/bin; [ $b = old ] && B=build/old/bin
	for i in 1 2 3 4 5 6 7 8; do
		rm -f /tmp/u.db
		timeout 120 $B/umrec -o /tmp/u.db --max-managed 8G -- sh -c "$P double-free && $P two-threads" 2>&1 | grep -E "^two-threads|refused"
	done | sed "s/^/$b: /"
done
