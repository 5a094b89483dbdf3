# Session 53: tests/gpu/ring_probe.cu, a ring of four 64 MiB input
# buffers read in turn into a 64 MiB accumulator (80 launches of one
# kernel), each word read READS times: 1 (an elementwise pass) and 16 (as
# a GEMM re-reads its operands). Planned for 208 MiB (the accumulator and
# two buffers) by the umplan before the ring fix (3881a60, carried as
# build/bench/umplan-3881a60: a period of one launch, three buffers idle)
# and after it (a period of four, with ring keys), each replayed under
# plan, beside ondemand, in three interleaved rounds at --gpu-budget 208M:
#   bash bench/results/2026-11-29/s53/ring.sh
export LD_LIBRARY_PATH=$PWD/build/lib
B=build/bin RP=build/gpu-probes/ring_probe W=$(mktemp -d) MAXM=2G
echo "reads round policy umplan sum_ok placed ring_moves prefetch_calls evict_calls on_host fault_migrations htod_MiB dtoh_MiB loop_ms"
for reads in 1 16; do
	$B/umrec -q -o $W/ring$reads.db --max-managed $MAXM -- $RP $reads >/dev/null 2>&1 || echo "umrec failed"
	build/bench/umplan-3881a60 -q $W/ring$reads.db --capacity 208M -o $W/before$reads.plan
	$B/umplan -q $W/ring$reads.db --capacity 208M -o $W/after$reads.plan
	$RP $reads | grep '^ring sum' >$W/plain$reads.sum
	for r in 1 2 3; do
		for run in "plan before" "plan after" "ondemand after"; do
			set -- $run
			$B/umreplay -q --plan $W/$2$reads.plan --policy $1 --gpu-budget 208M --max-managed $MAXM \
				--stats $W/s.json -- $RP $reads >$W/out 2>&1
			ok=$(diff <(grep '^ring sum' $W/out) $W/plain$reads.sum >/dev/null && echo yes || echo NO)
			ms=$(sed -n 's/^ring: 80 launches in \([0-9.]*\) ms$/\1/p' $W/out)
			python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); e, m = d["engine"], d["measured"]
print(*sys.argv[2:7], e["matched"] + e["resynced"], e.get("ring_moves", 0), e["ops"]["prefetch"]["calls"],
      e["ops"]["evict"]["calls"], e["placed_on_host"], m["fault_migrations"], round(m["htod_bytes"] / 2**20),
      round(m["dtoh_bytes"] / 2**20), sys.argv[7])' $W/s.json $reads $r $1 $2 $ok "${ms:-?}"
		done
	done
done
