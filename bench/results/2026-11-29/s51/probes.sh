# Session 51: the GPU probes that reach the arena's end of the one-stream
# order, on the build carried as build/ (the device time left did not fit
# tests/gpu/run.sh's sections): fence_probe's eight cases under plain,
# umrec and umreplay, and capture_wake_probe's capture under umrec,
# umreplay and an idle umreplay woken mid-capture (as run.sh runs them).
#   bash bench/results/2026-11-29/s51/probes.sh
export LD_LIBRARY_PATH=$PWD/build/lib
B=build/bin P=build/gpu-probes W=$(mktemp -d) M=8G
pass=0 fail=0
row() { if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "PASS $1"; else fail=$((fail + 1)); echo "FAIL $1"; fi; }
for tool in plain umrec umreplay; do
	case $tool in
	plain) run=() ;;
	umrec) run=($B/umrec -q -o $W/f.db --max-managed $M --) ;;
	umreplay) run=($B/umreplay -q --policy ideal --max-managed $M --) ;;
	esac
	for c in copy-only many-streams reused-handle two-threads double-free stream-churn relaxed-churn ptsz-async; do
		out=$(timeout 60 "${run[@]}" $P/fence_probe $c 2>&1)
		rc=$?
		echo "$out" | grep -q "^$c: ok" && [ $rc -eq 0 ]
		row "fence_probe $c, $tool: $(echo "$out" | grep "^$c:" | head -1)" $?
	done
done
CW=$P/capture_wake_probe
timeout 60 $CW capture >$W/cw.plain 2>&1
for tool in umrec umreplay; do
	case $tool in
	umrec) run=($B/umrec -q -o $W/cw.db --max-managed $M --) ;;
	umreplay) run=($B/umreplay -q --policy ideal --max-managed $M --) ;;
	esac
	timeout 60 "${run[@]}" $CW capture >$W/cw.$tool 2>&1
	rc=$?
	[ $rc -eq 0 ] && diff <(grep sum $W/cw.plain) <(grep sum $W/cw.$tool) >/dev/null
	row "capture_wake_probe capture, $tool: $(tail -1 $W/cw.$tool)" $?
done
timeout 60 $B/umrec -q -o $W/cw.eager.db --max-managed $M -- $CW eager >/dev/null 2>&1
cwp=$($B/umplan $W/cw.eager.db --json -o $W/cw.full.plan 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
$B/umplan -q $W/cw.eager.db --capacity $((2 * cwp)) -o $W/cw.idle.plan
timeout 60 $B/umreplay --plan $W/cw.idle.plan --gpu-budget $((cwp + cwp / 20)) --max-managed $M -- \
	$CW capture >$W/cw.woken 2>$W/cw.woken.err
rc=$?
[ $rc -eq 0 ] && grep -q 'following its kernel launches from now on' $W/cw.woken.err &&
	diff <(grep sum $W/cw.plain) <(grep sum $W/cw.woken) >/dev/null
row "capture_wake_probe, idle umreplay woken mid-capture: $(tail -1 $W/cw.woken)" $?
echo "probes: $pass passed, $fail failed, build $(cat build/COMMIT)"
rm -rf $W
