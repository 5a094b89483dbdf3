# Session 45: the MLP with --cuda-graph on PyTorch's cudaMallocAsync
# allocator, whose allocations inside the capture are the graph's own:
# plain, and under umrec and umreplay of the session's start (build/old,
# dd9d878) and of this build. On the device machine:
#   bash bench/results/2026-11-29/s45/pytorch_async.sh
W=/tmp/pa; mkdir -p $W
G=(python3 examples/pytorch/mlp.py --steps 6 --cuda-graph)
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
"${G[@]}" >$W/plain 2>/dev/null
echo "plain: exit $? $(grep -c '^step' $W/plain) steps"
for build in build/old build; do
	for tool in umrec umreplay; do
		case $tool in
		umrec) run=($build/bin/umrec -q -o $W/t.db --max-managed 8G --) ;;
		umreplay) run=($build/bin/umreplay -q --policy ideal --max-managed 8G --) ;;
		esac
		LD_LIBRARY_PATH=$PWD/$build/lib timeout 120 "${run[@]}" "${G[@]}" >$W/out 2>$W/err
		rc=$?
		same=$(diff <(grep -E '^(step|checksum)' $W/plain) <(grep -E '^(step|checksum)' $W/out) >/dev/null && echo "same output" || echo "OTHER OUTPUT")
		echo "$build $tool: exit $rc, $(grep -c '^step' $W/out) steps, $same; $(grep -iE 'error|umrec:|umreplay:' $W/err | tail -1 | cut -c1-300)"
	done
done
