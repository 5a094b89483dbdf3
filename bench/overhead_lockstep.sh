#!/usr/bin/env bash
# bench/overhead_lockstep.sh: what replay costs when memory suffices, its
# runs taking their steps in turn with plain ones (bench/lockstep.py).
#
# Usage, from the repository root on the GPU machine with the build present:
#   BUILD=build bash bench/overhead_lockstep.sh MODEL OUTDIR [STEPS]
# Records MODEL at its default batch and plans it for B = 1.25 W
# (bench/models.sh, roomy_plan), then ROUNDS (10) rounds of three STEPS-step
# runs (default 500) taking their steps in turn (bench/lockstep.py),
# compared over the steps after the first SKIP (5):
#   plain    the program alone, the reference;
#   plain2   the same again: what the method reads when nothing differs;
#   plan     umreplay --policy plan under B, which memory suffices for, so
#            the replay stays idle (issue 4's "replay with a budget above
#            W").
# Appends the table to OUTDIR/MODEL-lockstep.md and keeps the runs' outputs
# in OUTDIR/MODEL-lockstep.tar.gz.
# Safety: the replay's --max-managed is 2 W rounded up to whole GiB, and the
# command refuses to start with less than 40 GiB of the GPU free.
set -uo pipefail
MODEL=${1:?usage: bench/overhead_lockstep.sh MODEL OUTDIR [STEPS]}
OUTDIR=${2:?usage: bench/overhead_lockstep.sh MODEL OUTDIR [STEPS]}
STEPS=${3:-500}
SKIP=${SKIP:-5}
ROUNDS=${ROUNDS:-10}
BUILD=${BUILD:-build}
. "$(dirname "$0")/models.sh"
export PYTHONUNBUFFERED=1

batch=$(default_batch "$MODEL") || { echo "bench/overhead_lockstep.sh: unknown model '$MODEL' (one of: $MODELS)" >&2; exit 2; }
free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | head -1)
if [ "$free_mib" -lt $((40 * 1024)) ]; then
	echo "refusing to run: less than 40 GiB free on the GPU ($free_mib MiB)" >&2; exit 1
fi
work=$(mktemp -d /tmp/umkit-lockstep.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUTDIR"

roomy_plan "$BUILD/bin" "$MODEL" "$work" || exit 1
read -ra cmd < <(model_command "$MODEL" "$batch")
# The program bash would run: a Python launcher (pyenv's) may put its own
# folder first in PATH for the processes bench/lockstep.py starts.
cmd[0]=$(command -v "${cmd[0]}")
plain="plain=${cmd[*]}"
replay="plan=$BUILD/bin/umreplay -q --plan $work/$MODEL.plan --policy plan --gpu-budget $budget --max-managed $maxm -- ${cmd[*]}"
report=$OUTDIR/$MODEL-lockstep.md
{
	echo "## $MODEL, batch $batch, $STEPS steps, $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(cat "$BUILD/COMMIT"), $(date -u +%Y-%m-%d)"
	echo
	python3 bench/lockstep.py --rounds "$ROUNDS" --skip "$SKIP" "$work/runs" "$plain" "${plain/plain=/plain2=}" "$replay"
	rc=$?
	echo
} >>"$report"
tar -C "$work" -czf "$OUTDIR/$MODEL-lockstep.tar.gz" runs
cat "$report"
exit $rc
