# Session 44: what breaks a relaxed-mode capture on one thread while
# another allocates (tests/gpu/capture_wake_probe.cu): the allocation kind,
# the tool, the replayer's wake. On the device machine:
#   bash bench/results/2026-11-26/s44/capture_wake_split.sh
export LD_LIBRARY_PATH=$PWD/build/lib
P=build/gpu-probes/capture_wake_probe
W=/tmp/capture-split; rm -rf $W; mkdir -p $W
B="--max-managed 8G"
build/bin/umrec -q -o $W/eager.db $B -- $P eager > /dev/null 2>&1
peak=$(build/bin/umplan $W/eager.db --json -o $W/full.plan 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
build/bin/umplan -q $W/eager.db --capacity $((2 * peak)) -o $W/idle.plan
budget=$((peak + peak / 20))
for b in malloc managed none; do
	for how in plain umrec "umreplay ideal" "umreplay ondemand" "umreplay idle"; do
		case $how in
		plain) run=() ;;
		umrec) run=(build/bin/umrec -q -o $W/rec.db $B --) ;;
		"umreplay ideal") run=(build/bin/umreplay -q --policy ideal $B --) ;;
		"umreplay ondemand") run=(build/bin/umreplay -q --policy ondemand --gpu-budget $budget $B --) ;;
		"umreplay idle") run=(build/bin/umreplay --plan $W/idle.plan --gpu-budget $budget $B --) ;;
		esac
		"${run[@]}" $P capture $b > $W/out 2> $W/err
		echo "B $b, $how: exit $? $(tail -1 $W/out)$(grep -o 'following its kernel launches from now on' $W/err | sed 's/^/; woke: /')"
	done
done
