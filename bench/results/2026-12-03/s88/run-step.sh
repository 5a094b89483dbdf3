# Session 88: where train_sim's and the MLP's plan steps go, with
# --kernel-times (the GPU's kernel time per iteration beside the step),
# and train_sim's plans beside the same plans made without host placement
# (umplan --host-bw 0), alternating, two rounds. Plans are made as
# tests/gpu/run.sh makes them (the budget W / ratio, umplan's default
# link constants). The build carried as build/; run from the repository
# root on the GPU machine:
#   OUT=$OUT bash bench/results/2026-12-03/s88/run-step.sh
set -uo pipefail
OUT=${OUT:?}
export LD_LIBRARY_PATH=$PWD/build/lib
B=build/bin MAXM=8G W=$OUT/step
mkdir -p "$W"
t0=$(date +%s)
python3 tests/gpu/calibrate.py 1 >"$W/calib.json"
same() { diff <(grep -E '^(checksum|step) ' "$1") <(grep -E '^(checksum|step) ' "$2") >/dev/null && echo same || echo DIFFERENT; }
live_peak() { $B/umplan "$1" --json -o "$W/full.plan" | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])'; }
replay() { # NAME TAG PLAN BUDGET-OPTS...: one --kernel-times run
	local name=$1 tag=$2 plan=$3; shift 3
	$B/umreplay -q --plan "$plan" "$@" --kernel-times --max-managed $MAXM --stats "$W/$tag.json" -- \
		"${cmd[@]}" >"$W/$tag.out" 2>"$W/$tag.err"
	echo "$tag rc=$? output=$(same "$W/$name.plain" "$W/$tag.out") $(python3 tests/gpu/replay_table.py "$W/$tag.json" 2>/dev/null |
		grep -oE '\b(iter_ms|steady_kernel_busy_ms|faults_per_iter|htod_mb_per_iter|dtoh_mb_per_iter|steady_htod_busy_ms|steady_dtoh_busy_ms|steady_callback_ms)=[0-9.]+' | tr '\n' ' ')" |
		tee -a "$W/table.txt"
}
case_of() { # NAME VARIANTS ROUNDS: record, plan at 1.5 and 2, replay
	local name=$1 variants=$2 rounds=$3
	"${cmd[@]}" >"$W/$name.plain" 2>&1
	$B/umrec -q -o "$W/$name.db" --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>&1 || echo "$name: umrec failed"
	local w
	w=$(live_peak "$W/$name.db")
	for r in 1.5 2; do
		local b=$(python3 -c "print(int($w / $r))")
		$B/umplan "$W/$name.db" --capacity $b --json -o "$W/$name.$r.plan" >"$W/$name.$r.plan.json"
		$B/umplan "$W/$name.db" --capacity $b --host-bw 0 --json -o "$W/$name.$r.host0.plan" >"$W/$name.$r.host0.plan.json"
		for i in $(seq $rounds); do
			replay $name $name.$r.ideal.$i "$W/$name.$r.plan" --policy ideal
			for v in $variants; do
				local p=$W/$name.$r.plan
				[ $v = host0 ] && p=$W/$name.$r.host0.plan
				replay $name $name.$r.$v.$i "$p" --policy plan --gpu-budget $b
			done
		done
	done
	echo "$name done at $(( $(date +%s) - t0 )) s"
}
cmd=(build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
case_of sim "plan host0" 2
cmd=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
case_of mlp "plan" 1
cd "$OUT" && tar czf step.tgz step && rm -rf step
