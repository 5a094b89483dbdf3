# Session 78: train_sim's plan at W/B 1.5 and 2 under the session's start
# (bfea974, carried as carry/old) and its replayer (carried as build/),
# taking turns, on one plan made by build/'s umplan from one recording.
#   bash bench/results/2026-12-02/s78/ab-train-sim.sh REPS
set -u
reps=${1:-3}
W=$(mktemp -d)
SIM=build/examples/train_sim
args=(--layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
build/bin/umrec -q -o $W/sim.db --max-managed 8G -- $SIM "${args[@]}" >/dev/null 2>&1 || echo "umrec failed"
w=$(build/bin/umplan $W/sim.db --json -o $W/full.plan | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
echo "W = $w bytes"
for ratio in 1.5 2; do
	budget=$(python3 -c "print(int($w / $ratio))")
	build/bin/umplan $W/sim.db --capacity $budget -o $W/sim.$ratio.plan >/dev/null 2>&1
	for rep in $(seq $reps); do
		for b in old new; do
			root=build; [ $b = old ] && root=carry/old
			for policy in ondemand plan; do
				LD_LIBRARY_PATH=$PWD/$root/lib $root/bin/umreplay -q --plan $W/sim.$ratio.plan --policy $policy \
					--gpu-budget $budget --max-managed 8G --stats $W/s.json -- $SIM "${args[@]}" >/dev/null 2>&1
				echo "W/B=$ratio rep=$rep build=$b policy=$policy rc=$? $(python3 tests/gpu/replay_table.py $W/s.json | grep -oE '\b(iter_ms|faults_per_iter|steady_unissued_blocks)=[0-9.]+' | tr '\n' ' ')"
			done
		done
	done
done | tee $OUT/ab-train-sim.txt
