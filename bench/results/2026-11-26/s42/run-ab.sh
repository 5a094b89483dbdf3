# Session 42: this session's replayer (build/, 8f843fd) beside the session
# start's (build/old/, 5c0c082 = 1296f65's C code and the fence probe fix),
# the same traces and plans (recorded and planned with build/), plan policy,
# two rounds with the order swapped:
#   bash bench/results/2026-11-26/s42/run-ab.sh
W=/tmp/ab; rm -rf $W; mkdir -p $W $OUT/ab
SIM=(build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
MLP=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
build/bin/umrec -q -o $W/sim.db --max-managed 8G -- "${SIM[@]}" >/dev/null 2>&1
build/bin/umrec -q -o $W/mlp.db --max-managed 8G -- "${MLP[@]}" >/dev/null 2>&1
for c in sim mlp; do
	w=$(build/bin/umplan $W/$c.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	for r in 1.5 2 3; do
		b=$(python3 -c "print(int($w / $r))")
		build/bin/umplan -q $W/$c.db --capacity $b -o $W/$c.$r.plan
		echo "$c $r $b" >> $W/cases
	done
done
for round in 1 2; do
	builds="build build/old"; [ $round = 2 ] && builds="build/old build"
	while read -r c r b; do
		[ $c = sim ] && cmd=("${SIM[@]}") || cmd=("${MLP[@]}")
		for bd in $builds; do
			tag=$c.$r.$(basename $bd).$round
			$bd/bin/umreplay -q --plan $W/$c.$r.plan --gpu-budget $b --max-managed 8G --stats $OUT/ab/$tag.json \
				-- "${cmd[@]}" >$W/$tag.out 2>&1
			echo "$tag rc=$? $(python3 tests/gpu/replay_table.py $OUT/ab/$tag.json | grep -oE '\b(iter_ms|faults_per_iter)=[0-9.]+' | tr '\n' ' ')"
		done
	done < $W/cases
done | tee $OUT/ab/summary.txt
