# Session 64: umplan's lazy eviction of tensors sharing a 2 MB block with
# a live one (68fc8a0) on the GPU, GPT-2 small (bench/models.sh's command,
# batch 4, STEPS steps). One recording, one replayer (build/), two plans per
# ratio: umplan of 68fc8a0 (build/, "new") and of its parent 8550241
# (build-old/bin/umplan, "old"), REPS runs each, rounds alternating which
# plan goes first, after one warm-up replay; ondemand once per ratio for the
# faults' denominator; every output compared with a plain run's. Rows in
# $OUT/lazy/gpt2.csv (bench/measure.py).
#   bash bench/results/2026-11-30/s64/run-gpt2-lazy.sh
set -uo pipefail
RATIOS=${RATIOS:-2 3}
REPS=${REPS:-2}
STEPS=${STEPS:-8}
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
. bench/models.sh
W=/tmp/lazy; rm -rf $W; mkdir -p $W/stats $OUT/lazy
csv=$OUT/lazy/gpt2.csv
read -ra cmd < <(model_command gpt2 4)
"${cmd[@]}" >$W/plain.out 2>$W/plain.err || { tail -3 $W/plain.err; exit 1; }
build/bin/umrec -q -o $W/m.db --max-managed 16G -- "${cmd[@]}" >$W/rec.out 2>$W/rec.err || { tail -3 $W/rec.err; exit 1; }
w=$(build/bin/umplan $W/m.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
maxm=$(((2 * w + (1 << 30) - 1) >> 30)); [ $maxm -lt 8 ] && maxm=8
htod=$(python3 tests/gpu/calibrate.py 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["htod_gbps"])')
echo "gpt2: W = $w bytes, --max-managed ${maxm}G, htod $htod GB/s"
declare -A umplan=([new]=build/bin/umplan [old]=build-old/bin/umplan)
run() { # RATIO BUDGET POLICY PLAN REP
	local tag=$1.$3.$4.$5 plan=$W/$4.$1.plan
	[ "$3" = ondemand ] && plan=$W/new.$1.plan
	timeout 200 build/bin/umreplay -q --plan $plan --policy $3 --gpu-budget $2 --max-managed ${maxm}G \
		--stats $W/stats/$tag.json -- "${cmd[@]}" >$W/$tag.out 2>$W/$tag.err
	local rc=$?
	python3 bench/measure.py $csv --out $W/$tag.out --stats $W/stats/$tag.json --ref $W/plain.out --rc $rc \
		build="$(cat build/COMMIT)" model=gpt2 experiment=lazy batch=4 w_bytes=$w ratio=$1 budget_bytes=$2 \
		policy=$3-$4 rep=$5
	echo "$tag rc=$rc $(tail -1 $csv | cut -d, -f13-17)"
}
for r in $RATIOS; do
	b=$(python3 -c "print(int($w / $r))")
	for v in new old; do ${umplan[$v]} $W/m.db --capacity $b --htod-bw $htod -q -o $W/$v.$r.plan || exit 1; done
	cmp -s $W/new.$r.plan $W/old.$r.plan && echo "W/B $r: the two plans are the same" || echo "W/B $r: the plans differ"
done
read -ra ratios <<<"$RATIOS"
run ${ratios[-1]} $(python3 -c "print(int($w / ${ratios[-1]}))") plan new 0   # warm-up, left out
for r in $RATIOS; do
	b=$(python3 -c "print(int($w / $r))")
	run $r $b ondemand new 1
	for rep in $(seq $REPS); do
		order="new old"; [ $((rep % 2)) = 0 ] && order="old new"
		for v in $order; do run $r $b plan $v $rep; done
	done
done
python3 - $csv <<'PY' | tee $OUT/lazy/table.md
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["rep"] != "0"]
print("| W/B | policy, umplan | rep | step ms | faults / iter | HtoD MB / iter | DtoH MB / iter | modelled peak MB | same output |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for r in sorted(rows, key=lambda r: (float(r["ratio"]), r["policy"], r["rep"])):
    print(f"| {r['ratio']} | {r['policy']} | {r['rep']} | {r['step_ms']} | {r['faults_per_iter']} | "
          f"{r['htod_mb_per_iter']} | {r['dtoh_mb_per_iter']} | {r['modelled_peak_mb']} | {r['same_output']} |")
PY
tar -C $W -czf $OUT/lazy/runs.tar.gz stats $(cd $W && ls *.out)
