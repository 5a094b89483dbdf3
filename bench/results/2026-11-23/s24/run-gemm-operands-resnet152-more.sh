# Session 24, command 10: command 9 again with 4 repetitions (a fresh machine: the suite part
# records again). ResNet-152 at W/B 2, plans of e1f6e4f (no GEMM or convolution operands
# on the host) against the build before it, both replayed by e1f6e4f; the suite's grid part first
# (recording, calibration, ideal and e1f6e4f's plan, 1 repetition), then prev and new interleaved.
mkdir -p $OUT/s
t0=$(date +%s)
STEPS=10 BUILD=build-lead RATIOS="2" POLICIES="plan" REPS=1 RUN_LIMIT_S=90 bash bench/suite.sh resnet152 $OUT/s/suite grid > $OUT/s/suite.log 2>&1
echo "suite rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
. bench/models.sh
STEPS=10
db=$(ls -t /tmp/umkit-bench-traces/resnet152.*.db | head -1)
htod=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["htod_gbps"])' $OUT/s/suite/calib-resnet152.json)
w=$(build-lead/bin/umplan $db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
b=$((w / 2))
LD_LIBRARY_PATH=build-lead/lib build-lead/umplan-prev $db --capacity $b --htod-bw $htod -q -o $OUT/s/prev.plan
build-lead/bin/umplan $db --capacity $b --htod-bw $htod -q -o $OUT/s/new.plan
LD_LIBRARY_PATH=build-lead/lib build-lead/umplan-prev $db --capacity $b --htod-bw $htod --report > $OUT/s/prev-report.txt
build-lead/bin/umplan $db --capacity $b --htod-bw $htod --report > $OUT/s/new-report.txt
read -ra cmd < <(model_command resnet152 $(default_batch resnet152))
for rep in 1 2 3 4; do
	for v in prev new; do
		[ $(( $(date +%s) - t0 )) -lt 500 ] || break 2
		timeout 90 build-lead/bin/umreplay -q --plan $OUT/s/$v.plan --policy plan --gpu-budget $b --max-managed 8G \
			--stats $OUT/s/$v.$rep.json -- "${cmd[@]}" > $OUT/s/$v.$rep.out 2> $OUT/s/$v.$rep.err
		echo "$v $rep rc=$? $(grep time_per_step_ms $OUT/s/$v.$rep.out) $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
	done
done
cat $OUT/s/times.log; grep "^host\|^plan moves" $OUT/s/*-report.txt | cut -c1-160
tr -d '\r' < $OUT/s/suite/resnet152.csv | cut -d, -f3,8,10,14,15
for f in $OUT/s/*.json; do echo "$(basename $f) $(python3 tests/gpu/replay_table.py $f 2>/dev/null | grep -oE '(iter_ms|faults_per_iter|htod_mb_per_iter|dtoh_mb_per_iter)=[0-9.]+' | tr '\n' ' ')"; done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
