# Session 39: the fault target at W/B 3 on ViT-B/16 and BERT-large, on the
# build of the session's end: each model recorded and planned
# (record_and_plan, bench/models.sh), then a warm-up plan replay, PLANS (2)
# plan replays and one ondemand replay, each compared with a plain run.
# table.txt: per run, the steady iterations' times and median faults.
# Usage, from the repository root on the GPU machine with build/ carried:
# bash THIS MODEL...
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
S=$OUT/faults; mkdir -p $S
. bench/models.sh
for m in "$@"; do
	W=/tmp/s39-$m; rm -rf $W; mkdir -p $W
	read -ra cmd < <(model_command $m "$(default_batch $m)")
	record_and_plan build/bin $W 3 12G "${cmd[@]}" || continue
	"${cmd[@]}" >$W/plain.out 2>&1
	replay() { # TAG POLICY
		build/bin/umreplay -q --plan $W/m.plan --policy $2 --gpu-budget $budget --max-managed 12G \
			--stats $S/$m.$1.json -- "${cmd[@]}" >$W/$1.out 2>&1
		local rc=$? same=no
		diff <(grep -E '^(checksum|step) ' $W/plain.out) <(grep -E '^(checksum|step) ' $W/$1.out) >/dev/null && same=yes
		python3 - $S/$m.$1.json "$m $1" $rc $same <<'PY' | tee -a $S/table.txt
import json, statistics, sys
d = json.load(open(sys.argv[1])); it = d["measured"]["iterations"][1:]
print(f"{sys.argv[2]:16} rc={sys.argv[3]} same={sys.argv[4]} steady_ms={[round(t / 1e6) for t in d['iteration_ns'][1:]]} "
      f"faults={statistics.median(i['fault_migrations'] for i in it):.0f}")
PY
	}
	replay warmup plan
	for r in $(seq ${PLANS:-2}); do replay plan.$r plan; done
	replay ondemand ondemand
	echo "$m budget=$budget w=$w htod=$htod" | tee -a $S/table.txt
done
tar czf $OUT/faults.tar.gz -C $OUT faults && rm -rf $S
