# Session 65: does PyTorch's expandable_segments take its memory past
# umkit's arena? The MLP example (5 steps) recorded by umrec with
# PyTorch's cache off (umrec's default) and kept (--framework-cache),
# each without and with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True;
# per trace: the allocations umrec saw and the kernels' pointer arguments
# into them; then the idle replay of the first trace's plan (B = 1.25 W),
# which keeps the cache, without and with the variable: its stats.
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
q() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$@"; }
cmd=(python3 examples/pytorch/mlp.py --steps 5 --nvtx)
for cache in off kept; do
	for conf in "" "expandable_segments:True"; do
		t=$OUT/mlp-$cache${conf:+-expandable}.db
		flag=(); [ $cache = kept ] && flag=(--framework-cache)
		PYTORCH_CUDA_ALLOC_CONF=$conf build/bin/umrec -q -o $t --max-managed 8G "${flag[@]}" -- "${cmd[@]}" >$t.out 2>$t.err
		echo "cache $cache conf '${conf}': rc $? allocs $(q $t 'select count(*) from alloc') kernels $(q $t 'select count(*) from kernel') pointer args $(q $t 'select count(*) from kernel_arg') um migrations $(q $t 'select count(*) from migration') | $(tail -1 $t.err)"
	done
done
w=$(build/bin/umplan $OUT/mlp-off.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
build/bin/umplan $OUT/mlp-off.db --capacity $((w * 5 / 4)) -q -o $OUT/mlp.plan
for conf in "" "expandable_segments:True"; do
	s=$OUT/replay${conf:+-expandable}.json
	PYTORCH_CUDA_ALLOC_CONF=$conf build/bin/umreplay --plan $OUT/mlp.plan --gpu-budget $((w * 5 / 4)) --max-managed 8G --stats $s -- "${cmd[@]}" >$s.out 2>$s.err
	echo "replay conf '$conf': rc $? $(tail -1 $s.err)"
	python3 -c "import json,sys; d=json.load(open('$s')); print({k: d[k] for k in d if k in ('engine','measured','allocations','arena')})" 2>&1 | cut -c1-1500
done
