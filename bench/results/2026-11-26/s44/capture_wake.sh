# Session 44: does an idle replay woken by an allocation on one thread break
# a relaxed-mode capture under way on another (tests/gpu/capture_wake_probe.cu)?
# On the device machine, the build carried as build/:
#   bash bench/results/2026-11-26/s44/capture_wake.sh
export LD_LIBRARY_PATH=$PWD/build/lib
P=build/gpu-probes/capture_wake_probe
W=/tmp/capture-wake; rm -rf $W; mkdir -p $W
$P capture > $W/plain.out 2>&1; echo "plain: exit $? $(tail -1 $W/plain.out)"
build/bin/umrec -q -o $W/eager.db --max-managed 8G -- $P eager > /dev/null 2>&1; echo "umrec eager: exit $?"
peak=$(build/bin/umplan $W/eager.db --json -o $W/full.plan 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
build/bin/umplan -q $W/eager.db --capacity $((2 * peak)) -o $W/idle.plan
for round in 1 2 3; do
	build/bin/umreplay --plan $W/idle.plan --gpu-budget $((peak + peak / 20)) --max-managed 8G \
		--stats $W/idle.$round.json -- $P capture > $W/idle.$round.out 2> $W/idle.$round.err
	echo "umreplay idle, round $round: exit $? $(tail -1 $W/idle.$round.out); same sums: $(diff <(grep sum $W/plain.out) <(grep sum $W/idle.$round.out) >/dev/null && echo yes || echo NO)"
	grep umreplay $W/idle.$round.err
done
build/bin/umreplay --policy ondemand --gpu-budget $((peak + peak / 20)) --max-managed 8G -- $P capture > $W/ondemand.out 2> $W/ondemand.err
echo "umreplay ondemand (attached from the start): exit $? $(tail -1 $W/ondemand.out)"
grep umreplay $W/ondemand.err
echo "eager peak $peak bytes"
