#!/usr/bin/env bash
# Session 66's first look at memory got past the shim: what each run
# counts in meta.driver_allocs and the replay's stats. OUT: a folder.
OUT=${1:?OUT}; mkdir -p "$OUT"; B=build/bin; PY=examples/pytorch; M=8G
E=(python3 $PY/mlp.py --steps 5)
meta() { sqlite3 "$1" "SELECT key||'='||value FROM meta WHERE key LIKE '%allocs' OR key LIKE '%alloc_bytes'" | tr '\n' ' '; }
RUNTIME="import sys, runpy, torch; torch.cuda.memory._set_allocator_settings('expandable_segments:True'); sys.argv = sys.argv[1:]; sys.path.insert(0, __import__('os').path.dirname(sys.argv[0])); runpy.run_path(sys.argv[0], run_name='__main__')"
"${E[@]}" > $OUT/plain.out 2>&1
UMKIT_LOG=debug $B/umrec -o $OUT/default.db --max-managed $M -- "${E[@]}" > $OUT/default.out 2>$OUT/default.err
echo "default: rc $? $(meta $OUT/default.db) $(grep -c 'past umkit' $OUT/default.err) warnings"
$B/umrec -q -o $OUT/cache.db --framework-cache --max-managed $M -- "${E[@]}" > $OUT/cache.out 2>$OUT/cache.err
echo "cache: rc $? $(meta $OUT/cache.db)"
$B/umrec -q -o $OUT/own.db --framework-cache --max-managed $M -- env PYTORCH_ALLOC_CONF=expandable_segments:True "${E[@]}" > $OUT/own.out 2>$OUT/own.err
echo "own env: rc $? $(meta $OUT/own.db) same=$(diff <(grep -E '^(checksum|step) ' $OUT/plain.out) <(grep -E '^(checksum|step) ' $OUT/own.out) >/dev/null && echo y)"
$B/umrec -q -o $OUT/rt.db --framework-cache --max-managed $M -- python3 -c "$RUNTIME" $PY/mlp.py --steps 5 > $OUT/rt.out 2>$OUT/rt.err
echo "runtime setting: rc $? $(meta $OUT/rt.db) same=$(diff <(grep -E '^(checksum|step) ' $OUT/plain.out) <(grep -E '^(checksum|step) ' $OUT/rt.out) >/dev/null && echo y)"
$B/umrec -q -o $OUT/pool.db --max-managed $M -- build/gpu-probes/pool_probe > $OUT/pool.out 2>$OUT/pool.err
echo "pool probe: rc $? $(meta $OUT/pool.db)"
W=$($B/umplan $OUT/cache.db --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
$B/umplan -q $OUT/cache.db --capacity $((W * 2 / 3)) -o $OUT/cache.plan
$B/umreplay --plan $OUT/cache.plan --gpu-budget $((W * 2 / 3)) --max-managed $M --stats $OUT/rt.json -- python3 -c "$RUNTIME" $PY/mlp.py --steps 5 > $OUT/rtrep.out 2>$OUT/rtrep.err
echo "replay, runtime setting: rc $? $(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["measured"]["host"]["allocator"]; print(a["allocs"], a["driver_allocs"], a["driver_bytes"], a["runtime_allocs"])' $OUT/rt.json) same=$(diff <(grep -E '^(checksum|step) ' $OUT/plain.out) <(grep -E '^(checksum|step) ' $OUT/rtrep.out) >/dev/null && echo y)"
$B/umreplay --plan $OUT/cache.plan --gpu-budget $((W * 2 / 3)) --max-managed $M --stats $OUT/rep.json -- "${E[@]}" > $OUT/rep.out 2>$OUT/rep.err
echo "replay, cache: rc $? $(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["measured"]["host"]["allocator"]; print(a["allocs"], a["driver_allocs"], a["driver_bytes"], a["runtime_allocs"])' $OUT/rep.json)"
grep -h "past umkit" $OUT/default.err | sort | uniq -c
tail -3 $OUT/rt.err $OUT/rtrep.err
grep -h "past umkit\|warning" $OUT/*.err | sort | uniq -c | cut -c1-400
for code in "import torch; x = torch.ones(4, device='cuda'); print(float(x.sum()))" \
	"import torch; x = torch.ones(64, 64, device='cuda'); print(float((x @ x).sum()))"; do
	UMKIT_LOG=debug $B/umrec -o $OUT/one.db --max-managed $M -- python3 -c "$code" >/dev/null 2>$OUT/one.err
	echo "[$code]: $(grep -h 'past umkit' $OUT/one.err | tr '\n' ' ')"
done
