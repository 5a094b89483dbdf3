# Session 56: where an idle replay's cost per stream-ordered pair goes:
# run-async-alloc.sh's idle and ondemand variants with --stats, whose
# allocator.ns is the arena's own time (common/cuda/um_alloc.c: serve and
# release, the engine's hooks included); the rest of the difference to
# plain is the shim's checks before it. 3 rounds.
#   bash bench/results/2026-11-30/s56/run-async-split.sh
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
B=build/bin AR="build/bench/async_alloc_rate 20000 9 4096"
$B/umplan tests/fixtures/h100_dlrm.db --capacity 80G -q -o $OUT/s/fixture.plan || exit 1
for r in 1 2 3; do
	timeout 120 $AR > $OUT/s/plain.$r.log 2>&1
	timeout 120 $B/umreplay -q --stats $OUT/s/idle.$r.json --plan $OUT/s/fixture.plan --gpu-budget 8G \
		--max-managed 8G -- $AR > $OUT/s/idle.$r.log 2>&1
	timeout 120 $B/umreplay -q --stats $OUT/s/ondemand.$r.json --policy ondemand --plan $OUT/s/fixture.plan \
		--gpu-budget 8G --max-managed 8G -- $AR > $OUT/s/ondemand.$r.log 2>&1
done
python3 - $OUT/s <<'PY'
import glob, json, re, sys
d = sys.argv[1]
print("| variant | round | cudaMallocAsync ns/pair | cudaMallocFromPoolAsync ns/pair | arena calls | arena ns per call |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for v in ("plain", "idle", "ondemand"):
    for r in (1, 2, 3):
        meds = re.findall(r"(\w+) fastest [\d.]+ median ([\d.]+)", open(f"{d}/{v}.{r}.log").read())
        row = [v, str(r)] + [m for _, m in meds]
        if v != "plain":
            a = json.load(open(f"{d}/{v}.{r}.json"))["measured"]["host"]["allocator"]
            calls = a["allocs"] + a["frees"]
            row += [str(calls), f"{a['ns'] / calls:.0f}"]
        else:
            row += ["", ""]
        print("| " + " | ".join(row) + " |")
PY
tar czf $OUT/split.tar.gz -C $OUT s && rm -rf $OUT/s
