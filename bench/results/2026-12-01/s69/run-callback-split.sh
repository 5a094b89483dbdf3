#!/usr/bin/env bash
# Session 69: where the plan replay's launch callbacks spend DLRM's
# program thread, split by timers (callback-split.patch on aad2833, built
# and carried as build/instr/; the patch prints the split at the exit):
# DLRM recorded for 5 steps and planned for B = W / 2 (bench/models.sh's
# record_and_plan), then replayed with the plan for 200 steps.
#   bash bench/results/2026-12-01/s69/run-callback-split.sh
source bench/models.sh
mkdir -p /tmp/w
read -ra rec < <(STEPS=5 model_command dlrm 4096)
record_and_plan build/bin /tmp/w 2 32G "${rec[@]}" || exit 1
maxm=$(((2 * w + (1 << 30) - 1) >> 30))G
echo "W=$w budget=$budget htod=$htod"
read -ra cmd < <(STEPS=200 model_command dlrm 4096)
for b in instr; do
	LD_LIBRARY_PATH=build/$b/lib build/$b/bin/umreplay -q --stats $OUT/$b.json --plan /tmp/w/m.plan \
		--gpu-budget $budget --max-managed $maxm -- "${cmd[@]}" >$OUT/$b.out 2>$OUT/$b.err
	echo "$b: rc $?"
	grep INS $OUT/$b.err
done
