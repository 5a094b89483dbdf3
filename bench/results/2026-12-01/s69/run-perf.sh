#!/usr/bin/env bash
# Session 69: where the plan replay's launch callbacks spend DLRM's
# program thread, sampled in place with perf (when the machine has it):
# DLRM recorded for 5 steps and planned for B = W / 2 (bench/models.sh's
# record_and_plan), then the plan replayed for 200 steps under
# perf record, and perf's report of libumreplay.so's symbols.
#   bash bench/results/2026-12-01/s69/run-perf.sh
source bench/models.sh
mkdir -p /tmp/w
read -ra rec < <(STEPS=5 model_command dlrm 4096)
record_and_plan build/bin /tmp/w 2 32G "${rec[@]}" || exit 1
maxm=$(((2 * w + (1 << 30) - 1) >> 30))G
echo "W=$w budget=$budget htod=$htod"
read -ra cmd < <(STEPS=200 model_command dlrm 4096)
command -v perf || { echo "no perf here"; exit 1; }
cat /proc/sys/kernel/perf_event_paranoid
perf record -F 4999 -g -o /tmp/w/perf.data -- build/bin/umreplay -q --stats /tmp/w/plan.json --plan /tmp/w/m.plan \
	--gpu-budget $budget --max-managed $maxm -- "${cmd[@]}" >/tmp/w/replay.out 2>/tmp/w/replay.err
echo "replay: rc $?"; tail -2 /tmp/w/replay.err
perf report -i /tmp/w/perf.data --no-children --stdio --sort dso 2>/dev/null | grep % | head -15 >$OUT/dso.txt
perf report -i /tmp/w/perf.data --no-children --stdio --sort dso,sym -g none 2>/dev/null | grep % | head -300 >$OUT/syms.txt
grep -E 'libumreplay|libcupti' $OUT/syms.txt | head -60 >$OUT/umreplay-syms.txt
perf report -i /tmp/w/perf.data --children --stdio --sort dso,sym -g none 2>/dev/null | grep % | head -120 >$OUT/children.txt
cp /tmp/w/replay.err /tmp/w/plan.json $OUT/
cat $OUT/dso.txt $OUT/umreplay-syms.txt | head -70
