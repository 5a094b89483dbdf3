# Session 24, command 2: the suite's grid on 880bf44 (DLRM, plan at W/B 1.5, 2, 3, 4 repetitions
# of 30 steps), then GPU busy per step of a4c958f's and 880bf44's plans at W/B 2 (--kernel-times,
# 3 interleaved repetitions each, both replayed by 880bf44).
mkdir -p $OUT/s
t0=$(date +%s)
STEPS=30 BUILD=build-lead RATIOS="1.5 2 3" POLICIES="plan" REPS=4 RUN_LIMIT_S=60 bash bench/suite.sh dlrm $OUT/s/suite grid > $OUT/s/suite.log 2>&1
echo "suite rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
. bench/models.sh
STEPS=30
db=$(ls -t /tmp/umkit-bench-traces/dlrm.b4096.*.db | head -1)
htod=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["htod_gbps"])' $OUT/s/suite/calib-dlrm.json)
w=$(build-lead/bin/umplan $db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
b=$((w / 2))
LD_LIBRARY_PATH=build-lead/lib build-lead/umplan-a4c958f $db --capacity $b --htod-bw $htod -q -o $OUT/s/old.plan
build-lead/bin/umplan $db --capacity $b --htod-bw $htod -q -o $OUT/s/new.plan
read -ra cmd < <(model_command dlrm 4096)
for rep in 1 2 3; do
	for v in old new; do
		[ $(( $(date +%s) - t0 )) -lt 540 ] || break 2
		timeout 60 build-lead/bin/umreplay -q --plan $OUT/s/$v.plan --policy plan --gpu-budget $b --kernel-times \
			--max-managed 9G --stats $OUT/s/$v.$rep.json -- "${cmd[@]}" > $OUT/s/$v.$rep.out 2> $OUT/s/$v.$rep.err
		echo "$v $rep rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
	done
done
cat $OUT/s/times.log
for f in $OUT/s/*.json; do python3 -c '
import json,sys,statistics as S
d=json.load(open(sys.argv[1])); its=d["measured"]["iterations"][2:]
busy=[i["kernel_busy_ns"] for i in its if i["kernel_busy_ns"] is not None]
print(sys.argv[1].split("/")[-1], "GPU busy per steady iteration med %.2f ms (%d)" % (S.median(busy)/1e6, len(busy)))' $f; done
tr -d '\r' < $OUT/s/suite/dlrm.csv | cut -d, -f3,8,10,11,12,13,14
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
