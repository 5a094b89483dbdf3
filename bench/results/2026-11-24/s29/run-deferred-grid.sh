# Session 29: deferred migrations with discards on their own stream (9625493) beside 36ffe0f (built into build-lead/old) at W/B 2, plan, ViT-B/16 and ResNet-152: bench/suite.sh's grid part.
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
for M in ${MODELS:-vit resnet152}; do
	t0=$(date +%s)
	RATIOS=2 POLICIES=plan REPS=${REPS:-2} RUN_LIMIT_S=90 COMPARE=build-lead/old BUILD=build-lead timeout ${LIMIT:-270} bash bench/suite.sh $M $OUT/s grid > $OUT/s/$M-grid.log 2>&1
	echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/$M-grid.log
	tail -1 $OUT/s/$M-grid.log
	mkdir -p /tmp/st-$M && tar xzf $OUT/s/$M-stats.tar.gz -C /tmp/st-$M 2>/dev/null
	for f in /tmp/st-$M/*plan*.json; do python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); m=d['measured']; h=m['host']; e=d['engine']
it=sorted(d['iteration_ns'][1:]) if d.get('iteration_ns') else []
print(sys.argv[1].split('/')[-1], 'iter_ms', round(it[len(it)//2]/1e6,1) if it else None, 'faults', m['fault_migrations'], 'gated', e.get('gated_launches'), 'gates', h.get('prefetch_gates'), 'after_mig', h.get('discards_after_migrations'), 'callback_ms', h['callback_ns']//1000000, 'htod_MB', m['htod_bytes']>>20, 'dtoh_MB', m['dtoh_bytes']>>20)
" $f; done
done
python3 bench/suite_report.py $OUT/s 2>&1 | head -40
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
