# Session 30: DLRM's replay overhead when memory suffices (plan at B = 1.25 W, idle), 200-step runs,
# REPS interleaved triples: plain, e8a1e16's replayer (COMPARE=build-lead/old) and this build's;
# then the allocation path's cost per call from each run's stats.
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
COMPARE=build-lead/old OVERHEAD_VARIANTS=plan REPS=${REPS:-5} OVERHEAD_STEPS=${STEPS:-200} BUILD=build-lead \
	timeout ${LIMIT:-560} bash bench/suite.sh dlrm $OUT/s overhead > $OUT/s/dlrm.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" | tee -a $OUT/s/dlrm.log
python3 bench/pooled_steps.py $OUT/s/dlrm-outputs.tar.gz
mkdir -p $OUT/s/stats && tar xzf $OUT/s/dlrm-stats.tar.gz -C $OUT/s/stats
python3 - $OUT/s/stats <<'PY'
import glob, json, os, sys
print("| run | allocs | frees | allocator ms | ns per call |\n| --- | ---: | ---: | ---: | ---: |")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "**", "*.json"), recursive=True)):
    a = json.load(open(f))["measured"]["host"]["allocator"]
    n = a["allocs"] + a["frees"]
    print(f"| {os.path.basename(f)} | {a['allocs']} | {a['frees']} | {a['ns'] / 1e6:.1f} | {a['ns'] / max(n, 1):.0f} |")
PY
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
