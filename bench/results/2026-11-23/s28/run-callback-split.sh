# Session 28: where the program's thread spends its launch-callback time under plan at W/B 2 (6cef7e3's host stats:
# executor_ns, markers, discard orderings, gates, discard-and-prefetch calls), ViT-B/16 and ResNet-152, 2 repetitions.
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
for M in vit resnet152; do
	t0=$(date +%s)
	RATIOS=2 POLICIES=plan REPS=2 RUN_LIMIT_S=90 BUILD=build-lead timeout 280 bash bench/suite.sh $M $OUT/s grid > $OUT/s/$M-grid.log 2>&1
	echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/$M-grid.log
	tail -1 $OUT/s/$M-grid.log
	mkdir -p /tmp/st-$M && tar xzf $OUT/s/$M-stats.tar.gz -C /tmp/st-$M 2>/dev/null
	for f in /tmp/st-$M/*plan*.json; do python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); m=d['measured']; h=m['host']; dc=h['driver_calls']
ms=lambda ns: round(ns/1e6)
print(sys.argv[1].split('/')[-1], 'callbacks', ms(h['callback_ns']), 'executor', ms(h['executor_ns']), 'discard_prefetch', ms(dc['discard_prefetch']['ns']), 'discard', ms(dc['discard']['ns']),
      'markers', h['markers']['recorded'], ms(h['markers']['ns']), 'orderings', h['discard_waits'], ms(h['discard_wait_ns']), 'gates', h['prefetch_gates'], 'evict_worker', ms(dc['evict']['ns']), 'prefetch_worker', ms(dc['prefetch']['ns']))
" $f; done
done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
