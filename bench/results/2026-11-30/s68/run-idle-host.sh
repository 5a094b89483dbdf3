#!/usr/bin/env bash
# Session 68: DLRM at W/B 2, runs taking their steps in turn
# (bench/lockstep.py): the program alone, ideal, the plan umplan makes by
# default (3 % headroom: its idle replay's footprint passes the budget in
# the first iteration, and it follows every launch from there), and the
# plan made with 5 % headroom, whose replay stays idle through the
# iterations, its tables' tails placed in host memory at their allocation.
#   ROUNDS=8 STEPS=200 bash bench/results/2026-11-30/s68/run-idle-host.sh
set -uo pipefail
. bench/models.sh
B=build/bin
work=$(mktemp -d /tmp/umkit-idlehost.XXXXXX)
read -ra rec < <(STEPS=5 model_command dlrm 4096)
record_and_plan $B "$work" 2 32G "${rec[@]}" || exit 1
$B/umplan "$work/m.db" --capacity $budget --htod-bw $htod --headroom 5 -q -o "$work/idle.plan" || exit 1
maxm=$(((2 * w + (1 << 30) - 1) >> 30))G
echo "W=$w budget=$budget max-managed=$maxm htod=$htod"
for plan in m idle; do
	$B/umreplay --plan "$work/$plan.plan" --dry-run "$work/m.db" --gpu-budget $budget 2>&1 | head -4
done
read -ra cmd < <(STEPS=${STEPS:-200} model_command dlrm 4096)
cmd[0]=$(command -v "${cmd[0]}")
out=$OUT/idle-host
mkdir -p "$out"
rp="$B/umreplay -q --max-managed $maxm"
python3 bench/lockstep.py --rounds "${ROUNDS:-8}" --skip 5 "$out/runs" "plain=${cmd[*]}" \
	"ideal=$rp --policy ideal -- ${cmd[*]}" \
	"plan=$rp --stats $out/plan.json --plan $work/m.plan --gpu-budget $budget -- ${cmd[*]}" \
	"idle=$rp --stats $out/idle.json --plan $work/idle.plan --gpu-budget $budget -- ${cmd[*]}" | tee "$out/table.md"
python3 bench/lockstep.py --report ideal,plain,plan,idle "$out/runs" --skip 5 | tee "$out/vs-ideal.md"
cd "$OUT" && tar czf idle-host.tgz idle-host && rm -rf idle-host
