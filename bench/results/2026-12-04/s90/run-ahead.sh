# Session 90: discard-and-prefetches that land ahead of the evictions
# queued before them when those fit the room the model leaves (build/)
# beside another build (build-old/: 219dfd9, whose discard-and-prefetches
# always follow them on the replayer's one stream, in sessions 90 and 92;
# c27937b beside 73f86f0's partial waits in session 92), their replays in
# turn: train_sim at W/B 1.5 and 2 (plans made as tests/gpu/run.sh makes
# them), then ViT-B/16 and ResNet-152 at W/B 2 (bench/suite.sh's grid,
# with ideal). Run from the repository root on the GPU machine:
#   OUT=$OUT bash bench/results/2026-12-04/s90/run-ahead.sh
# MODELS_ONLY=1 leaves train_sim out, SIM_ONLY=1 the models; REPS (2)
# sets the models' rounds (session 93: 4).
set -uo pipefail
OUT=${OUT:?}
export LD_LIBRARY_PATH=$PWD/build/lib
B=build/bin MAXM=8G W=$OUT/ahead
mkdir -p "$W"
t0=$(date +%s)
same() { diff <(grep -E '^(checksum|step) ' "$1") <(grep -E '^(checksum|step) ' "$2") >/dev/null && echo same || echo DIFFERENT; }
replay() { # BUILD TAG PLAN ARGS...
	local build=$1 tag=$2 plan=$3; shift 3
	$build/bin/umreplay -q --plan "$plan" "$@" --max-managed $MAXM --stats "$W/$tag.json" -- \
		"${cmd[@]}" >"$W/$tag.out" 2>"$W/$tag.err"
	echo "$tag rc=$? output=$(same "$W/plain.out" "$W/$tag.out") $(python3 tests/gpu/replay_table.py "$W/$tag.json" 2>/dev/null |
		grep -oE '\b(iter_ms|faults_per_iter|htod_mb_per_iter|dtoh_mb_per_iter|steady_htod_busy_ms|steady_dtoh_busy_ms|steady_callback_ms)=[0-9.]+' | tr '\n' ' ')" \
		"$(python3 -c 'import json,sys; h = json.load(open(sys.argv[1]))["measured"]["host"]; print("ahead=%s in_part=%s" % (h.get("discard_prefetches_ahead", "-"), h.get("discard_prefetches_ahead_in_part", "-")))' "$W/$tag.json" 2>/dev/null)" |
		tee -a "$W/table.txt"
}
sim() { # train_sim at W/B 1.5 and 2, three rounds
	cmd=(build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
	"${cmd[@]}" >"$W/plain.out" 2>&1
	$B/umrec -q -o "$W/sim.db" --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>&1 || echo "umrec failed"
	w=$($B/umplan "$W/sim.db" --json -o "$W/full.plan" | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	for r in 1.5 2; do
		b=$(python3 -c "print(int($w / $r))")
		$B/umplan "$W/sim.db" --capacity $b -q -o "$W/sim.$r.plan"
		for i in 1 2 3; do
			replay build sim.$r.ideal.$i "$W/sim.$r.plan" --policy ideal
			builds="build build-old"
			[ $i = 2 ] && builds="build-old build"
			for bd in $builds; do
				replay $bd sim.$r.plan.$bd.$i "$W/sim.$r.plan" --policy plan --gpu-budget $b
			done
		done
	done
	echo "train_sim done at $(( $(date +%s) - t0 )) s"
}
[ -n "${MODELS_ONLY:-}" ] || sim
models="vit resnet152"
[ -z "${SIM_ONLY:-}" ] || models=
for m in $models; do
	BUILD=build COMPARE=build-old RATIOS=2 POLICIES=plan REPS=${REPS:-2} RUN_LIMIT_S=100 \
		timeout "${MODEL_LIMIT_S:-200}" bash bench/suite.sh $m "$W/models" grid >"$W/$m.log" 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s"
done
python3 bench/suite_report.py "$W/models" 2>&1 | sed -n '/^| model/,/^$/p'
cd "$OUT" && tar czf ahead.tgz ahead && rm -rf ahead
