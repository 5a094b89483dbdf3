# Session 26: where the cost of replay goes when memory suffices, without following launches.
# Variants (3 interleaved reps, 30 steps): plain; follow (umreplay ideal, no plan, cache off: today's);
# nofollow (diag build: launch callbacks not enabled; arena, cache off); nofollow-cached (cache kept).
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib PYTHONUNBUFFERED=1 STEPS=30
. bench/models.sh
nvidia-smi --query-gpu=memory.free --format=csv,noheader
for rep in 1 2 3; do
 for m in dlrm resnet152; do
  read -ra cmd < <(model_command $m $(default_batch $m))
  timeout 120 "${cmd[@]}" > $OUT/s/$m.plain.$rep.out 2>&1
  timeout 120 build-lead/bin/umreplay -q --policy ideal --max-managed 16G -- "${cmd[@]}" > $OUT/s/$m.follow.$rep.out 2>&1
  DIAG_NOFOLLOW=1 timeout 120 build-lead/diag/bin/umreplay -q --policy ideal --max-managed 16G -- "${cmd[@]}" > $OUT/s/$m.nofollow.$rep.out 2>&1
  DIAG_NOFOLLOW=1 PYTORCH_NO_CUDA_MEMORY_CACHING=0 timeout 120 build-lead/diag/bin/umreplay -q --policy ideal --max-managed 16G -- "${cmd[@]}" > $OUT/s/$m.nofollow-cached.$rep.out 2>&1
  echo "$m rep $rep done $(date +%s)"
 done
done
python3 - $OUT/s <<'PY'
import glob, os, statistics as st, sys, collections
d = sys.argv[1]
rows = collections.defaultdict(list); steps = collections.defaultdict(list); ck = collections.defaultdict(set)
for f in sorted(glob.glob(d + "/*.out")):
    m, v, rep, _ = os.path.basename(f).split(".")
    for line in open(f):
        if line.startswith("time_per_step_ms"): rows[m, v].append(float(line.split()[1]))
        if line.startswith("per_step_ms"): steps[m, v] += [float(x) for x in line.split()[1].split(",")[5:]]
        if line.startswith("checksum"): ck[m].add(line.split()[1])
print("model variant runs mean-step-ms(each run) pooled-p10 pooled-median vs-plain(median)")
for (m, v), xs in sorted(rows.items()):
    s = sorted(steps[m, v]); p = sorted(steps[m, "plain"])
    print(m, v, len(xs), " ".join("%.2f" % x for x in xs), "%.2f" % s[len(s) // 10], "%.2f" % st.median(s),
          "%+.1f%%" % (100 * (st.median(s) / st.median(p) - 1)))
print("checksums", {m: len(c) for m, c in ck.items()})
PY
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
