# Session 37: a replayer variant against the base build at W/B RATIO (2),
# as session 36's run-evict-call-ab.sh: MODEL (vit, resnet152, ...)
# recorded and planned for W/B RATIO, a warm-up replay per build, then
# ROUNDS (6) rounds of both builds' plan replays, the build that goes first
# alternating, and one run of each of EXTRA (ideal) per two rounds, on the
# base build; pooled and paired step times of the variant against base
# (bench/pooled_steps.py --ref plan), and each run's steady faults, gate
# counts and eviction-call time.
# Usage, from the repository root on the GPU machine, with build/ (base)
# and build-VARIANT/ carried: bash THIS MODEL VARIANT
set -uo pipefail
MODEL=${1:?usage: run-ab.sh MODEL VARIANT}
VARIANT=${2:?usage: run-ab.sh MODEL VARIANT}
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
W=/tmp/s37-ab; rm -rf $W; mkdir -p $W $OUT/s/runs $OUT/s/stats
. bench/models.sh
read -ra cmd < <(model_command $MODEL "$(default_batch $MODEL)")
MAXM=12G
build/bin/umrec -q -o $W/m.db --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>&1 || exit 1
w=$(build/bin/umplan $W/m.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
budget=$(python3 -c "print(int($w / ${RATIO:-2}))")
htod=$(python3 tests/gpu/calibrate.py 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["htod_gbps"])')
build/bin/umplan $W/m.db --capacity $budget --htod-bw $htod -q -o $W/m.plan || exit 1
"${cmd[@]}" >$W/plain.out 2>&1
declare -A bin=([base]=build/bin [$VARIANT]=build-$VARIANT/bin)
replay() { # TAG BUILD POLICY: one run, its stdout named for pooled_steps.py
	local tag=$1 b=$2 policy=$3 budget_opt=(--gpu-budget $budget)
	[ $policy = ideal ] && budget_opt=()
	LD_LIBRARY_PATH=${bin[$b]%/bin}/lib ${bin[$b]}/umreplay -q --plan $W/m.plan --policy $policy "${budget_opt[@]}" \
		--max-managed $MAXM --stats $OUT/s/stats/$tag.json -- "${cmd[@]}" >$OUT/s/runs/$tag.out 2>&1
	local rc=$? same=no
	diff <(grep -E '^(checksum|step) ' $W/plain.out) <(grep -E '^(checksum|step) ' $OUT/s/runs/$tag.out) >/dev/null && same=yes
	python3 - $OUT/s/stats/$tag.json $tag $rc $same <<'PY' | tee -a $OUT/s/table.txt
import json, statistics, sys
d = json.load(open(sys.argv[1])); m = d["measured"]; g = m["host"]["prefetch_gates"]
it = m["iterations"][1:]
print(f"{sys.argv[2]:28} rc={sys.argv[3]} same={sys.argv[4]} steady_ms={[round(t / 1e6) for t in d['iteration_ns'][1:]]} "
      f"faults={statistics.median(i['fault_migrations'] for i in it):.0f} "
      f"gate_waits={g['waits']} unissued={g['unissued']} "
      f"evict_call_ms={m['host']['driver_calls']['evict']['ns'] / 1e6:.0f}")
PY
}
replay warmup.b0.r0.plan.1.base base plan
replay warmup.b0.r0.plan.1.$VARIANT $VARIANT plan
for r in $(seq ${ROUNDS:-6}); do
	order=(base $VARIANT); [ $((r % 2)) = 0 ] && order=($VARIANT base)
	for b in "${order[@]}"; do
		tag=ab.b0.r0.plan.$r; [ $b = $VARIANT ] && tag+=.$VARIANT
		replay $tag $b plan
	done
	if [ $((r % 2)) = 1 ]; then
		for p in ${EXTRA:-ideal}; do replay ab.b0.r0.$p.$r base $p; done
	fi
done
python3 bench/pooled_steps.py $OUT/s/runs --skip 1 --experiment ab --ref plan 2>&1 | tee $OUT/s/pooled.txt
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
