# Session 25: the GPU checks on 0f51307 (one link in the scheduler and the simulator; um_costs.py
# with duplex_ms and evict_states_ms), keeping the traces for the simulator's validation.
mkdir -p $OUT/s
t0=$(date +%s)
BUILD=build-lead bash tests/gpu/run.sh $OUT/s > $OUT/s/gpu-checks.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/gpu-checks.log
tail -40 $OUT/s/gpu-checks.log
ls -la $OUT/s | head -30
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
