# Session 83: umplan leaving smart eviction (G10's phase 1) out where it
# leaves evictions forced and the schedule without it predicts less stall,
# on the GPU. One recording per program, one replayer (build/), two plans
# per ratio: umplan of the change (build/, "new") and of its parent
# (build-old/bin/umplan, "old"), REPS runs each, rounds alternating which
# plan goes first, after one warm-up replay; every output compared with a
# plain run's. CASES are PROGRAM:RATIO, PROGRAM one of sim, mlp or a model
# of bench/models.sh. Rows in $OUT/smart/ab.csv (bench/measure.py).
#   OUT=$OUT bash bench/results/2026-12-03/s83/run-smart-ab.sh
set -uo pipefail
CASES=${CASES:-sim:2 mlp:2 vit:2}
REPS=${REPS:-3}
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
. bench/models.sh
W=/tmp/smart; rm -rf $W; mkdir -p $W/stats $OUT/smart
csv=$OUT/smart/ab.csv
t0=$(date +%s)
htod=$(python3 tests/gpu/calibrate.py 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["htod_gbps"])')
declare -A umplan=([new]=build/bin/umplan [old]=build-old/bin/umplan)
program_command() { # PROGRAM: the command line, 12 steps for the two examples
	case $1 in
	sim) echo build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx ;;
	mlp) echo python3 examples/pytorch/mlp.py --steps 12 --nvtx ;;
	*) model_command $1 $(default_batch $1) ;;
	esac
}
run() { # PROGRAM RATIO BUDGET PLAN REP
	local tag=$1.$2.$4.$5
	timeout 200 build/bin/umreplay -q --plan $W/$1.$4.$2.plan --policy plan --gpu-budget $3 --max-managed $maxm \
		--stats $W/stats/$tag.json -- "${cmd[@]}" >$W/$tag.out 2>$W/$tag.err
	local rc=$?
	python3 bench/measure.py $csv --out $W/$tag.out --stats $W/stats/$tag.json --ref $W/$1.plain --rc $rc \
		build="$(cat build/COMMIT)" model=$1 experiment=smart w_bytes=$w ratio=$2 budget_bytes=$3 \
		policy=plan-$4 rep=$5
	echo "$tag rc=$rc $(tail -1 $csv | cut -d, -f13-17)"
}
for c in $CASES; do
	p=${c%:*} r=${c#*:}
	read -ra cmd < <(program_command $p)
	"${cmd[@]}" >$W/$p.plain 2>$W/$p.plain.err || { tail -3 $W/$p.plain.err; continue; }
	build/bin/umrec -q -o $W/$p.db --max-managed 16G -- "${cmd[@]}" >/dev/null 2>$W/$p.rec.err ||
		{ tail -3 $W/$p.rec.err; continue; }
	w=$(build/bin/umplan $W/$p.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	maxm=$(((2 * w + (1 << 30) - 1) >> 30))G
	b=$(python3 -c "print(int($w / $r))")
	for v in new old; do ${umplan[$v]} $W/$p.db --capacity $b --htod-bw $htod -q -o $W/$p.$v.$r.plan || exit 1; done
	cmp -s $W/$p.new.$r.plan $W/$p.old.$r.plan && same="the same" || same="different"
	echo "$p W/B $r: W $w, plans $same; new: $(build/bin/umplan $W/$p.db --capacity $b --htod-bw $htod --report |
		grep -E 'smart eviction left out' | sed 's/^ *//')"
	run $p $r $b new 0   # warm-up, left out
	for rep in $(seq $REPS); do
		order="new old"; [ $((rep % 2)) = 0 ] && order="old new"
		for v in $order; do run $p $r $b $v $rep; done
	done
	echo "$p: $(( $(date +%s) - t0 )) s"
done
python3 - $csv $W/stats <<'PY' | tee $OUT/smart/table.md
import csv, json, statistics, sys
def step(r):  # train_sim prints no per_step_ms: its stats' iterations, the first left out
    if r["step_ms"] or r["rc"] != "0":
        return r["step_ms"]
    t = json.load(open(f"{sys.argv[2]}/{r['model']}.{r['ratio']}.{r['policy'][5:]}.{r['rep']}.json"))["iteration_ns"]
    return "%.3f" % (statistics.median(t[1:] or t) / 1e6)
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["rep"] != "0"]
print("| program | W/B | umplan | rep | step ms | faults / iter | HtoD MB / iter | DtoH MB / iter | same output |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
for r in sorted(rows, key=lambda r: (r["model"], float(r["ratio"]), r["policy"], r["rep"])):
    print(f"| {r['model']} | {r['ratio']} | {r['policy']} | {r['rep']} | {step(r)} | {r['faults_per_iter']} | "
          f"{r['htod_mb_per_iter']} | {r['dtoh_mb_per_iter']} | {r['same_output']} |")
PY
tar -C $W -czf $OUT/smart/runs.tar.gz stats $(cd $W && ls *.out *.plain)
