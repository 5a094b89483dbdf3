# Session 30: DLRM's recorded allocation sequence (tests/fixtures/h100_dlrm.db) replayed through the arena and an
# idle engine, outside any program, by e8a1e16's libraries (ab_old) and this build's (ab_new), with memory
# touched between calls to cool the caches (KB touched, stride in bytes); then the GPU checks.
W=4349257728
P=build-lead/probe
for cfg in "0 64 5" "1024 64 3" "16384 64 1" "65536 4096 3"; do
	set -- $cfg
	for v in old new old new; do
		echo -n "$v touched ${1} KB stride $2: "
		$P/ab_$v tests/fixtures/h100_dlrm.db $P/dlrm.plan $1 $3 $((W * 5 / 4)) $2 2>/dev/null
	done
done
bash bench/results/2026-11-24/s30/run-gpu-checks.sh
