#!/usr/bin/env bash
# make demo: the whole pipeline on examples/. With a GPU: record the CUDA C
# example, plan it, replay it under a budget. Without one: plan the bundled
# real traces (recorded on an H100) and show the report.
set -euo pipefail
build=${1:-build}
bin=$build/bin
out=${DEMO_DIR:-$build/demo}
mkdir -p "$out"

has_gpu() {
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1
}

if has_gpu && [ -x "$build/examples/train_sim" ]; then
	echo "== GPU found: record, plan and replay examples/train_sim"
	sim="$build/examples/train_sim --iters 6 --nvtx"
	$bin/umrec -o "$out/sim.db" --max-managed 8G -- $sim
	$bin/umplan "$out/sim.db" -o "$out/sim.plan" --report
	if [ -x "$bin/umreplay" ]; then
		$bin/umreplay --plan "$out/sim.plan" --max-managed 8G --gpu-budget 256M \
			--stats "$out/sim.stats.json" -- $sim
		echo "replay statistics: $out/sim.stats.json"
	fi
else
	echo "== no GPU here: planning the real traces bundled in tests/fixtures/"
	for t in tests/fixtures/*.db; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .db)
		echo
		echo "-- $t"
		$bin/umplan "$t" -o "$out/$name.plan" --report
		$bin/umplan --dump "$out/$name.plan" | head -c 600
		echo " ..."
	done
fi
echo
echo "demo output is in $out/"
