# Session 53, the first version of ring.sh (run on 4ba13e9): the reset
# probe's ring of four 64 MiB buffers (its first phase, 80 launches of one
# kernel, buffer i % 4 at launch i), planned for 160 MiB by the umplan
# before the ring fix (3881a60, carried as build/bench/umplan-3881a60: a
# period of one launch) and after it (a period of four), each replayed
# under plan, beside ondemand, in three interleaved rounds at
# --gpu-budget 160M (run_wall_ms: the whole probe, both phases):
#   bash bench/results/2026-11-29/s53/ring_reset_probe.sh
export LD_LIBRARY_PATH=$PWD/build/lib
B=build/bin RP=build/gpu-probes/reset_probe W=$(mktemp -d)
MAXM=2G
$B/umrec -q -o $W/ring.db --max-managed $MAXM -- $RP middle >/dev/null 2>&1 || echo "umrec failed"
build/bench/umplan-3881a60 -q $W/ring.db --capacity 160M -o $W/before.plan
$B/umplan -q $W/ring.db --capacity 160M -o $W/after.plan
$RP middle | grep -E '^(phase|free after)' >$W/plain.sums
echo "round policy plan sums_as_plain matched prefetch_calls evict_calls fault_migrations htod_MB dtoh_MB run_wall_ms"
for r in 1 2 3; do
	for run in "plan before" "plan after" "ondemand after"; do
		set -- $run
		$B/umreplay -q --plan $W/$2.plan --policy $1 --gpu-budget 160M --max-managed $MAXM \
			--stats $W/s.json -- $RP middle >$W/out 2>&1
		same=$(diff <(grep -E '^(phase|free after)' $W/out) $W/plain.sums >/dev/null && echo yes || echo NO)
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); e, m = d["engine"], d["measured"]
print(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], e["matched"], e["ops"]["prefetch"]["calls"],
      e["ops"]["evict"]["calls"], m["fault_migrations"], round(m["htod_bytes"] / 2**20), round(m["dtoh_bytes"] / 2**20),
      round(m["wall_ns"] / 1e6, 1))' $W/s.json $r $1 $2 $same
	done
done
