#!/usr/bin/env bash
# What happens to a CUDA-graph training step under umrec and umreplay.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
B=build/bin; W=$OUT; PY=examples/pytorch
M="python3 $PY/mlp.py --steps 8 --cuda-graph"
nvidia-smi --query-gpu=memory.free --format=csv
run() { # tag cmd...
	local tag=$1; shift
	timeout 240 "$@" >"$W/$tag.out" 2>"$W/$tag.err"; local rc=$?
	echo "== $tag rc=$rc loss=$(grep -E '^step 7 loss' $W/$tag.out) $(grep checksum $W/$tag.out)"
	tail -n 4 "$W/$tag.err"
}
run plain $M
run plain.eager python3 $PY/mlp.py --steps 8
PYTORCH_NO_CUDA_MEMORY_CACHING=1 run plain.nocache $M
run rec $B/umrec -o $W/g.db --max-managed 8G -- $M
run rec.cache $B/umrec -o $W/gc.db --framework-cache --max-managed 8G -- $M
for db in g gc; do
  [ -f $W/$db.db ] || continue
  python3 - $W/$db.db <<'PY'
import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
print(sys.argv[1], "kernels", c.execute("select count(*), count(seq) from kernel").fetchone(),
      "allocs", c.execute("select count(*) from alloc").fetchone())
PY
  $B/umplan $W/$db.db --json -o $W/$db.full.plan > $W/$db.plan.json 2>$W/$db.plan.err; echo "umplan $db rc=$?"; tail -3 $W/$db.plan.err
  w=$(python3 -c "import json; print(json.load(open('$W/$db.plan.json'))['memory']['live_peak'])")
  echo "W=$w"
  $B/umplan $W/$db.db --capacity $((w/2)) -o $W/$db.half.plan >/dev/null 2>&1
  for pol in plan deepum ondemand ideal; do
    run rp.$db.$pol $B/umreplay --plan $W/$db.half.plan --policy $pol --gpu-budget $((w/2)) --max-managed 8G --stats $W/rp.$db.$pol.json -- $M
  done
done
for t in plain.nocache rec rec.cache rp.g.plan rp.g.deepum rp.g.ondemand rp.g.ideal rp.gc.plan rp.gc.ondemand; do
  [ -f $W/$t.out ] && { diff <(grep -E '^step|checksum' $W/plain.out) <(grep -E '^step|checksum' $W/$t.out) >/dev/null && echo "$t: same as plain" || echo "$t: DIFFERS"; }
done
