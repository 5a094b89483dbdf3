#!/usr/bin/env bash
# bench/overhead_lockstep.sh: what replay costs, its runs taking their
# steps in turn with the runs they are measured against (bench/lockstep.py).
#
# Usage, from the repository root on the GPU machine with the build present:
#   BUILD=build [RATIO=R] bash bench/overhead_lockstep.sh MODEL OUTDIR [STEPS]
# Records MODEL at its default batch, then ROUNDS (10) rounds of three
# STEPS-step runs (default 500) taking their steps in turn, compared over
# the steps after the first SKIP (5). Without RATIO, what replay costs
# when memory suffices: the plan made for B = 1.25 W (bench/models.sh,
# roomy_plan), the runs
#   plain    the program alone, the reference;
#   plain2   the same again: what the method reads when nothing differs;
#   plan     umreplay --policy plan under B, which memory suffices for, so
#            the replay stays idle (issue 4's "replay with a budget above
#            W").
# With RATIO, what the plan costs against ideal under B = W / RATIO (the
# plan made at the calibrated link speed: bench/models.sh, record_and_plan;
# issue 4's "90 % of ideal at W/B = 2"), the runs
#   ideal    umreplay --policy ideal, no budget, the reference;
#   ideal2   the same again;
#   plan     umreplay --policy plan under B.
# Each writes --stats (the last round's kept, stats/NAME.json), so all
# three pay alike for them: the plan's say what migrated and faulted, and
# the report gives the launch callbacks' time in a steady iteration under
# the plan. Not under ideal: its replay follows the launches too, but
# without a plan it counts no iterations to take a steady one from.
# A run waiting for its turn leaves the GPU to the others, so a plan that
# migrates in its steady steps gets link time for free: with RATIO the
# comparison holds for a program whose steady steps migrate nothing (the
# stats say), such as DLRM's, whose excess stays on the host.
# Appends the table to OUTDIR/MODEL-lockstep.md (with RATIO,
# MODEL-lockstep-wbR.md) and keeps the runs' outputs in the .tar.gz of
# the same name.
# Safety: the replays' --max-managed is 2 W rounded up to whole GiB, and the
# command refuses to start with less than 40 GiB of the GPU free.
set -uo pipefail
MODEL=${1:?usage: bench/overhead_lockstep.sh MODEL OUTDIR [STEPS]}
OUTDIR=${2:?usage: bench/overhead_lockstep.sh MODEL OUTDIR [STEPS]}
STEPS=${3:-500}
RATIO=${RATIO:-}
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

read -ra cmd < <(model_command "$MODEL" "$batch")
# The program bash would run: a Python launcher (pyenv's) may put its own
# folder first in PATH for the processes bench/lockstep.py starts.
cmd[0]=$(command -v "${cmd[0]}")
umreplay="$BUILD/bin/umreplay -q"
if [ -z "$RATIO" ]; then
	roomy_plan "$BUILD/bin" "$MODEL" "$work" || exit 1
	runs=("plain=${cmd[*]}" "plain2=${cmd[*]}")
	plan=$work/$MODEL.plan name=$MODEL-lockstep heading=
else
	read -ra rec < <(STEPS=5 model_command "$MODEL" "$batch")
	record_and_plan "$BUILD/bin" "$work" "$RATIO" 32G "${rec[@]}" || exit 1
	maxm=$(((2 * w + (1 << 30) - 1) >> 30))G
	echo "W=$w budget=$budget max-managed=$maxm htod=$htod"
	mkdir -p "$work/stats"
	ideal="--policy ideal --max-managed $maxm -- ${cmd[*]}"
	runs=("ideal=$umreplay --stats $work/stats/ideal.json $ideal"
	      "ideal2=$umreplay --stats $work/stats/ideal2.json $ideal")
	plan=$work/m.plan name=$MODEL-lockstep-wb$RATIO heading=", W/B $RATIO"
	umreplay+=" --stats $work/stats/plan.json"
fi
replay="plan=$umreplay --plan $plan --policy plan --gpu-budget $budget --max-managed $maxm -- ${cmd[*]}"
report=$OUTDIR/$name.md
{
	echo "## $MODEL$heading, batch $batch, $STEPS steps, $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(cat "$BUILD/COMMIT"), $(date -u +%Y-%m-%d)"
	echo
	python3 bench/lockstep.py --rounds "$ROUNDS" --skip "$SKIP" "$work/runs" "${runs[@]}" "$replay"
	rc=$?
	echo
	[ -z "$RATIO" ] || python3 - "$work/stats/plan.json" <<'EOF_STATS'
import json, sys
sys.path.insert(0, "tests/gpu")
from replay_table import summarise
try:
    s = summarise(json.load(open(sys.argv[1])))
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"the stats: {e}")
# The modelled peak: the measured one is the device's memory in use, which
# counts the other runs' too.
if s["faults_per_iter"] is None or s["steady_callback_ms"] is None:
    sys.exit("The plan's last run completed no iteration, or counted no traffic: no steady medians.")
print(f"The plan's last run, steady medians per iteration: {s['faults_per_iter']:g} fault migrations, "
      f"{s['htod_mb_per_iter']:.1f} MB HtoD, {s['dtoh_mb_per_iter']:.1f} MB DtoH; modelled peak "
      f"residency {s['modelled_peak_mb']:.0f} MB under a budget of {s['budget_mb']:.0f} MB. "
      f"The launch callbacks: {s['steady_callback_ms']:.3f} ms of a steady iteration.")
print()
EOF_STATS
} >>"$report"
tar -C "$work" -czf "$OUTDIR/$name.tar.gz" runs $([ -z "$RATIO" ] || echo stats)
cat "$report"
exit $rc
