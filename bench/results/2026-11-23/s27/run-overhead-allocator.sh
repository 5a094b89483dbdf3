# Session 27: replay's overhead when memory suffices with the allocator's cost measured (bench/suite.sh's overhead part), ResNet-152 and DLRM.
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
for M in ${MODELS:-resnet152 dlrm}; do
	t0=$(date +%s)
	REPS=${REPS:-3} OVERHEAD_STEPS=30 BUILD=build-lead timeout ${LIMIT:-280} bash bench/suite.sh $M $OUT/s overhead > $OUT/s/$M-overhead.log 2>&1
	echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/$M-overhead.log
	tail -1 $OUT/s/$M-overhead.log
	mkdir -p /tmp/st-$M && tar xzf $OUT/s/$M-stats.tar.gz -C /tmp/st-$M
	for f in /tmp/st-$M/*.json; do python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); m=d['measured']; h=m['host']; a=h['allocator']; its=m['iterations'][1:]
per=sorted(i['allocator_ns'] for i in its); cb=sorted(i['callback_ns'] for i in its)
print(sys.argv[1].split('/')[-1], 'allocs',a['allocs'],'ms',round(a['ns']/1e6,1),'one_stream',a['one_stream'],'iters',len(its),'alloc_ms/iter', round(per[len(per)//2]/1e6,2) if per else None, 'cb_ms/iter', round(cb[len(cb)//2]/1e6,2) if cb else None)
" $f; done
done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
