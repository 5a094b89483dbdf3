# Session 31: what an idle replay costs a launch-bound program, by build: launch callbacks on (da99658,
# build-lead/old), turned off after the first launch (e3275ca, build-lead/diag run without DIAG_* variables;
# in the first command, run at e3275ca, this build was build-lead) and CUPTI not attached at all (cded8e7 on,
# build-lead). Part 1: bench/launch_rate (host ns per kernel launch, 100,000 launches x 9 trials per run)
# plain, under each build's idle replay (the DLRM fixture's plan made for 80G, budget 8G) and following every
# launch (--policy ideal, no plan); ROUNDS_LR (5) rounds, each starting one variant later. Part 2: DLRM,
# STEPS_DLRM (200)-step runs, plain and the builds' idle replays at B = 1.25 W (PyTorch's cache kept), ROUNDS
# (6) rotated rounds; pooled and paired step medians (bench/pooled_steps.py). VARIANTS_LR and VARIANTS_DLRM
# choose the variants.
mkdir -p $OUT/s/runs $OUT/s/stats
export LD_LIBRARY_PATH=$PWD/build-lead/lib PYTHONUNBUFFERED=1
B=build-lead/bin LR=build-lead/bench/launch_rate
declare -A bin=([on]=build-lead/old/bin [off]=build-lead/diag/bin [detached]=build-lead/bin)
rotated() { # ROUND VARIANT... : the variants, starting at place ROUND - 1
	local k=$(( ($1 - 1) % ($# - 1) )); shift; local v=("$@")
	for i in "${!v[@]}"; do echo "${v[$(( (i + k) % ${#v[@]} ))]}"; done
}
$B/umplan tests/fixtures/h100_dlrm.db --capacity 80G -q -o $OUT/s/fixture.plan || exit 1
lr() { # VARIANT
	case $1 in
	plain) timeout 120 $LR ;;
	follow) timeout 120 $B/umreplay -q --policy ideal --max-managed 8G -- $LR ;;
	*) timeout 120 ${bin[$1]}/umreplay -q --plan $OUT/s/fixture.plan --gpu-budget 8G --max-managed 8G \
		--stats $OUT/s/stats/lr.$1.$r.json -- $LR ;;
	esac
}
for r in $(seq ${ROUNDS_LR:-5}); do
	for v in $(rotated $r ${VARIANTS_LR:-plain on off detached follow}); do
		echo "lr round $r $v $(lr $v 2>&1 | grep -E 'fastest|rror')"
	done
done | tee $OUT/s/launch_rate.txt
. bench/models.sh
roomy_plan $B dlrm $OUT/s || exit 1
STEPS=${STEPS_DLRM:-200}; read -ra cmd < <(model_command dlrm 4096)
for r in $(seq ${ROUNDS:-6}); do
	for v in $(rotated $r ${VARIANTS_DLRM:-plain on detached}); do
		case $v in
		plain) "${cmd[@]}" > $OUT/s/runs/overhead.b4096.r0.plain.$r.out 2>/dev/null ;;
		*) ${bin[$v]}/umreplay -q --plan $OUT/s/dlrm.plan --policy plan --gpu-budget $budget --max-managed $maxm \
			--stats $OUT/s/stats/dlrm.$v.$r.json -- "${cmd[@]}" > $OUT/s/runs/overhead.b4096.r0.8.plan.$r.$v.out 2>&1 ;;
		esac
		echo "dlrm round $r $v rc=$?"
	done
done
python3 bench/pooled_steps.py $OUT/s/runs
python3 - $OUT/s/stats <<'PY'
import glob, json, os, sys
print("| run | idle throughout | traffic counted | allocs | peak residency MB |\n| --- | --- | --- | ---: | ---: |")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    d = json.load(open(f)); e = d["engine"]; h = d["measured"]["host"]
    print(f"| {os.path.basename(f)} | {e['started_idle'] and not e['woke_at_alloc']} | {d['measured'].get('traffic_counted', '-')} | "
          f"{h['allocator']['allocs']} | {d['measured']['peak_residency_bytes'] / 1e6:.0f} |")
PY
rm -f $OUT/s/dlrm.db
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
