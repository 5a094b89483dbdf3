#!/usr/bin/env bash
# Which change made the MLP's outputs differ under deepum: the gate or the
# discards on a stream of their own (build-v1, build-v3: see output.txt).
# Run from the repository root on the GPU machine with the four builds present.
set -u
W=/tmp/ab; rm -rf $W; mkdir -p $W
cmd=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
"${cmd[@]}" > $W/plain 2>&1
build-lead/bin/umrec -q -o $W/mlp.db --max-managed 8G -- "${cmd[@]}" >/dev/null 2>&1
w=$(build-lead/bin/umplan $W/mlp.db --json -o $W/full.plan | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
for ratio in 1.5 2; do
  b=$(python3 -c "print(int($w/$ratio))")
  build-lead/bin/umplan $W/mlp.db --capacity $b -o $W/$ratio.plan >/dev/null 2>&1
  for rep in 1 2 3; do
    for v in old v1 v3 lead; do
      t=$v.$ratio.$rep
      build-$v/bin/umreplay --plan $W/$ratio.plan --policy deepum --gpu-budget $b --max-managed 8G --stats $W/$t.json -- "${cmd[@]}" > $W/$t.out 2>$W/$t.err
      rc=$?
      if diff <(grep -E '^(checksum|step|iter) ' $W/plain) <(grep -E '^(checksum|step|iter) ' $W/$t.out) >/dev/null; then same=same; else same=DIFF; fi
      echo "$t rc=$rc $same $(python3 tests/gpu/replay_table.py $W/$t.json 2>/dev/null | grep -oE 'iter_ms=[0-9.]+')"
      [ $same = DIFF ] && diff <(grep -E '^(checksum|step|iter) ' $W/plain) <(grep -E '^(checksum|step|iter) ' $W/$t.out) | head -4
    done
  done
done
