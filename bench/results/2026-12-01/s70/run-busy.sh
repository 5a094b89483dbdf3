#!/usr/bin/env bash
# Session 70: DLRM's steady step under the plan and under ideal, each with
# --kernel-times, split into what the GPU's kernels took and what the
# replayer's callbacks and the allocator took on the program's thread.
# ideal gets the plan too, only so that its replay counts iterations (under
# ideal the plan places, moves and marks nothing). DLRM recorded for 5 steps
# and planned for B = W / 2, then replayed for 200 steps: plan, ideal,
# plan, ideal. Prints per run the medians of the steady iterations (5 on).
#   bash bench/results/2026-12-01/s70/run-busy.sh
source bench/models.sh
dlrm_half_plan /tmp/w 200 || exit 1
runs=("plan --gpu-budget $budget" "ideal --policy ideal")
for round in 1 2; do
	for r in "${runs[@]}"; do
		read -r name args <<<"$r"
		build/bin/umreplay -q --kernel-times --stats $OUT/$name-$round.json --plan /tmp/w/m.plan $args \
			--max-managed $maxm -- "${cmd[@]}" >$OUT/$name-$round.out 2>$OUT/$name-$round.err
		echo "$name-$round: rc $?"
		python3 - $OUT/$name-$round.json <<'PY'
import json, statistics as st, sys
d = json.load(open(sys.argv[1]))
it = d["measured"]["iterations"][5:]
ms = lambda k: st.median([i[k] / 1e6 for i in it if i.get(k) is not None])
print("  step %.3f  kernels busy %.3f  callbacks %.3f  allocator %.3f  faults %.1f ms/iter"
      % (st.median([x / 1e6 for x in d["iteration_ns"][5:]]), ms("kernel_busy_ns"), ms("callback_ns"),
         ms("allocator_ns"), st.median([i["fault_migrations"] for i in it])))
PY
	done
done
