#!/usr/bin/env bash
# Outputs and discard counts of the MLP under deepum and plan at W/B 1.5
# and 2 (or RATIOS), 2 interleaved reps, with forgotten discards undone
# (build-lead) and without (build-old, 9456046's replayer). Run
# from the repository root on the GPU machine. build-lead was 9a9337d
# (blocks restored, room made at the allocation) for mlp-output-restore.txt
# and 5f68617 (only the discard-and-prefetch spared) for mlp-output.txt,
# run with RATIOS=1.5 under a 100 s timeout (6 of its 8 runs finished).
set -u
W=/tmp/undo; rm -rf $W; mkdir -p $W
cmd=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
"${cmd[@]}" > $W/plain 2>&1
build-lead/bin/umrec -q -o $W/mlp.db --max-managed 8G -- "${cmd[@]}" >/dev/null 2>&1
w=$(build-lead/bin/umplan $W/mlp.db --json -o $W/full.plan | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
for ratio in ${RATIOS:-1.5 2}; do
  b=$(python3 -c "print(int($w/$ratio))")
  build-lead/bin/umplan $W/mlp.db --capacity $b -o $W/$ratio.plan >/dev/null 2>&1
  for rep in 1 2; do
    for policy in deepum plan; do
      for v in old lead; do
        t=$v.$policy.$ratio.$rep
        timeout 120 build-$v/bin/umreplay --plan $W/$ratio.plan --policy $policy --gpu-budget $b --max-managed 8G --stats $W/$t.json -- "${cmd[@]}" > $W/$t.out 2>$W/$t.err
        rc=$?
        if diff <(grep -E '^(checksum|step|iter) ' $W/plain) <(grep -E '^(checksum|step|iter) ' $W/$t.out) >/dev/null; then same=same; else same=DIFF; fi
        extra=$(python3 -c "import json; d=json.load(open('$W/$t.json')); e=d['engine']; print('iter_ms=%.1f undone=%s dp_calls=%d dropped=%d' % (d['iteration_median_ns']/1e6, e.get('undone_discards','-'), e['ops']['discard_prefetch']['calls'], d['measured']['dropped_discards']))" 2>/dev/null)
        echo "$t rc=$rc $same $extra"
      done
    done
  done
done
