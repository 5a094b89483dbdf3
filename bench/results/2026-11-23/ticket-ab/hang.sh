#!/usr/bin/env bash
# Where does the ticket build (2646697, in build-ticket) hang under plan?
# One MLP run at W/B 1.5; after 40 s, every thread's state from /proc
# (name, state, kernel wait channel, syscall, and the kernel stack where
# readable), then the run is killed. From the repository root on the GPU.
set -u
W=/tmp/hang; rm -rf $W; mkdir -p $W
cmd=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
build-ticket/bin/umrec -q -o $W/mlp.db --max-managed 8G -- "${cmd[@]}" >/dev/null 2>&1
w=$(build-ticket/bin/umplan $W/mlp.db --json -o $W/full.plan | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
b=$(python3 -c "print(int($w/1.5))")
build-ticket/bin/umplan $W/mlp.db --capacity $b -o $W/p.plan >/dev/null 2>&1
build-ticket/bin/umreplay --plan $W/p.plan --policy plan --gpu-budget $b --max-managed 8G -- "${cmd[@]}" > $W/out 2>&1 &
sleep 40
echo "--- stdout so far"; cat $W/out
for pid in $(pgrep -f "examples/pytorch/mlp.py"); do
  echo "--- pid $pid"
  for t in /proc/$pid/task/*; do
    read -r nr a0 _ < $t/syscall 2>/dev/null
    fd=""; [ "${nr:-}" = 16 ] && fd=$(readlink /proc/$pid/fd/$((a0)) 2>/dev/null)
    echo "tid ${t##*/} $(cat $t/comm) $(awk '{print $3}' $t/stat) wchan=$(cat $t/wchan 2>/dev/null) syscall=${nr:-?} $fd"
    cat $t/stack 2>/dev/null | head -6 | sed 's/^/    /'
  done
  ls -l /proc/$pid/fd 2>/dev/null | grep -o 'nvidia[a-z-]*' | sort | uniq -c
done
pkill -9 -f "examples/pytorch/mlp.py"; wait
