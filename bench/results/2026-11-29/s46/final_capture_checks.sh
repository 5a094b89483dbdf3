# Session 46: the capture probe's cases and the fence probe's unrecorded
# two-threads case on the final build, the device time left being too
# little for tests/gpu/run.sh's graphs section. As the rows "graphs: frees
# inside a capture" and "fence_probe, unrecorded process". On the device
# machine, carrying build/bin build/lib build/gpu-probes:
#   bash bench/results/2026-11-29/s46/final_capture_checks.sh
export LD_LIBRARY_PATH=$PWD/build/lib
B=build/bin
CF=build/gpu-probes/capture_free_probe
timeout 60 $B/umrec -q -o /tmp/cf.db --max-managed 8G -- $CF free >/dev/null 2>&1
$B/umplan -q /tmp/cf.db --capacity 64G -o /tmp/cf.idle.plan
bad=0 n=0
for blocking in "" 1 per-thread; do
	for mode in free free-other async free-async free-realloc; do
		PROBE_BLOCKING=$blocking timeout 60 $CF $mode >/tmp/cf.plain 2>&1
		for tool in umrec attached idle; do
			case $tool in
			umrec) run=($B/umrec -q -o /tmp/cf.t.db --max-managed 8G --) ;;
			attached) run=($B/umreplay -q --policy ideal --max-managed 8G --) ;;
			idle) run=($B/umreplay -q --plan /tmp/cf.idle.plan --max-managed 8G --) ;;
			esac
			PROBE_BLOCKING=$blocking timeout 60 "${run[@]}" $CF $mode >/tmp/cf.out 2>&1
			n=$((n + 1))
			cmp -s <(grep -E 'sum|^capture' /tmp/cf.plain) <(grep -E 'sum|^capture' /tmp/cf.out) ||
				{ bad=$((bad + 1)); echo "DIFFERS: $mode ${blocking:-non-blocking} $tool: $(tail -1 /tmp/cf.out)"; }
		done
	done
done
echo "capture_free_probe: $((n - bad)) of $n as plain, build $(cat build/COMMIT)"
P=build/gpu-probes/fence_probe
timeout 120 $B/umrec -o /tmp/u.db --max-managed 8G -- sh -c "$P double-free && $P two-threads" 2>&1 | grep -E "^two-threads|not recorded"
