#!/usr/bin/env bash
# Session 69: where the plan replay's launch callbacks spend DLRM's
# program thread, split by timers (callback-split.patch on aad2833, built
# and carried as build/instr/; the patch prints the split at the exit):
# DLRM recorded for 5 steps and planned for B = W / 2 (bench/models.sh's
# record_and_plan), then replayed for 200 steps with the plan and under
# ideal; with "kernel-times", the plan's replay once more (unpatched, with
# --kernel-times). The first run of session 69 had the plan's replay alone.
#   bash bench/results/2026-12-01/s69/run-callback-split.sh [kernel-times]
source bench/models.sh
dlrm_half_plan /tmp/w 200 || exit 1
# The plan's replay, then ideal's (no plan, no budget), then the plan's
# again with the unpatched build and --kernel-times, for the GPU's busy
# time per iteration.
runs=("plan --plan /tmp/w/m.plan --gpu-budget $budget" "ideal --policy ideal")
for r in "${runs[@]}"; do
	read -r name args <<<"$r"
	LD_LIBRARY_PATH=build/instr/lib build/instr/bin/umreplay -q --stats $OUT/$name.json $args \
		--max-managed $maxm -- "${cmd[@]}" >$OUT/$name.out 2>$OUT/$name.err
	echo "$name: rc $?"
	grep INS $OUT/$name.err
done
[ "${1:-}" = kernel-times ] || exit 0
build/bin/umreplay -q --kernel-times --stats $OUT/plan-kt.json --plan /tmp/w/m.plan --gpu-budget $budget \
	--max-managed $maxm -- "${cmd[@]}" >$OUT/plan-kt.out 2>$OUT/plan-kt.err
echo "plan --kernel-times: rc $?"
python3 -c 'import json,sys,statistics as st; it=json.load(open(sys.argv[1]))["measured"]["iterations"][5:]; d=json.load(open(sys.argv[1])); print("steady kernel busy ms", st.median([i["kernel_busy_ns"]/1e6 for i in it if i["kernel_busy_ns"] is not None]), "iteration median ms", d["iteration_median_ns"]/1e6)' $OUT/plan-kt.json
