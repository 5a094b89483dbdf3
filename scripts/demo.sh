#!/usr/bin/env bash
# make demo: the whole pipeline on examples/. With a GPU: record the CUDA C
# example, plan it for half its working set, and replay it under that budget
# with on-demand paging and with the plan. Without one: plan the bundled
# real traces (recorded on an H100, unpacked by make fixtures into
# BUILD/fixtures) for half their working set and show the report and the
# plan.
set -euo pipefail
build=${1:-build}
bin=$build/bin
out=${DEMO_DIR:-$build/demo}
mkdir -p "$out"

has_gpu() {
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1
}

# Half the trace's working set (its live peak): W/B = 2.
half_working_set() {
	$bin/umplan "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"] // 2)'
}

if has_gpu && [ -x "$build/examples/train_sim" ]; then
	echo "== GPU found: record, plan and replay examples/train_sim at W/B = 2"
	sim="$build/examples/train_sim --layers 16 --per-layer-update --iters 8 --nvtx"
	$bin/umrec -o "$out/sim.db" --max-managed 8G -- $sim
	budget=$(half_working_set "$out/sim.db")
	$bin/umplan "$out/sim.db" -o "$out/sim.plan" --capacity "$budget" --report
	for policy in ondemand plan; do
		echo "-- $policy under a budget of $budget bytes"
		$bin/umreplay --plan "$out/sim.plan" --policy $policy --max-managed 8G --gpu-budget "$budget" \
			--stats "$out/sim.$policy.json" -- $sim
	done
	echo "replay statistics: $out/sim.*.json"
else
	echo "== no GPU here: planning the real traces bundled in tests/fixtures/ ($build/fixtures)"
	for t in "$build"/fixtures/*.db; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .db)
		echo
		echo "-- $t"
		$bin/umplan "$t" -o "$out/$name.plan" --capacity "$(half_working_set "$t")" --report
		# The whole dump goes to a file: piped into head, a large plan's
		# dump would die of SIGPIPE and, under pipefail, fail the demo.
		$bin/umplan --dump "$out/$name.plan" >"$out/$name.json"
		head -c 600 "$out/$name.json"
		echo " ... (the whole plan: $out/$name.json)"
	done
fi
echo
echo "demo output is in $out/"
