# Session 44: tests/gpu/run.sh on the build carried as build/, in two
# device commands (the whole run nears the 600 s a command may take):
#   bash bench/results/2026-11-26/s44/run-gpu-checks.sh "record graphs demo"
#   bash bench/results/2026-11-26/s44/run-gpu-checks.sh replay
# As session 42's script, but the graphs section's trace is kept: it is
# tests/fixtures/h100_mlp_cuda_graph.db. KEEP names another trace to keep
# (session 52: KEEP=reset.db, tests/fixtures/h200_reset_probe.db).
sections=$1
tag=${sections// /-}
mkdir -p $OUT/$tag
export LD_LIBRARY_PATH=$PWD/build/lib
t0=$(date +%s)
SECTIONS="$sections" timeout 570 bash tests/gpu/run.sh $OUT/$tag/gpu > $OUT/$tag/gpu-checks.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s, build $(cat build/COMMIT)" >> $OUT/$tag/gpu-checks.log
tail -70 $OUT/$tag/gpu-checks.log
find $OUT/$tag/gpu -name '*.db' ! -name graph.db ! -name "${KEEP:-graph.db}" -delete
