#!/usr/bin/env bash
# Are the MLP's outputs still identical to the plain run when the worker
# makes the discards and the program's streams wait for tickets (build-lead)
# against the build before (build-old)? deepum and plan at W/B 1.5 and 2,
# 3 interleaved reps. Run from the repository root on the GPU machine;
# in mlp-output.txt build-lead was 2646697 and build-old 9456046, and the
# GPU command was cut off at its 600 s limit after 15 runs.
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
    for policy in deepum plan; do
      for v in old lead; do
        t=$v.$policy.$ratio.$rep
        timeout 120 build-$v/bin/umreplay --plan $W/$ratio.plan --policy $policy --gpu-budget $b --max-managed 8G --stats $W/$t.json -- "${cmd[@]}" > $W/$t.out 2>$W/$t.err
        rc=$?
        if diff <(grep -E '^(checksum|step|iter) ' $W/plain) <(grep -E '^(checksum|step|iter) ' $W/$t.out) >/dev/null; then same=same; else same=DIFF; fi
        echo "$t rc=$rc $same $(python3 tests/gpu/replay_table.py $W/$t.json 2>/dev/null | grep -oE 'iter_ms=[0-9.]+')"
      done
    done
  done
done
