#!/usr/bin/env bash
# Session 67 on the GPU, on the build carried as build/: the GPU checks'
# sections given (tests/gpu/run.sh, through session 46's wrapper, tarred),
# then, with "fixture", the MLP recorded as tests/fixtures/h200_mlp_past_shim.db
# is (its cuBLAS workspaces made past umkit, now with the most held at once).
#   bash bench/results/2026-11-30/s67/run-gpu.sh "record cache" fixture
sections=$1
[ -n "$sections" ] && bash bench/results/2026-11-29/s46/run-gpu-checks.sh "$sections"
if [ "$2" = fixture ]; then
	build/bin/umrec -o "$OUT/h200_mlp_past_shim.db" --max-managed 8G -- \
		python3 examples/pytorch/mlp.py --steps 5 >"$OUT/fixture.out" 2>&1
	echo "fixture: rc $?"
	tail -n 12 "$OUT/fixture.out"
fi
