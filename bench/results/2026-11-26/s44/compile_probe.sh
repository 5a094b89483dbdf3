# Session 44: torch.compile (default and reduce-overhead) on the MLP, plain,
# under umrec --framework-cache, planned at half its peak and replayed.
# On the device machine, the build carried as build/:
#   bash bench/results/2026-11-26/s44/compile_probe.sh
export LD_LIBRARY_PATH=$PWD/build/lib
M=(python3 examples/pytorch/mlp.py --steps 8)
same() { diff <(grep -E '^(step [0-9]+ loss|checksum)' "$1") <(grep -E '^(step [0-9]+ loss|checksum)' "$2") >/dev/null && echo same || echo DIFFERENT; }
for mode in default reduce-overhead; do
	d=$OUT/compile/$mode
	mkdir -p $d
	t0=$(date +%s)
	"${M[@]}" --compile $mode >$d/plain.out 2>$d/plain.err
	echo "== $mode: plain exit $? in $(( $(date +%s) - t0 )) s; $(grep time_per_step_ms $d/plain.out)"
	PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${M[@]}" --compile $mode >$d/nocache.out 2>$d/nocache.err
	echo "== $mode: plain, cache off: exit $?, losses $(same $d/plain.out $d/nocache.out)"
	build/bin/umrec -o /tmp/c-$mode.db --framework-cache --max-managed 8G -- "${M[@]}" --compile $mode \
		>$d/rec.out 2>$d/rec.err
	echo "== $mode: umrec --framework-cache exit $?, losses $(same $d/plain.out $d/rec.out)"
	tail -n 4 $d/rec.err
	python3 tests/gpu/check_trace.py /tmp/c-$mode.db | tee $d/trace.json
	build/bin/umrec -o /tmp/c-$mode.nocache.db --max-managed 8G -- "${M[@]}" --compile $mode \
		>$d/rec.nocache.out 2>$d/rec.nocache.err
	echo "== $mode: umrec (cache off) exit $?, losses $(same $d/plain.out $d/rec.nocache.out)"
	grep -E 'warning|error' $d/rec.nocache.err | head -3
	w=$(build/bin/umplan /tmp/c-$mode.db --json -o /tmp/c-$mode.full 2>$d/plan.err |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	cat $d/plan.err
	[ -n "$w" ] || continue
	build/bin/umplan /tmp/c-$mode.db --capacity $((w / 2)) -o /tmp/c-$mode.plan >$d/plan.half 2>&1
	build/bin/umreplay --plan /tmp/c-$mode.plan --gpu-budget $((w / 2)) --max-managed 8G \
		--stats $d/replay.json -- "${M[@]}" --compile $mode >$d/replay.out 2>$d/replay.err
	echo "== $mode: umreplay plan at W/B 2 exit $?, losses $(same $d/plain.out $d/replay.out)"
	tail -n 3 $d/replay.err
done
