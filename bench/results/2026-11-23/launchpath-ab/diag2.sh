#!/bin/bash
# The overhead A/B (build-lead vs build-old), then the per-section diag of build-diag.
set -u
O=$OUT/r; mkdir -p $O
COMPARE=build-old BUILD=build-lead bash bench/suite.sh resnet152 $O overhead > $O/suite.log 2>&1
echo "suite rc=$?"; tail -25 $O/suite.log
db=$(ls /tmp/umkit-bench-traces/resnet152.b16.*.db | head -1)
W=/tmp/dg; mkdir -p $W
w=$(build-lead/bin/umplan $db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
b=$((w*5/4)); echo "W=$w B=$b"
build-lead/bin/umplan $db -q -o $W/p0.plan
build-lead/bin/umplan $db --capacity $b -q -o $W/pb.plan
cmd=(python3 examples/pytorch/resnet.py --depth 152 --steps 30 --nvtx --batch-size 16)
for v in ideal planb; do
  case $v in
  ideal) build-diag/bin/umreplay -q --plan $W/p0.plan --policy ideal --max-managed 16G -- "${cmd[@]}" >$W/$v.out 2>$W/$v.err ;;
  planb) build-diag/bin/umreplay -q --plan $W/pb.plan --gpu-budget $b --max-managed 16G -- "${cmd[@]}" >$W/$v.out 2>$W/$v.err ;;
  esac
  echo "== $v rc=$? $(grep time_per_step $W/$v.out) $(grep checksum $W/$v.out)"; grep DIAG $W/$v.err
done
