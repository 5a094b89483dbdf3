#!/bin/bash
# train_sim's plan at W/B 3: c60ad8f (build-lead) beside 64c1c1b (build-diag: 64c1c1b with diagnostic switches, none set), interleaved
S=$OUT/s; mkdir -p $S
SIM=build-lead/examples/train_sim
args=(--layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
$SIM "${args[@]}" >$S/plain.out 2>&1
build-lead/bin/umrec -q -o $S/sim.db --max-managed 8G -- $SIM "${args[@]}" >$S/rec.out 2>&1
W=$(build-lead/bin/umplan $S/sim.db --json -o $S/full.plan | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
b3=$((W/3))
build-lead/bin/umplan $S/sim.db --capacity $b3 -o $S/p3.plan >/dev/null 2>&1
run() { # tag build
	local tag=$1 B=$2/bin
	$B/umreplay -q --plan $S/p3.plan --policy plan --gpu-budget $b3 --max-managed 8G --stats $S/$tag.json -- $SIM "${args[@]}" >$S/$tag.out 2>$S/$tag.err
	local rc=$? d
	d=$(diff <(grep -E '^(iter|checksum)' $S/plain.out) <(grep -E '^(iter|checksum)' $S/$tag.out) | grep -c '^>')
	echo "$tag rc=$rc differ=$d $(grep -E '^iter 1 ' $S/$tag.out) $(grep time_per $S/$tag.out) $(python3 -c "import json; d=json.load(open('$S/$tag.json')); m=d['measured']; print('faults', m['fault_migrations'], 'fresh_prefetched', m.get('fresh_prefetched'), 'dropped', m['dropped_discards'])" 2>&1)"
}
for i in 1 2 3 4 5 6; do
	run new.$i build-lead
	run old.$i build-diag
done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $S
