# Session 90, a diagnostic: does the plan's step stay kernels plus link
# because every discard-and-prefetch queues behind the evictions issued
# before it on the replayer's one stream? build-lane/ is main with
# lane.patch (unsafe: discard-and-prefetches on a stream of their own,
# without waiting for the evictions queued before them), build/ is main.
# Each runs plans made for the budget B and for B less a reserve (room the
# plan leaves free, so that the lane's discard-and-prefetches need not wait
# for the evictions in flight), in turn. Run from the repository root on
# the GPU machine:
#   OUT=$OUT bash bench/results/2026-12-04/s90/run-lane.sh
set -uo pipefail
OUT=${OUT:?}
export LD_LIBRARY_PATH=$PWD/build/lib
B=build/bin MAXM=8G W=$OUT/lane
mkdir -p "$W"
t0=$(date +%s)
same() { diff <(grep -E '^(checksum|step) ' "$1") <(grep -E '^(checksum|step) ' "$2") >/dev/null && echo same || echo DIFFERENT; }
replay() { # BUILD TAG PLAN ARGS...
	local build=$1 tag=$2 plan=$3; shift 3
	$build/bin/umreplay -q --plan "$plan" "$@" --max-managed $MAXM --stats "$W/$tag.json" -- \
		"${cmd[@]}" >"$W/$tag.out" 2>"$W/$tag.err"
	echo "$tag rc=$? output=$(same "$W/plain.out" "$W/$tag.out") $(python3 tests/gpu/replay_table.py "$W/$tag.json" 2>/dev/null |
		grep -oE '\b(iter_ms|faults_per_iter|htod_mb_per_iter|dtoh_mb_per_iter|peak_mb|steady_htod_busy_ms|steady_dtoh_busy_ms|steady_callback_ms)=[0-9.]+' | tr '\n' ' ')" |
		tee -a "$W/table.txt"
}
cmd=(build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
"${cmd[@]}" >"$W/plain.out" 2>&1
$B/umrec -q -o "$W/sim.db" --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>&1 || echo "umrec failed"
w=$($B/umplan "$W/sim.db" --json -o "$W/full.plan" | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
R=$((48 << 20))
for r in 1.5 2; do
	b=$(python3 -c "print(int($w / $r))")
	$B/umplan "$W/sim.db" --capacity $b -q -o "$W/sim.$r.plan"
	$B/umplan "$W/sim.db" --capacity $((b - R)) -q -o "$W/sim.$r.reserve.plan"
	for i in 1 2; do
		replay build sim.$r.ideal.$i "$W/sim.$r.plan" --policy ideal
		builds="build build-lane"
		[ $i = 2 ] && builds="build-lane build"
		for bd in $builds; do
			for p in plan reserve; do
				pf=$W/sim.$r.plan
				[ $p = reserve ] && pf=$W/sim.$r.reserve.plan
				replay $bd sim.$r.$p.$bd.$i "$pf" --policy plan --gpu-budget $b
			done
		done
	done
done
echo "train_sim done at $(( $(date +%s) - t0 )) s"
for reserve in 0 $((256 << 20)); do
	PLAN_RESERVE=$reserve BUILD=build COMPARE=build-lane RATIOS=2 POLICIES=plan REPS=2 RUN_LIMIT_S=100 \
		timeout "${MODEL_LIMIT_S:-200}" bash bench/suite.sh vit "$W/vit-$reserve" grid >"$W/vit-$reserve.log" 2>&1
	echo "vit reserve $reserve rc=$? $(( $(date +%s) - t0 )) s"
	python3 bench/suite_report.py "$W/vit-$reserve" 2>&1 | sed -n '/^| model/,/^$/p'
done
cd "$OUT" && tar czf lane.tgz lane && rm -rf lane
