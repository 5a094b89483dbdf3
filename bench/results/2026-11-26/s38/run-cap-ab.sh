# Session 38: the recorder keeping every pointer word of a launch (base,
# build/) against one that kept 64 (build-prev/), each build recording,
# planning and replaying MODEL at W/B RATIO (2) on its own: a warm-up
# replay per build, then ROUNDS (3) rounds of both builds' plan replays,
# the build that goes first alternating, and one ondemand run (base) for
# the fault share; pooled and paired step times of prev against base
# (bench/pooled_steps.py --ref plan) and each run's steady faults.
# Usage, from the repository root on the GPU machine, with build/ and
# build-prev/ carried: RATIO=... bash THIS MODEL
set -uo pipefail
MODEL=${1:?usage: run-cap-ab.sh MODEL}
R=${RATIO:-2}
export PYTHONUNBUFFERED=1
W=/tmp/s38-cap; rm -rf $W; mkdir -p $W $OUT/$MODEL-$R/runs $OUT/$MODEL-$R/stats
S=$OUT/$MODEL-$R
. bench/models.sh
read -ra cmd < <(model_command $MODEL "$(default_batch $MODEL)")
MAXM=12G
declare -A dir=([base]=build [prev]=build-prev) budget
htod=$(LD_LIBRARY_PATH=$PWD/build/lib python3 tests/gpu/calibrate.py 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["htod_gbps"])')
for b in base prev; do
	export LD_LIBRARY_PATH=$PWD/${dir[$b]}/lib
	${dir[$b]}/bin/umrec -q -o $W/$b.db --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>$W/$b.rec.err || exit 1
	w=$(${dir[$b]}/bin/umplan $W/$b.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	budget[$b]=$(python3 -c "print(int($w / $R))")
	${dir[$b]}/bin/umplan $W/$b.db --capacity ${budget[$b]} --htod-bw $htod -q -o $W/$b.plan || exit 1
	echo "$b: live peak $w, budget ${budget[$b]}, most pointers in a launch $(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT max(n) FROM (SELECT count(*) AS n FROM kernel_arg GROUP BY correlation_id)').fetchone()[0])" $W/$b.db), truncation warnings $(grep -c 'not recorded' $W/$b.rec.err)" | tee -a $S/table.txt
done
LD_LIBRARY_PATH=$PWD/build/lib "${cmd[@]}" >$W/plain.out 2>&1
replay() { # TAG BUILD POLICY
	local tag=$1 b=$2 policy=$3
	LD_LIBRARY_PATH=$PWD/${dir[$b]}/lib ${dir[$b]}/bin/umreplay -q --plan $W/$b.plan --policy $policy --gpu-budget ${budget[$b]} \
		--max-managed $MAXM --stats $S/stats/$tag.json -- "${cmd[@]}" >$S/runs/$tag.out 2>&1
	local rc=$? same=no
	diff <(grep -E '^(checksum|step) ' $W/plain.out) <(grep -E '^(checksum|step) ' $S/runs/$tag.out) >/dev/null && same=yes
	python3 - $S/stats/$tag.json $tag $rc $same <<'PY' | tee -a $S/table.txt
import json, statistics, sys
d = json.load(open(sys.argv[1])); m = d["measured"]
it = m["iterations"][1:]
fs = m["fault_sources"]
print(f"{sys.argv[2]:22} rc={sys.argv[3]} same={sys.argv[4]} steady_ms={[round(t / 1e6) for t in d['iteration_ns'][1:]]} "
      f"faults={statistics.median(i['fault_migrations'] for i in it):.0f} sources={fs['sources']} "
      f"htod_mb={m['htod_bytes'] / 1e6:.0f} dtoh_mb={m['dtoh_bytes'] / 1e6:.0f} peak_mb={m['peak_residency_bytes'] / 1e6:.0f}")
PY
}
replay warmup.b0.r0.plan.1.base base plan
replay warmup.b0.r0.plan.1.prev prev plan
for r in $(seq ${ROUNDS:-3}); do
	order=(base prev); [ $((r % 2)) = 0 ] && order=(prev base)
	for b in "${order[@]}"; do
		tag=ab.b0.r0.plan.$r; [ $b = prev ] && tag+=.prev
		replay $tag $b plan
	done
done
replay ab.b0.r0.ondemand.1 base ondemand
python3 bench/pooled_steps.py $S/runs --skip 1 --experiment ab --ref plan 2>&1 | tee $S/pooled.txt
