# Session 33, offline (no GPU): umreplay --dry-run with the plan's evictions
# skipping blocks that other live tensors share (noshared.patch, an
# experiment gated by NOSHARED=1), beside the same build without it. Prints
# per trace and W/B the last completed iteration's evicted MiB, budget
# evictions and refault blocks (with their two slices). Run from the
# repository root; builds the patched tree in a worktree under /tmp.
set -euo pipefail
here=$PWD
D=bench/results/2026-11-25/s33
wt=/tmp/umkit-noshared
git worktree remove --force $wt 2>/dev/null || true
git worktree add -q --detach $wt HEAD
cd $wt && git apply $here/$D/noshared.patch && make -s -j2 tools >/dev/null
gunzip -c $here/$D/traces/resnet152.db.gz > /tmp/resnet152.db
for f in /tmp/resnet152.db $here/tests/fixtures/h100_{bert_large,vit_varying_ids,gpt2_small,mlp,train_sim}.db; do
	w=$(build/bin/umplan $f --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	for r in 1.5 2 3; do
		b=$(python3 -c "print(int($w / $r))")
		build/bin/umplan $f --capacity $b -q -o /tmp/noshared.plan
		last() { build/bin/umreplay --dry-run $f --plan /tmp/noshared.plan --gpu-budget $b |
			awk '$1 ~ /^[0-9]+$/' | tail -1 | awk '{print "evict_MiB", $7, "budget_evictions", $10, "refaults", $11, "(budget", $12 ", shared", $13 ")"}'; }
		echo "$(basename $f .db) W/B $r: $(last) -> NOSHARED: $(NOSHARED=1 last)"
	done
done
cd $here && git worktree remove --force $wt
