#!/usr/bin/env bash
# Session 70: session 69's split of the launch callback (callback-split.patch)
# with, per part, how many calls took over 2 and over 20 µs and their time,
# how often the engine's lock was found held, and for the engine's calls,
# the launch exits and the frees over 20 µs what the thread's rusage counted
# during them (callback-hist.patch, built
# and carried as build/instr/). DLRM recorded for 5 steps and planned for
# B = W / 2, then replayed for 200 steps: plan, ideal, plan, ideal.
#   bash bench/results/2026-12-01/s70/run-callback-hist.sh
echo "numa_balancing $(cat /proc/sys/kernel/numa_balancing 2>&1) thp $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>&1) cpus $(nproc)"
source bench/models.sh
dlrm_half_plan /tmp/w 200 || exit 1
runs=("plan --plan /tmp/w/m.plan --gpu-budget $budget" "ideal --policy ideal")
for round in 1 2; do
	for r in "${runs[@]}"; do
		read -r name args <<<"$r"
		LD_LIBRARY_PATH=build/instr/lib build/instr/bin/umreplay -q --stats $OUT/$name-$round.json $args \
			--max-managed $maxm -- "${cmd[@]}" >$OUT/$name-$round.out 2>$OUT/$name-$round.err
		echo "$name-$round: rc $?"
		grep -E "INS|HIST|LOCK|RU" $OUT/$name-$round.err
	done
done
