# Session 46: tests/gpu/run.sh on the build carried as build/, as
# session 44's script (bench/results/2026-11-26/s44/run-gpu-checks.sh),
# with the results tarred into one archive (a command brings back at most
# 8 files):
#   bash bench/results/2026-11-29/s46/run-gpu-checks.sh "record graphs demo"
#   bash bench/results/2026-11-29/s46/run-gpu-checks.sh replay
sections=$1
tag=${sections// /-}
bash bench/results/2026-11-26/s44/run-gpu-checks.sh "$sections"
cd $OUT && tar czf $tag.tgz $tag && rm -rf $tag
