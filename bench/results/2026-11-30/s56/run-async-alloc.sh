# Session 56: what a stream-ordered allocation and its free cost the
# program's thread (bench/async_alloc_rate: 20,000 pairs x 9 trials of
# 4 KiB, through cudaMallocAsync and through cudaMallocFromPoolAsync on the
# default pool) plain; under umrec; under an idle replay (the DLRM
# fixture's plan made for 80G, budget 8G, as session 31's launch_rate);
# under ondemand with the same budget. ROUNDS (4) rounds, each starting one
# variant later.
#   bash bench/results/2026-11-30/s56/run-async-alloc.sh
mkdir -p $OUT/a
export LD_LIBRARY_PATH=$PWD/build/lib
B=build/bin AR="build/bench/async_alloc_rate 20000 9 4096"
$B/umplan tests/fixtures/h100_dlrm.db --capacity 80G -q -o $OUT/a/fixture.plan || exit 1
run() { # VARIANT
	case $1 in
	plain) timeout 120 $AR ;;
	umrec) timeout 120 $B/umrec -q -o $OUT/a/rec.db --max-managed 8G -- $AR ;;
	idle) timeout 120 $B/umreplay -q --plan $OUT/a/fixture.plan --gpu-budget 8G --max-managed 8G -- $AR ;;
	ondemand) timeout 120 $B/umreplay -q --policy ondemand --plan $OUT/a/fixture.plan --gpu-budget 8G \
		--max-managed 8G -- $AR ;;
	esac
}
variants=(plain umrec idle ondemand)
for r in $(seq ${ROUNDS:-4}); do
	for i in "${!variants[@]}"; do
		v=${variants[$(( (i + r - 1) % ${#variants[@]} ))]}
		run $v > $OUT/a/$v.$r.log 2>&1
		echo "round $r $v rc=$? $(grep -E 'fastest|rror' $OUT/a/$v.$r.log | tr '\n' ' ')"
	done
done | tee $OUT/a/async_alloc_rate.txt
python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT api, count(*), count(stream_id) FROM alloc GROUP BY api").fetchall())' \
	$OUT/a/rec.db 2>&1 | tee $OUT/a/rec-apis.txt
python3 - $OUT/a/async_alloc_rate.txt <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    v = line.split()[2]
    for call, med in re.findall(r"(\w+) fastest [\d.]+ median ([\d.]+)", line):
        runs.setdefault(call, {}).setdefault(v, []).append(float(med))
print("| call | variant | runs | median of run medians, ns per pair | min-max | over plain |\n| --- | --- | ---: | ---: | --- | ---: |")
for call, by_v in runs.items():
    plain = statistics.median(by_v["plain"])
    for v, xs in by_v.items():
        med = statistics.median(xs)
        print(f"| {call} | {v} | {len(xs)} | {med:.0f} | {min(xs):.0f}-{max(xs):.0f} | {med - plain:+.0f} |")
PY
rm -f $OUT/a/rec.db
tar czf $OUT/async.tar.gz -C $OUT a && rm -rf $OUT/a
