# Session 65: is the idle replay's cost on DLRM (session 64: +1.7 %, 95 %
# +0.6 to +2.7 %) its managed memory? bench/um_call_rate (a copy or memset call
# host cost on device and on managed memory), then ROUNDS rounds of
# three DLRM runs in turn (bench/lockstep.py): plain, the idle plan replay
# at B = 1.25 W, and the same replay with its arena on device memory
# (UMKIT_NO_MANAGED=1, set through env after umreplay, which clears it).
#   ROUNDS=10 STEPS=500 bash bench/results/2026-11-30/s65/run-managed-cost.sh
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
mkdir -p $OUT/managed-cost
build/bench/um_call_rate | tee $OUT/managed-cost/um_call_rate.txt
. bench/models.sh
free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | head -1)
[ "$free_mib" -ge $((40 * 1024)) ] || { echo "less than 40 GiB free ($free_mib MiB)"; exit 1; }
work=$(mktemp -d)
roomy_plan build/bin dlrm $work || exit 1
read -ra cmd < <(STEPS=${STEPS:-500} model_command dlrm $(default_batch dlrm))
cmd[0]=$(command -v "${cmd[0]}")
replay="build/bin/umreplay -q --plan $work/dlrm.plan --policy plan --gpu-budget $budget --max-managed $maxm --"
python3 bench/lockstep.py --rounds ${ROUNDS:-10} --skip 5 $work/runs "plain=${cmd[*]}" \
	"plan=$replay ${cmd[*]}" "plan-device=$replay env UMKIT_NO_MANAGED=1 ${cmd[*]}" | tee $OUT/managed-cost/dlrm.md
tar -C $work -czf $OUT/managed-cost/runs.tar.gz runs
