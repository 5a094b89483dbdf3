# Session 30: what keeping PyTorch's caching allocator would save an idle replay of DLRM. REPS interleaved
# triples of 200-step runs: plain; umreplay --policy plan at B = 1.25 W (idle: every tensor through the arena);
# the same with the cache kept (the child command unsets PYTORCH_NO_CUDA_MEMORY_CACHING, which PyTorch
# honours whatever its value, before starting Python).
mkdir -p $OUT/s/runs $OUT/s/stats
export LD_LIBRARY_PATH=$PWD/build-lead/lib PYTHONUNBUFFERED=1
B=build-lead/bin
. bench/models.sh
roomy_plan $B dlrm $OUT/s || exit 1
STEPS=200; read -ra cmd < <(model_command dlrm 4096)
for rep in $(seq ${REPS:-5}); do
	"${cmd[@]}" > $OUT/s/runs/overhead.b4096.r0.plain.$rep.out 2>/dev/null
	for v in uncached cachekept; do
		pre=(); [ $v = cachekept ] && pre=(env -u PYTORCH_NO_CUDA_MEMORY_CACHING)
		$B/umreplay -q --plan $OUT/s/dlrm.plan --policy plan --gpu-budget $budget --max-managed $maxm \
			--stats $OUT/s/stats/$v.$rep.json -- "${pre[@]}" "${cmd[@]}" > $OUT/s/runs/overhead.b4096.r0.8.plan.$rep.$v.out 2>/dev/null
		echo "rep $rep $v rc=$?"
	done
done
python3 bench/pooled_steps.py $OUT/s/runs
python3 - $OUT/s/stats <<'PY'
import glob, json, os, sys
print("| run | allocs | frees | allocator ms | idle throughout | peak residency MB |\n| --- | ---: | ---: | ---: | --- | ---: |")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    d = json.load(open(f)); a = d["measured"]["host"]["allocator"]; e = d["engine"]
    print(f"| {os.path.basename(f)} | {a['allocs']} | {a['frees']} | {a['ns'] / 1e6:.1f} | "
          f"{e['started_idle'] and not e['woke_at_alloc']} | {d['measured']['peak_residency_bytes'] / 1e6:.0f} |")
PY
rm -f $OUT/s/dlrm.db
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
