# Session 41: late prefetches deferred after their kernel (defer.patch,
# UMDIAG_DEFER_LATE=1, with UMDIAG_ACCESSED_BY=1 so that the kernel
# reads the deferred blocks where they are). Three plan replays per round,
# the order rotating: plain plan; the GPU mapping every segment (mapped);
# mapped and late jobs deferred when the GPU has caught up (defer), or
# whenever the worker has not taken them (always); beside one ondemand replay. Every
# run's output is compared with the plain run's.
# Usage, from the repository root on the GPU machine with the patched build
# carried as build-ab/: bash THIS [CASES] (default: "sim mlp"; also vit,
# bert). VARIANTS (default "plan mapped defer always"), ROUNDS and RATIOS
# choose the runs.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build-ab/lib PYTHONUNBUFFERED=1
B=build-ab/bin S=$OUT/ab W=/tmp/ab
RATIOS=${RATIOS:-2 3} ROUNDS=${ROUNDS:-2}
rm -rf $W; mkdir -p $S $W
sim_cmd=(build-ab/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
mlp_cmd=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
vit_cmd=(python3 examples/pytorch/vit.py --arch vit_base_patch16_224 --steps 8 --nvtx --batch-size 32)
bert_cmd=(python3 examples/pytorch/bert.py --seq-len 128 --steps 8 --nvtx --batch-size 8)
outputs() { grep -E '^(checksum|step|iter) ' "$1"; }
variant_env() { # VARIANT
	case $1 in
	plan) ;;
	mapped) echo UMDIAG_ACCESSED_BY=1 ;;
	defer) echo UMDIAG_ACCESSED_BY=1 UMDIAG_DEFER_LATE=1 ;;
	always) echo UMDIAG_ACCESSED_BY=1 UMDIAG_DEFER_LATE=always ;;
	esac
}
for name in ${1:-sim mlp}; do
	declare -n cmd=${name}_cmd
	MAXM=8G; [ $name = bert ] && MAXM=16G
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
				grep -oE '\b(iter_ms|faults_per_iter|htod_mb_per_iter|dtoh_mb_per_iter|steady_unissued_blocks)=[0-9.]+' | tr '\n' ' ')" \
				"diag=$(grep -c '^umdiag' $W/$tag.out)" "gates=$(python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["measured"]["host"]["prefetch_gates"]; print("%d/%d/%d/%d" % (g["unissued"], g["deferred"], g["defer_taken"], g["defer_busy"]))' $S/$tag.json 2>/dev/null)" |
				tee -a $S/table.txt
		}
		replay $name.$ratio.ondemand ondemand
		variants=(${VARIANTS:-plan mapped defer always})
		for r in $(seq 1 $ROUNDS); do
			for k in ${!variants[@]}; do
				v=${variants[$(((r + k) % ${#variants[@]}))]}
				replay $name.$ratio.$v.$r plan $(variant_env $v)
			done
		done
	done
done
tar czf $OUT/ab.tar.gz -C $OUT ab && rm -rf $S
