# Session 49: two replayer builds side by side, build/ against build/old
# (a worktree's `make tools injected`, its bin and lib copied there with
# libcjson): the plan policy under capacity emulation, the builds
# alternating, REPS runs each, ondemand once per ratio for the faults'
# denominator; one trace and one plan per case and ratio, made with build/.
# Results go to $OUT/ab/ab.log; README.md says which builds each run had.
#   CASES="sim mlp" bash bench/results/2026-11-29/s49/ab.sh
#   CASES=vit RATIOS=2 bash bench/results/2026-11-29/s49/ab.sh
set -uo pipefail
CASES=${CASES:-sim mlp}
RATIOS=${RATIOS:-1.5 2 3}
REPS=${REPS:-2}
MAXM=8G
W=/tmp/ab
rm -rf $W
mkdir -p $W $OUT/ab
export PYTHONUNBUFFERED=1
command_of() {
	case $1 in
	sim) echo build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx ;;
	mlp) echo python3 examples/pytorch/mlp.py --steps 12 --nvtx ;;
	vit) echo python3 examples/pytorch/vit.py --arch vit_base_patch16_224 --steps 8 --nvtx --batch-size 32 ;;
	bert) echo python3 examples/pytorch/bert.py --seq-len 128 --steps 8 --nvtx --batch-size 8 ;;
	esac
}
outputs() { grep -E '^(checksum|step|iter) ' "$1"; }
for c in $CASES; do
	cmd=$(command_of $c)
	$cmd >$W/$c.plain 2>&1
	LD_LIBRARY_PATH=build/lib build/bin/umrec -q -o $W/$c.db --max-managed $MAXM -- $cmd >/dev/null 2>&1 || echo "$c: umrec failed"
	w=$(build/bin/umplan $W/$c.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	echo "$c: W = $w bytes"
	for r in $RATIOS; do
		b=$(python3 -c "print(int($w / $r))")
		build/bin/umplan -q $W/$c.db --capacity $b -o $W/$c.$r.plan
		runs="ondemand:build"
		for i in $(seq $REPS); do runs="$runs plan:build/old plan:build"; done
		n=0
		for spec in $runs; do
			pol=${spec%%:*} bd=${spec#*:} n=$((n + 1))
			tag=$c.$r.$n
			LD_LIBRARY_PATH=$bd/lib $bd/bin/umreplay -q --plan $W/$c.$r.plan --policy $pol --gpu-budget $b \
				--max-managed $MAXM --stats $W/$tag.json -- $cmd >$W/$tag.out 2>$W/$tag.err
			rc=$?
			same=same; diff -q <(outputs $W/$c.plain) <(outputs $W/$tag.out) >/dev/null || same=DIFFERENT
			echo "$c W/B=$r $pol $bd rc=$rc output=$same $(python3 tests/gpu/replay_table.py $W/$tag.json 2>/dev/null | grep -oE '\b(iter_ms|faults_per_iter|steady_unissued_blocks|steady_refault_blocks|htod_mb_per_iter|dtoh_mb_per_iter)=[0-9.]+' | tr '\n' ' ')"
		done
	done
done 2>&1 | tee $OUT/ab/ab.log
