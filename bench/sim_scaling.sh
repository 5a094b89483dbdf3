#!/usr/bin/env bash
# bench/sim_scaling.sh: how umplan --simulate scales with the working set,
# on fixtures made large: BERT-large with every allocation (sizes and
# addresses) 16 times larger (about 50 GiB live), and train_sim with one
# tensor grown to 64 GiB (a kernel larger than any capacity simulated).
# Times `umplan --simulate --json` (the default ratios) with
# /usr/bin/time for this build and, given a second build's bin/ folder,
# for that one too, and says whether the two printed the same JSON.
#
# Usage: bench/sim_scaling.sh [BUILD [OTHER_BUILD]]   (default: build)
set -euo pipefail
build=${1:-build} other=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make -s BUILD="$build" fixtures
cp "$build"/fixtures/h100_bert_large.db "$work/bert16.db"
sqlite3 "$work/bert16.db" "UPDATE alloc SET size = reserved * 16, reserved = reserved * 16, address = address * 16"
cp "$build"/fixtures/h100_train_sim.db "$work/sim64g.db"
sqlite3 "$work/sim64g.db" "UPDATE alloc SET size = 1 << 36, reserved = 1 << 36
	WHERE id = (SELECT alloc_id FROM kernel_arg LIMIT 1)"
for trace in bert16 sim64g; do
	i=0
	for b in "$build" ${other:+"$other"}; do
		i=$((i + 1))
		/usr/bin/time -f "$trace $b: %e s wall, %U + %S s, %M KiB max RSS" \
			"$b/bin/umplan" -q "$work/$trace.db" --simulate --json >"$work/$trace.$i.json"
	done
	if [ -n "$other" ]; then
		if cmp -s "$work/$trace.1.json" "$work/$trace.2.json"; then
			echo "$trace: the same JSON from both builds"
		else
			echo "$trace: the builds' JSON differ"
		fi
	fi
done
