# Session 46: capture_free_probe free-realloc (a free and an allocation of
# the same size in the middle of a capture, tests/gpu/capture_free_probe.cu)
# on each kind of stream, plain and under the build carried as build/old
# (8dc39d4, before the fences stopped synchronizing during a capture); the
# build in build/ runs the same cases in the GPU row "graphs: frees inside
# a capture". On the device machine, carrying build/bin build/lib
# build/old build/gpu-probes:
#   bash bench/results/2026-11-29/s46/realloc_before.sh
export LD_LIBRARY_PATH=$PWD/build/lib
P=build/gpu-probes/capture_free_probe
for blocking in "" 1 per-thread; do
	PROBE_BLOCKING=$blocking timeout 60 $P free-realloc >/tmp/fr.plain 2>&1
	echo "stream ${blocking:-non-blocking}: plain exit $? $(tail -1 /tmp/fr.plain)"
	for b in old; do
		B=build/old/bin
		timeout 60 $B/umrec -q -o /tmp/fr.db --max-managed 8G -- $P free >/dev/null 2>&1
		$B/umplan -q /tmp/fr.db --capacity 64G -o /tmp/fr.idle.plan 2>/dev/null
		for tool in umrec attached idle; do
			case $tool in
			umrec) run=($B/umrec -q -o /tmp/fr.t.db --max-managed 8G --) ;;
			attached) run=($B/umreplay -q --policy ideal --max-managed 8G --) ;;
			idle) run=($B/umreplay -q --plan /tmp/fr.idle.plan --max-managed 8G --) ;;
			esac
			PROBE_BLOCKING=$blocking timeout 60 "${run[@]}" $P free-realloc >/tmp/fr.out 2>&1
			rc=$?
			same=same; cmp -s <(grep -E 'sum|^capture' /tmp/fr.plain) <(grep -E 'sum|^capture' /tmp/fr.out) || same=differs
			echo "  $b $tool: exit $rc, $same, $(tail -1 /tmp/fr.out)"
		done
	done
done
