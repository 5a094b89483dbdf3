# Session 56: does the plan's fault count or step time move with the link
# constants umplan plans with? train_sim and the MLP at W/B 2 (the GPU
# checks' commands and budget), each recorded once, planned five ways:
#   default     umplan's defaults (--dtoh-bw 8.6 --htod-bw 48.8 --call-cost 100)
#   calibrated  this GPU's, measured by tests/gpu/calibrate.py in this command
#   slow-evict  --dtoh-bw 4.3: evictions planned twice as long, so earlier
#   headroom10  --headroom 10 (3 by default)
#   fast-calls  --call-cost 10
# and replayed under plan, beside ondemand and ideal, in ROUNDS (3) rounds,
# each starting one variant later.
#   bash bench/results/2026-11-30/s56/run-plan-constants.sh
set -u
D=$OUT/c; mkdir -p $D
export PYTHONUNBUFFERED=1
B=build/bin MAXM=8G
python3 tests/gpu/calibrate.py 1 > $D/calib.json && cat $D/calib.json
read -r dtoh htod call < <(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c["dtoh_gbps"], c["htod_gbps"], c["call_cost_us"])' $D/calib.json)
sim=(build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
mlp=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
declare -A flags=([default]="" [calibrated]="--dtoh-bw $dtoh --htod-bw $htod --call-cost $call"
	[slow-evict]="--dtoh-bw 4.3" [headroom10]="--headroom 10" [fast-calls]="--call-cost 10")
variants=(default calibrated slow-evict headroom10 fast-calls ondemand ideal)
for name in sim mlp; do
	unset -n cmd; declare -n cmd=$name
	"${cmd[@]}" > $D/$name.plain 2>&1
	$B/umrec -q -o $D/$name.db --max-managed $MAXM -- "${cmd[@]}" > /dev/null 2>&1 || echo "$name: umrec failed"
	w=$($B/umplan $D/$name.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	budget=$((w / 2))
	for v in default calibrated slow-evict headroom10 fast-calls; do
		$B/umplan -q $D/$name.db --capacity $budget ${flags[$v]} -o $D/$name.$v.plan || echo "$name $v: umplan failed"
	done
	for r in $(seq ${ROUNDS:-3}); do
		for i in "${!variants[@]}"; do
			v=${variants[$(( (i + r - 1) % ${#variants[@]} ))]}
			case $v in
			ondemand) opt=(--plan $D/$name.default.plan --policy ondemand --gpu-budget $budget) ;;
			ideal) opt=(--plan $D/$name.default.plan --policy ideal) ;;
			*) opt=(--plan $D/$name.$v.plan --gpu-budget $budget) ;;
			esac
			tag=$name.$v.$r
			$B/umreplay "${opt[@]}" --max-managed $MAXM --stats $D/$tag.json -- "${cmd[@]}" > $D/$tag.out 2> $D/$tag.err
			rc=$?
			same=same; diff <(grep -E '^(checksum|step|iter) ' $D/$name.plain) <(grep -E '^(checksum|step|iter) ' $D/$tag.out) > /dev/null || same=DIFFERS
			echo "$name $v round $r rc=$rc output $same $(python3 tests/gpu/replay_table.py $D/$tag.json 2>/dev/null |
				grep -oE '\b(iter_ms|faults_per_iter|htod_mb_per_iter|dtoh_mb_per_iter|steady_unissued_blocks)=[0-9.]+' | tr '\n' ' ')"
		done
	done
done | tee $D/runs.txt
python3 - $D/runs.txt <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) (\S+) round \d+ rc=(\d+) output (\w+) (.*)", line)
    if m:
        kv = dict(x.split("=") for x in m[5].split())
        runs.setdefault((m[1], m[2]), []).append((int(m[3]), m[4], kv))
print("| workload | variant | runs as plain | iter ms (median, min-max) | faults/iter (median, min-max) | % of ondemand's faults | HtoD / DtoH MB per iter |")
print("| --- | --- | --- | --- | --- | ---: | --- |")
for w in ("sim", "mlp"):
    od = statistics.median(float(kv["faults_per_iter"]) for _, _, kv in runs.get((w, "ondemand"), []) or [(0, 0, {"faults_per_iter": "nan"})])
    for (ww, v), rs in runs.items():
        if ww != w:
            continue
        ok = sum(rc == 0 and s == "same" for rc, s, _ in rs)
        it = [float(kv.get("iter_ms", "nan")) for _, _, kv in rs]
        f = [float(kv.get("faults_per_iter", "nan")) for _, _, kv in rs]
        h = statistics.median(float(kv.get("htod_mb_per_iter", "nan")) for _, _, kv in rs)
        d = statistics.median(float(kv.get("dtoh_mb_per_iter", "nan")) for _, _, kv in rs)
        print(f"| {w} | {v} | {ok} of {len(rs)} | {statistics.median(it):.1f} ({min(it):.1f}-{max(it):.1f}) | "
              f"{statistics.median(f):.0f} ({min(f):.0f}-{max(f):.0f}) | {100 * statistics.median(f) / od:.2f} | {h:.0f} / {d:.0f} |")
PY
rm -f $D/*.db
tar czf $OUT/constants.tar.gz -C $OUT c && rm -rf $OUT/c
