#!/usr/bin/env bash
# Session 43: why the idle replay woken by the graph's memory failed.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
B=build/bin PY=examples/pytorch W=$OUT
G=(python3 $PY/mlp.py --steps 8 --cuda-graph)
$B/umrec -o $W/eager.db --framework-cache --max-managed 8G -- python3 $PY/mlp.py --steps 8 >/dev/null 2>&1
we=$($B/umplan $W/eager.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
$B/umplan $W/eager.db --capacity $((2 * we)) -o $W/idle.plan >/dev/null 2>&1
echo "eager peak $we"
for budget in $((we + we / 20)) $((4 * we)); do
	UMKIT_LOG=debug $B/umreplay --plan $W/idle.plan --gpu-budget $budget --max-managed 8G -- "${G[@]}" >$W/w.$budget.out 2>$W/w.$budget.err
	echo "== budget $budget rc=$?"
	grep -v "AccumulateGrad\|run_backward" $W/w.$budget.err | grep -v "^umreplay: debug" | tail -25
	grep -c "debug" $W/w.$budget.err
done
