#!/usr/bin/env bash
# Session 69 on the build carried as build/.
# With "dlrm": DLRM's plan at W/B 2 against ideal, the runs taking their
# steps in turn (bench/overhead_lockstep.sh with RATIO=2, ROUNDS rounds of
# STEPS steps). With "pre" (nvidia-h200-x2, the build before the fix,
# 7b21299, carried as build/pre/): devices_probe under each build's
# umreplay, their driver-memory counts. Then the GPU checks' sections
# given (tests/gpu/run.sh, through session 46's wrapper).
#   bash bench/results/2026-12-01/s69/run-gpu.sh pre devices
#   bash bench/results/2026-12-01/s69/run-gpu.sh dlrm record
if [ "$1" = dlrm ]; then
	RATIO=2 ROUNDS=${ROUNDS:-10} BUILD=build bash bench/overhead_lockstep.sh dlrm "$OUT/lockstep" "${STEPS:-200}"
	echo "lockstep: rc $?"
	shift
fi
P=build/gpu-probes/devices_probe
[ "$1" = pre ] && shift && for b in pre new; do
	bin=build/bin
	[ $b = pre ] && bin=build/pre/bin
	$bin/umreplay -q --policy ondemand --stats $OUT/$b.json --max-managed 8G -- $P >$OUT/$b.out 2>&1
	echo "$b: exit $? $(tail -1 $OUT/$b.out)"
	python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["measured"]["host"]["allocator"]; print("  driver allocs, bytes, peak:", a["driver_allocs"], a["driver_bytes"], a["driver_peak_bytes"])' $OUT/$b.json
done
[ -n "${1:-}" ] && bash bench/results/2026-11-29/s46/run-gpu-checks.sh "$1"
