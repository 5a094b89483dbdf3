#!/usr/bin/env bash
# Session 68 on the GPU, on the build carried as build/: with "dlrm",
# DLRM's plan at W/B 2 against ideal, the runs taking their steps in turn
# (bench/overhead_lockstep.sh with RATIO=2, ROUNDS rounds of STEPS steps);
# then the GPU checks' sections given (tests/gpu/run.sh, through session
# 46's wrapper, tarred).
#   bash bench/results/2026-11-30/s68/run-gpu.sh dlrm "record devices"
if [ "$1" = dlrm ]; then
	RATIO=2 ROUNDS=${ROUNDS:-10} BUILD=build bash bench/overhead_lockstep.sh dlrm "$OUT/lockstep" "${STEPS:-200}"
	echo "lockstep: rc $?"
	shift
fi
[ -n "${1:-}" ] && bash bench/results/2026-11-29/s46/run-gpu-checks.sh "$1"
