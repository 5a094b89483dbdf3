# Session 50: are the MLP's plan faults tied to the tensors the plan keeps
# in host memory? One replayer build (build/), two plans per ratio from one
# recording: umplan's default and umplan --host-bw 0 (no host placement),
# alternating, REPS runs each, ondemand once per ratio for the faults'
# denominator. Each run's three largest fault sources (allocation id:
# migrations over the steady iterations) are printed beside its row.
# Results go to $OUT/hostplace/log.
#   CASES=mlp bash bench/results/2026-11-29/s50/hostplace.sh
set -uo pipefail
CASES=${CASES:-mlp}
RATIOS=${RATIOS:-1.5 2 3}
REPS=${REPS:-2}
MAXM=8G
W=/tmp/hostplace
rm -rf $W
mkdir -p $W $OUT/hostplace
export PYTHONUNBUFFERED=1
command_of() {
	case $1 in
	sim) echo build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx ;;
	mlp) echo python3 examples/pytorch/mlp.py --steps 12 --nvtx ;;
	esac
}
outputs() { grep -E '^(checksum|step|iter) ' "$1"; }
sources() {
	python3 -c 'import json,sys
fs = json.load(open(sys.argv[1]))["measured"].get("fault_sources") or {}
print("sources=" + ",".join("%d:%d" % (s["alloc_id"], s["migrations"]) for s in fs.get("top", [])[:3]))' "$1" 2>/dev/null
}
for c in $CASES; do
	cmd=$(command_of $c)
	$cmd >$W/$c.plain 2>&1
	LD_LIBRARY_PATH=build/lib build/bin/umrec -q -o $W/$c.db --max-managed $MAXM -- $cmd >/dev/null 2>&1 || echo "$c: umrec failed"
	cp $W/$c.db $OUT/hostplace/
	w=$(build/bin/umplan $W/$c.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	echo "$c: W = $w bytes"
	for r in $RATIOS; do
		b=$(python3 -c "print(int($w / $r))")
		build/bin/umplan -q $W/$c.db --capacity $b -o $W/$c.$r.default.plan
		build/bin/umplan -q $W/$c.db --capacity $b --host-bw 0 -o $W/$c.$r.nohost.plan
		runs="ondemand:default"
		for i in $(seq $REPS); do runs="$runs plan:default plan:nohost"; done
		n=0
		for spec in $runs; do
			pol=${spec%%:*} v=${spec#*:} n=$((n + 1))
			tag=$c.$r.$n
			LD_LIBRARY_PATH=build/lib build/bin/umreplay -q --plan $W/$c.$r.$v.plan --policy $pol --gpu-budget $b \
				--max-managed $MAXM --stats $W/$tag.json -- $cmd >$W/$tag.out 2>$W/$tag.err
			rc=$?
			same=same; diff -q <(outputs $W/$c.plain) <(outputs $W/$tag.out) >/dev/null || same=DIFFERENT
			echo "$c W/B=$r $pol $v rc=$rc output=$same $(python3 tests/gpu/replay_table.py $W/$tag.json 2>/dev/null | grep -oE '\b(iter_ms|faults_per_iter|steady_unissued_blocks|steady_refault_blocks|htod_mb_per_iter|dtoh_mb_per_iter)=[0-9.]+' | tr '\n' ' ') $(sources $W/$tag.json)"
			cp $W/$tag.json $OUT/hostplace/ 2>/dev/null
		done
	done
done 2>&1 | tee $OUT/hostplace/log
# A command brings back at most 8 files: one archive.
(cd $OUT && tar czf hostplace.tgz hostplace && rm -rf hostplace)
