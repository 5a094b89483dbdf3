# Session 43: which part of waking inside a CUDA graph capture breaks it.
# build/diag is this session's working tree (subscription while idle, the
# deferred synchronize) with diag.patch: log lines at the wake, the
# replayer's stream creation and its first calls; DIAG_NO_IDLE_SUB (the
# session start's idle: no subscription), DIAG_NO_ACTIVITY (attach without
# the activity API), DIAG_NO_ATTACH (wake without CUPTI).
export LD_LIBRARY_PATH=$PWD/build/diag/lib PYTHONUNBUFFERED=1
B=build/diag/bin PY=examples/pytorch W=$OUT
G=(python3 $PY/mlp.py --steps 8 --cuda-graph)
$B/umrec -o $W/eager.db --framework-cache --max-managed 8G -- python3 $PY/mlp.py --steps 8 >/dev/null 2>&1
we=$($B/umplan $W/eager.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
$B/umplan $W/eager.db --capacity $((2 * we)) -o $W/idle.plan >/dev/null 2>&1
for v in "" "DIAG_NO_IDLE_SUB=1" "DIAG_NO_IDLE_SUB=1 DIAG_NO_ACTIVITY=1" "DIAG_NO_IDLE_SUB=1 DIAG_NO_ATTACH=1"; do
	env $v $B/umreplay --plan $W/idle.plan --gpu-budget $((we + we / 20)) --max-managed 8G -- "${G[@]}" >$W/d.out 2>$W/d.err
	echo "== [$v] rc=$? $(grep -c '^step' $W/d.out) steps"
	grep -E "umreplay|Error" $W/d.err | grep -v "policy plan" | cut -c1-200
done
