# Session 35: tests/gpu/run.sh on the final build carried as build/:
# session 33's script, unchanged.
exec bash bench/results/2026-11-25/s33/run-gpu-checks-final.sh
