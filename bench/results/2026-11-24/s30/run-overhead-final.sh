# Session 30: the replay overhead when memory suffices (plan at B = 1.25 W, idle), M (default dlrm) with
# STEPS (200)-step runs, REPS (5) interleaved triples: plain, e8a1e16's replayer (COMPARE, default build-lead/old:
# every tensor through the arena; COMPARE= leaves it out) and this build's (PyTorch's cache kept); then each
# replay's allocator calls and whether it stayed idle, from its stats.
M=${M:-dlrm}
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
t0=$(date +%s)
COMPARE=${COMPARE-build-lead/old} OVERHEAD_VARIANTS=plan REPS=${REPS:-5} OVERHEAD_STEPS=${STEPS:-200} BUILD=build-lead \
	timeout ${LIMIT:-560} bash bench/suite.sh $M $OUT/s overhead > $OUT/s/$M.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" | tee -a $OUT/s/$M.log
python3 bench/pooled_steps.py $OUT/s/$M-outputs.tar.gz
mkdir -p $OUT/s/stats && tar xzf $OUT/s/$M-stats.tar.gz -C $OUT/s/stats
python3 - $OUT/s/stats <<'PY'
import glob, json, os, sys
print("| run | allocs | frees | allocator ms | idle throughout | peak residency MB | budget MB |\n| --- | ---: | ---: | ---: | --- | ---: | ---: |")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "**", "*.json"), recursive=True)):
    d = json.load(open(f)); a = d["measured"]["host"]["allocator"]; e = d["engine"]
    print(f"| {os.path.basename(f)} | {a['allocs']} | {a['frees']} | {a['ns'] / 1e6:.1f} | "
          f"{e['started_idle'] and not e['woke_at_alloc']} | {d['measured']['peak_residency_bytes'] / 1e6:.0f} | "
          f"{d['measured']['budget_bytes'] / 1e6:.0f} |")
PY
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
