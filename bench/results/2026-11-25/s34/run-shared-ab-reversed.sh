# Session 34: the shared-block A/B with the builds' order reversed: 5d5a102
# (build-old/) first in each round, 2a6b1eb (build-new/) second; ResNet-152
# and ViT-B/16 only.
FIRST=build-old SECOND=build-new MODELS_AB=${MODELS_AB:-"resnet152 vit"} \
	exec bash bench/results/2026-11-25/s34/run-shared-ab.sh
