# Session 89: the arena's fences ordered on the GPU (common/cuda/fence_order.h)
# against the host's wait for them. build/ is this session's build;
# build-old/ is 6367448 (session 88's last), whose allocations wait on the
# host. Session 87's run-nofence.sh with that build beside: recording and
# planning use build/, the two builds' replays take turns; ViT-B/16 and
# ResNet-152 (whose convolutions use a second stream, so their allocations
# met pending fences) at W/B 2 under plan, two rounds, with ideal beside;
# the suite checks every output against the plain run's. Run from the
# repository root on the GPU machine:
#   OUT=$OUT MODEL_LIMIT_S=220 bash bench/results/2026-12-03/s89/run-order.sh
COMPARE=build-old ARCHIVE=order exec bash bench/results/2026-12-03/s87/run-nofence.sh
