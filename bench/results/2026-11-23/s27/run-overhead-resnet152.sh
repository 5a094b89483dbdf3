# Session 27: where ResNet-152's cache-off cost goes: bench/suite.sh's overhead part with measured.host.allocator.
M=${M:-resnet152}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
REPS=${REPS:-3} OVERHEAD_STEPS=${STEPS:-30} BUILD=build-lead bash bench/suite.sh $M $OUT/s overhead > $OUT/s/$M-overhead.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/$M-overhead.log
tail -3 $OUT/s/$M-overhead.log
mkdir -p /tmp/st && tar xzf $OUT/s/$M-stats.tar.gz -C /tmp/st
for f in /tmp/st/*.json; do python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); h=d['measured']['host']; a=h['allocator']
print(sys.argv[1].split('/')[-1], 'allocs',a['allocs'],'ms',round(a['ns']/1e6,1),'waits',a['fence_waits'],'wait_ms',round(a['fence_wait_ns']/1e6,1),'one_stream',a['one_stream'],'cb_ms',round(h['callback_ns']/1e6,1),'wall_ms',round(d['measured']['wall_ns']/1e6))
" $f; done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
