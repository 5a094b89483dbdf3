# Session 40: the GPU mapping every arena segment's pages wherever they are
# (cuMemAdvise SET_ACCESSED_BY for the GPU, accessed-by.patch, enabled by
# UMKIT_DIAG_ACCESSED_BY=1), so that a kernel touching a page that is on the
# host reads it over the link instead of faulting it in. Plan replays with
# and without it, alternating which goes first, beside one ondemand replay;
# every run's output compared with the plain run's.
# Usage, from the repository root on the GPU machine with the patched build
# carried as build-ab/: bash THIS [CASES] (default: "sim mlp"; also vit).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build-ab/lib PYTHONUNBUFFERED=1
B=build-ab/bin S=$OUT/ab W=/tmp/ab MAXM=8G
RATIOS=${RATIOS:-2 3} ROUNDS=${ROUNDS:-2}
rm -rf $W; mkdir -p $S $W
sim_cmd=(build-ab/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
mlp_cmd=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
vit_cmd=(python3 examples/pytorch/vit.py --arch vit_base_patch16_224 --steps 8 --nvtx --batch-size 32)
outputs() { grep -E '^(checksum|step|iter) ' "$1"; }
for name in ${1:-sim mlp}; do
	declare -n cmd=${name}_cmd
	"${cmd[@]}" >$W/$name.plain 2>&1
	$B/umrec -q -o $W/$name.db --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>$W/$name.rec.err ||
		{ tail -3 $W/$name.rec.err; continue; }
	w=$($B/umplan $W/$name.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	for ratio in $RATIOS; do
		budget=$(python3 -c "print(int($w / $ratio))")
		$B/umplan $W/$name.db --capacity $budget -q -o $W/$name.$ratio.plan
		replay() { # TAG POLICY [ENV...]
			local tag=$1 policy=$2; shift 2
			env "$@" $B/umreplay -q --plan $W/$name.$ratio.plan --policy $policy --gpu-budget $budget \
				--max-managed $MAXM --stats $S/$tag.json -- "${cmd[@]}" >$W/$tag.out 2>&1
			local rc=$? same=no
			diff <(outputs $W/$name.plain) <(outputs $W/$tag.out) >/dev/null && [ -n "$(outputs $W/$tag.out)" ] && same=yes
			echo "$tag rc=$rc same=$same $(python3 tests/gpu/replay_table.py $S/$tag.json 2>/dev/null |
				grep -oE '\b(iter_ms|faults_per_iter|htod_mb_per_iter|dtoh_mb_per_iter|steady_unissued_blocks)=[0-9.]+' | tr '\n' ' ')" |
				tee -a $S/table.txt
		}
		replay $name.$ratio.ondemand ondemand
		for r in $(seq 1 $ROUNDS); do
			if [ $((r % 2)) = 1 ]; then
				replay $name.$ratio.plan.$r plan; replay $name.$ratio.mapped.$r plan UMKIT_DIAG_ACCESSED_BY=1
			else
				replay $name.$ratio.mapped.$r plan UMKIT_DIAG_ACCESSED_BY=1; replay $name.$ratio.plan.$r plan
			fi
		done
	done
done
tar czf $OUT/ab.tar.gz -C $OUT ab && rm -rf $S
