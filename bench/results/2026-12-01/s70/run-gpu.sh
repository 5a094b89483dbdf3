#!/usr/bin/env bash
# Session 70 on the build carried as build/: DLRM's plan at W/B 2 against
# ideal, the runs taking their steps in turn (bench/overhead_lockstep.sh
# with RATIO=2, ROUNDS rounds of STEPS steps), then run-busy.sh (the steady
# step split into the kernels' time, the callbacks' and the allocator's).
#   ROUNDS=14 STEPS=200 bash bench/results/2026-12-01/s70/run-gpu.sh
RATIO=2 ROUNDS=${ROUNDS:-10} BUILD=build bash bench/overhead_lockstep.sh dlrm "$OUT/lockstep" "${STEPS:-200}"
echo "lockstep: rc $?"
bash bench/results/2026-12-01/s70/run-busy.sh
