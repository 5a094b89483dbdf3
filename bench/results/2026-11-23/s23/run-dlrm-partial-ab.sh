# Session 23, command 3: DLRM at W/B 2, plan from 9e4c8c8's umplan (whole tables on the host)
# against 4261d60's (the last table only in part), both replayed by 4261d60, ideal beside them:
# 8 interleaved repetitions of 30 steps (command 2 of this script ran the old arm plain: its umplan lacked libcjson).
mkdir -p $OUT/s
t0=$(date +%s)
STEPS=30 BUILD=build-lead RATIOS="2" POLICIES="plan" REPS=1 RUN_LIMIT_S=60 bash bench/suite.sh dlrm $OUT/s/suite grid > $OUT/s/suite.log 2>&1
echo "suite rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
. bench/models.sh
STEPS=30
db=$(ls -t /tmp/umkit-bench-traces/dlrm.b4096.*.db | head -1)
htod=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["htod_gbps"])' $OUT/s/suite/calib-dlrm.json)
w=$(build-lead/bin/umplan $db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
b2=$((w / 2))
LD_LIBRARY_PATH=build-lead/lib build-lead/umplan-9e4c8c8 $db --capacity $b2 --htod-bw $htod -q -o $OUT/s/old.plan
build-lead/bin/umplan $db --capacity $b2 --htod-bw $htod -q -o $OUT/s/new.plan
build-lead/bin/umplan $db --capacity $b2 --htod-bw $htod --report > $OUT/s/new-report.txt
LD_LIBRARY_PATH=build-lead/lib build-lead/umplan-9e4c8c8 $db --capacity $b2 --htod-bw $htod --report > $OUT/s/old-report.txt
echo "W $w budget $b2 htod $htod" >> $OUT/s/times.log
read -ra cmd < <(model_command dlrm 4096)
for rep in 1 2 3 4 5 6 7 8; do
	for v in ideal old new; do
		if [ $v = ideal ]; then opts=(--plan $OUT/s/new.plan --policy ideal)
		else opts=(--plan $OUT/s/$v.plan --policy plan --gpu-budget $b2); fi
		timeout 60 build-lead/bin/umreplay -q "${opts[@]}" --max-managed 9G --stats $OUT/s/$v.$rep.json \
			-- "${cmd[@]}" > $OUT/s/$v.$rep.out 2> $OUT/s/$v.$rep.err
		echo "$v $rep rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
	done
done
cat $OUT/s/times.log
for f in $OUT/s/*.json; do python3 -c '
import json,sys,statistics as S
d=json.load(open(sys.argv[1])); e=d["engine"]; m=d["measured"]
it=d["iteration_ns"][2:]
print(sys.argv[1].split("/")[-1], "med %.2f ms" % (S.median(it)/1e6), "host", e["placed_on_host_bytes"]>>20, "MiB peak", e["modelled_peak_bytes"]>>20, "bev", e["budget_evictions"], "faults", m["fault_migrations"], "htod", m["htod_bytes"]>>20)' $f; done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
