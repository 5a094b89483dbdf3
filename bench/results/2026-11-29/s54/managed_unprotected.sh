W=/tmp/umkit-gpu; M=build/mutmanaged/bin
w=$($M/umplan $W/managed.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
$M/umplan -q $W/managed.db --capacity $((w / 2)) -o $W/managed.mut.plan
timeout 120 $M/umreplay --plan $W/managed.mut.plan --gpu-budget $((w / 2)) --max-managed 8G --stats $W/managed.mut.json -- build/gpu-probes/managed_probe > $W/managed.mut.out 2>&1
echo "mutant exit $?"; diff $W/managed.plain $W/managed.mut.out | head -8
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["engine"]; print({k: v["calls"] for k, v in e["ops"].items()}, e["skipped_discards"])' $W/managed.mut.json
