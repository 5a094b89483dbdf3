# Session 43: what an idle replay's subscription to the graph calls costs a
# launch. bench/launch_rate (host ns per launch, 100,000 launches x 9
# trials) plain, under the idle replay of the session start (52104c3, no
# subscription while idle: build/old) and of this build (subscribed to the
# capture and graph-launch calls only), ROUNDS (6) rounds rotating the order;
# the DLRM fixture's plan made for 80G, budget 8G (idle throughout).
# Then the idle replay woken inside a CUDA graph capture (woken_probe.sh).
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
LR=build/bench/launch_rate
build/bin/umplan tests/fixtures/h100_dlrm.db --capacity 80G -q -o $OUT/s/fixture.plan || exit 1
lr() { # VARIANT
	case $1 in
	plain) timeout 120 $LR ;;
	old) LD_LIBRARY_PATH=$PWD/build/old/lib timeout 120 build/old/bin/umreplay -q --plan $OUT/s/fixture.plan --gpu-budget 8G --max-managed 8G -- $LR ;;
	new) timeout 120 build/bin/umreplay -q --plan $OUT/s/fixture.plan --gpu-budget 8G --max-managed 8G -- $LR ;;
	esac
}
variants=(plain old new)
for r in $(seq ${ROUNDS:-6}); do
	for i in "${!variants[@]}"; do
		v=${variants[$(( (i + r - 1) % ${#variants[@]} ))]}
		echo "lr round $r $v $(lr $v 2>&1 | grep -E 'fastest|rror')"
	done
done | tee $OUT/s/launch_rate.txt
python3 - $OUT/s/launch_rate.txt <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"lr round (\d+) (\S+) fastest ([\d.]+) median ([\d.]+)", line)
    if m:
        runs.setdefault(m.group(2), []).append(float(m.group(4)))
for v, xs in runs.items():
    print("%-6s median-of-trial-medians %.1f ns  (runs: %s)" % (v, statistics.median(xs), " ".join("%.0f" % x for x in xs)))
PY
bash bench/results/2026-11-26/s43/woken_probe.sh 2>&1 | grep -v "AccumulateGrad\|run_backward" | tail -12
