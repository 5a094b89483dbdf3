# Session 24, command 7: host placement without GEMM operands (e1f6e4f) against the plans of the
# build before it (host placement free to take weights), both replayed by e1f6e4f: train_sim and
# the PyTorch MLP (tests/gpu/run.sh's cases), W/B 1.5, 2 and 3, ideal beside them, 3 interleaved
# repetitions.
mkdir -p $OUT/s
t0=$(date +%s)
B=build-lead/bin; MAXM=8G
declare -A CMD
CMD[sim]="build-lead/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx"
CMD[mlp]="python3 examples/pytorch/mlp.py --steps 12 --nvtx"
for c in sim mlp; do
	$B/umrec -q -o $OUT/s/$c.db --max-managed $MAXM -- ${CMD[$c]} > /dev/null 2>&1
	w=$($B/umplan $OUT/s/$c.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	echo "$c W $w" >> $OUT/s/times.log
	for r in 1.5 2 3; do
		b=$(python3 -c "print(int($w / $r))")
		LD_LIBRARY_PATH=build-lead/lib build-lead/umplan-prev $OUT/s/$c.db --capacity $b -q -o $OUT/s/$c.prev$r.plan
		$B/umplan $OUT/s/$c.db --capacity $b -q -o $OUT/s/$c.new$r.plan
		$B/umplan $OUT/s/$c.db --capacity $b --report > $OUT/s/$c.new$r-report.txt
		LD_LIBRARY_PATH=build-lead/lib build-lead/umplan-prev $OUT/s/$c.db --capacity $b --report > $OUT/s/$c.prev$r-report.txt
		echo "$b" > $OUT/s/$c.budget$r
	done
done
for rep in 1 2 3; do
	for c in sim mlp; do
		$B/umreplay -q --plan $OUT/s/$c.new2.plan --policy ideal --max-managed $MAXM --stats $OUT/s/$c.ideal.$rep.json \
			-- ${CMD[$c]} > $OUT/s/$c.ideal.$rep.out 2>&1
		for r in 1.5 2 3; do for v in prev new; do
			timeout 120 $B/umreplay -q --plan $OUT/s/$c.$v$r.plan --policy plan --gpu-budget $(cat $OUT/s/$c.budget$r) \
				--max-managed $MAXM --stats $OUT/s/$c.$v$r.$rep.json -- ${CMD[$c]} > $OUT/s/$c.$v$r.$rep.out 2>&1
			echo "$c $v $r $rep rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
		done; done
	done
done
rm -f $OUT/s/*.db
for f in $OUT/s/*.json; do echo "$(basename $f) $(python3 tests/gpu/replay_table.py $f 2>/dev/null | grep -oE '(iter_ms|faults_per_iter|htod_mb_per_iter|dtoh_mb_per_iter)=[0-9.]+' | tr '\n' ' ')"; done > $OUT/s/summary.txt
tail -3 $OUT/s/times.log; cat $OUT/s/summary.txt | sort | head -80
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
