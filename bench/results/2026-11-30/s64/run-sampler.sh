# Session 64: is the residency sampler (replay/cuda/rp_residency.c, one
# cuMemGetInfo a millisecond on a thread of its own) the idle replay's
# cost on DLRM? In turn (bench/lockstep.py), ROUNDS rounds of STEPS-step
# runs: plain; the idle plan replay (build/); the same replay with the
# sampler off (build-diag/, diag-no-sampler.patch, under
# UMKIT_DIAG_NO_SAMPLER=1). Results in $OUT/sampler/.
#   ROUNDS=10 STEPS=400 bash bench/results/2026-11-30/s64/run-sampler.sh
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
. bench/models.sh
W=/tmp/sampler; rm -rf $W; mkdir -p $W $OUT/sampler
roomy_plan build/bin dlrm $W || exit 1
STEPS=${STEPS:-400}; read -ra cmd < <(model_command dlrm 4096)
cmd[0]=$(command -v "${cmd[0]}")
opts="-q --plan $W/dlrm.plan --policy plan --gpu-budget $budget --max-managed $maxm --"
python3 bench/lockstep.py --rounds ${ROUNDS:-10} $W/runs "plain=${cmd[*]}" \
	"plan=build/bin/umreplay $opts ${cmd[*]}" \
	"nosampler=env UMKIT_DIAG_NO_SAMPLER=1 LD_LIBRARY_PATH=$PWD/build-diag/lib:$LD_LIBRARY_PATH build-diag/bin/umreplay $opts ${cmd[*]}" \
	| tee $OUT/sampler/table.md
tar -C $W -czf $OUT/sampler/runs.tar.gz runs
