# Session 88: GPU timelines of train_sim's and the MLP's plan replays, from
# a replayer built with timeline.patch (a diagnostic: every kernel,
# migration and launch time the --stats records keep, and each migration
# call's host times, written to $SESSION88_TIMELINE and $SESSION88_TIMELINE.calls).
# main's build carried as build/, the patched libumreplay.so as diag-lib/
# (UMKIT_LIBDIR for umreplay alone: umrec finds its library there too; the
# variable is not named UMKIT_*, which umreplay keeps from the program).
# Run from the repository root on the GPU machine:
#   OUT=$OUT bash bench/results/2026-12-03/s88/run-timeline.sh
set -uo pipefail
OUT=${OUT:?}
export LD_LIBRARY_PATH=$PWD/build/lib
DIAG=$PWD/diag-lib
B=build/bin MAXM=8G W=$OUT/tl
mkdir -p "$W"
t0=$(date +%s)
python3 tests/gpu/calibrate.py 1 >"$W/calib.json"
same() { diff <(grep -E '^(checksum|step) ' "$1") <(grep -E '^(checksum|step) ' "$2") >/dev/null && echo same || echo DIFFERENT; }
replay() { # NAME TAG PLAN OPTS...
	local name=$1 tag=$2 plan=$3; shift 3
	UMKIT_LIBDIR=$DIAG SESSION88_TIMELINE=$W/$tag.csv $B/umreplay -q --plan "$plan" "$@" --kernel-times --max-managed $MAXM \
		--stats "$W/$tag.json" -- "${cmd[@]}" >"$W/$tag.out" 2>"$W/$tag.err"
	echo "$tag rc=$? output=$(same "$W/$name.plain" "$W/$tag.out") $(python3 tests/gpu/replay_table.py "$W/$tag.json" 2>/dev/null |
		grep -oE '\b(iter_ms|steady_kernel_busy_ms|faults_per_iter|steady_htod_busy_ms|steady_dtoh_busy_ms)=[0-9.]+' | tr '\n' ' ')" |
		tee -a "$W/table.txt"
}
case_of() { # NAME RATIOS VARIANTS
	local name=$1 ratios=$2 variants=$3
	"${cmd[@]}" >"$W/$name.plain" 2>&1
	$B/umrec -q -o "$W/$name.db" --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>&1 || echo "$name: umrec failed"
	local w
	w=$($B/umplan "$W/$name.db" --json -o "$W/full.plan" | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	for r in $ratios; do
		local b=$(python3 -c "print(int($w / $r))")
		$B/umplan "$W/$name.db" --capacity $b -o "$W/$name.$r.plan" --json >"$W/$name.$r.umplan.json"
		$B/umplan "$W/$name.db" --capacity $b --host-bw 0 -o "$W/$name.$r.host0.plan" --json >"$W/$name.$r.host0.umplan.json"
		replay $name $name.$r.ideal "$W/$name.$r.plan" --policy ideal
		for v in $variants; do
			local p=$W/$name.$r.plan
			[ $v = host0 ] && p=$W/$name.$r.host0.plan
			replay $name $name.$r.$v "$p" --policy plan --gpu-budget $b
		done
	done
	echo "$name done at $(( $(date +%s) - t0 )) s"
}
cmd=(build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
case_of sim "1.5 2 3" "plan host0"
cmd=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
case_of mlp "1.5 2" "plan"
cd "$OUT" && tar czf tl.tgz tl && rm -rf tl
