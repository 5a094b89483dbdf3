#!/usr/bin/env bash
# Session 61: an idle replay woken by an allocation, and memory the program
# freed while the replay followed nothing, which a kernel queued then on a
# non-blocking stream still reads (tests/gpu/wake_discard_probe.cu). The
# replayer before the fix (build-old: f767c63) beside the fix (build),
# ROUNDS rounds, the first build alternating. Prints one line per run.
# Run from the repository root on the device machine, both builds carried.
set -u
MAXM=8G ROUNDS=${ROUNDS:-4}
W=$(mktemp -d)
WD=build/gpu-probes/wake_discard_probe
export LD_LIBRARY_PATH=$PWD/build/lib
timeout 60 $WD wake | sed 's/^/plain: /'
timeout 60 build/bin/umrec -q -o $W/eager.db --max-managed $MAXM -- $WD eager >/dev/null
peak=$(build/bin/umplan $W/eager.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
build/bin/umplan -q $W/eager.db --capacity $((2 * peak)) -o $W/idle.plan
echo "eager peak $peak bytes; plan at twice that; budget $((peak + peak / 20))"
for r in $(seq 1 $ROUNDS); do
	builds="build-old build"
	[ $((r % 2)) -eq 0 ] && builds="build build-old"
	for b in $builds; do
		timeout 60 $b/bin/umreplay --plan $W/idle.plan --gpu-budget $((peak + peak / 20)) --max-managed $MAXM \
			--stats $W/s.json -- $WD wake >$W/out 2>$W/err
		rc=$?
		printf '%s %-9s rc=%d woke=%d dropped_discards=%s %s\n' $r $b $rc \
			"$(grep -c 'following its kernel launches from now on' $W/err)" \
			"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["measured"]["dropped_discards"])' $W/s.json 2>&1)" \
			"$(tail -1 $W/out)"
	done
done
rm -rf "$W"
