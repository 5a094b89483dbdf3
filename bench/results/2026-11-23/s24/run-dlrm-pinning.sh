# Session 24, command 4: does pinning the program to CPUs steady DLRM's host-bound step?
# ideal and plan (880bf44, W/B 2), each unpinned and under taskset -c 2-9, 4 interleaved repetitions.
mkdir -p $OUT/s
t0=$(date +%s)
. bench/models.sh
STEPS=30
db=$(ls -t /tmp/umkit-bench-traces/dlrm.b4096.*.db | head -1)
w=4349257728; b=$((w / 2))
build-lead/bin/umplan $db --capacity $b --htod-bw 47.89 -q -o $OUT/s/new.plan
read -ra cmd < <(model_command dlrm 4096)
for rep in 1 2 3 4; do
	for v in ideal plan; do
		for pin in no yes; do
			[ $(( $(date +%s) - t0 )) -lt 400 ] || break 3
			if [ $v = ideal ]; then opts=(--policy ideal); else opts=(--policy plan --gpu-budget $b); fi
			pre=(); [ $pin = yes ] && pre=(taskset -c 2-9)
			timeout 60 "${pre[@]}" build-lead/bin/umreplay -q --plan $OUT/s/new.plan "${opts[@]}" \
				--max-managed 9G -- "${cmd[@]}" > $OUT/s/$v.$pin.$rep.out 2>&1
			echo "$v $pin $rep rc=$? $(grep time_per_step_ms $OUT/s/$v.$pin.$rep.out) $(( $(date +%s) - t0 )) s" >> $OUT/s/times.log
		done
	done
done
cat $OUT/s/times.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
