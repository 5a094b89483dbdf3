# Session 45: frees and stream-ordered allocations in the middle of a
# relaxed-mode capture, plain and under the tools
# (tests/gpu/capture_free_probe.cu). On the device machine:
#   bash bench/results/2026-11-29/s45/capture_free.sh
export LD_LIBRARY_PATH=$PWD/build/lib
P=build/gpu-probes/capture_free_probe
W=/tmp/cf; mkdir -p $W
B=build/bin
# A plan with nothing to do, so that the replay stays idle (fences then
# synchronize the context instead of recording events).
$B/umrec -q -o $W/rec.db --max-managed 8G -- $P free >/dev/null 2>&1
$B/umplan -q $W/rec.db --capacity 40G -o $W/idle.plan
for blocking in "" 1; do
for mode in free free-other async free-async; do
	PROBE_BLOCKING=$blocking timeout 60 $P $mode >$W/plain 2>&1
	echo "$mode${blocking:+, blocking}: plain exit $? $(tail -1 $W/plain)"
	for tool in umrec ideal idle; do
		case $tool in
		umrec) run=($B/umrec -q -o $W/t.db --max-managed 8G --) ;;
		ideal) run=($B/umreplay -q --policy ideal --max-managed 8G --) ;;
		idle) run=($B/umreplay --plan $W/idle.plan --max-managed 8G --) ;;
		esac
		PROBE_BLOCKING=$blocking timeout 60 "${run[@]}" $P $mode >$W/$tool 2>$W/$tool.err
		rc=$?
		same=$(diff <(grep sum $W/plain) <(grep sum $W/$tool) >/dev/null && echo "same sums" || echo "OTHER SUMS")
		echo "  $tool: exit $rc $(tail -1 $W/$tool), $same; $(grep -v '^$' $W/$tool.err | tail -2 | tr '\n' ' ')"
	done
done
done
# PyTorch's allocator on cudaMallocAsync, whose allocations inside a
# capture are the graph's own.
G=(python3 examples/pytorch/mlp.py --steps 6 --cuda-graph)
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
timeout 120 "${G[@]}" >$W/g.plain 2>$W/g.plain.err
echo "mlp --cuda-graph, backend:cudaMallocAsync: plain exit $? $(grep -c '^step' $W/g.plain) steps $(tail -1 $W/g.plain.err)"
for tool in umrec umrec-cache ideal; do
	case $tool in
	umrec) run=($B/umrec -q -o $W/g.db --max-managed 8G --) ;;
	umrec-cache) run=($B/umrec -q -o $W/g2.db --framework-cache --max-managed 8G --) ;;
	ideal) run=($B/umreplay -q --policy ideal --max-managed 8G --) ;;
	esac
	timeout 120 "${run[@]}" "${G[@]}" >$W/g.$tool 2>$W/g.$tool.err
	rc=$?
	same=$(diff <(grep -E '^(step|checksum)' $W/g.plain) <(grep -E '^(step|checksum)' $W/g.$tool) >/dev/null && echo "same output" || echo "OTHER OUTPUT")
	echo "  $tool: exit $rc, $same; $(grep -v '^$' $W/g.$tool.err | tail -2 | tr '\n' ' ' | cut -c1-400)"
done
