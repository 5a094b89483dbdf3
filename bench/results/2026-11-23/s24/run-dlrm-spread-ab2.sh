# Session 24, command 5: command 1's A/B again, W/B 2 alone, up to 12 interleaved repetitions of
# ideal, a4c958f's plan (whole tables first, the last in part) and 880bf44's (the excess spread
# over the tables' tails), all replayed by 880bf44; no run starts after 540 s.
mkdir -p $OUT/s
t0=$(date +%s)
STEPS=30 BUILD=build-lead RATIOS="2" POLICIES="plan" REPS=1 RUN_LIMIT_S=60 bash bench/suite.sh dlrm $OUT/s/suite grid > $OUT/s/suite.log 2>&1
echo "suite rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
. bench/models.sh
STEPS=30
db=$(ls -t /tmp/umkit-bench-traces/dlrm.b4096.*.db | head -1)
htod=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["htod_gbps"])' $OUT/s/suite/calib-dlrm.json)
w=$(build-lead/bin/umplan $db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
for r in 2; do
	b=$(python3 -c "print(int($w / $r))")
	echo "W $w W/B $r budget $b htod $htod" >> $OUT/s/times.log
	LD_LIBRARY_PATH=build-lead/lib build-lead/umplan-a4c958f $db --capacity $b --htod-bw $htod -q -o $OUT/s/old$r.plan
	build-lead/bin/umplan $db --capacity $b --htod-bw $htod -q -o $OUT/s/new$r.plan
	build-lead/bin/umplan $db --capacity $b --htod-bw $htod --report > $OUT/s/new$r-report.txt
	LD_LIBRARY_PATH=build-lead/lib build-lead/umplan-a4c958f $db --capacity $b --htod-bw $htod --report > $OUT/s/old$r-report.txt
done
read -ra cmd < <(model_command dlrm 4096)
run() { # variant ratio rep
	local v=$1 r=$2 rep=$3 opts
	if [ $v = ideal ]; then opts=(--plan $OUT/s/new$r.plan --policy ideal)
	else opts=(--plan $OUT/s/$v$r.plan --policy plan --gpu-budget $(python3 -c "print(int($w / $r))")); fi
	timeout 60 build-lead/bin/umreplay -q "${opts[@]}" --max-managed 9G --stats $OUT/s/$v$r.$rep.json \
		-- "${cmd[@]}" > $OUT/s/$v$r.$rep.out 2> $OUT/s/$v$r.$rep.err
	echo "$v $r $rep rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
}
for rep in $(seq 12); do
	for v in ideal old new; do [ $(( $(date +%s) - t0 )) -lt 540 ] || break 2; run $v 2 $rep; done
done
cat $OUT/s/times.log
for f in $OUT/s/*.json; do python3 -c '
import json,sys,statistics as S
d=json.load(open(sys.argv[1])); e=d["engine"]; m=d["measured"]
it=d["iteration_ns"][2:]
print(sys.argv[1].split("/")[-1], "med %.2f ms" % (S.median(it)/1e6), "host", e["placed_on_host_bytes"]>>20, "MiB peak", e["modelled_peak_bytes"]>>20, "bev", e["budget_evictions"], "faults", m["fault_migrations"], "htod", m["htod_bytes"]>>20)' $f; done 2>&1 | tail -50
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
