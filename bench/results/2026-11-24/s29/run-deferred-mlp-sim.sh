# Session 29: deferred migrations with discards on their own stream (9625493) beside 36ffe0f, plan at W/B 2 and 3
# on the MLP and train_sim traces of session 27 (bench/results/2026-11-23/s27/gate-mlp-sim/*.replay.db, expected in build-lead/ab/),
# 3 interleaved repetitions; 36ffe0f built into build-lead/old.
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib PYTHONUNBUFFERED=1
B=build-lead/bin A=build-lead/ab
SIM=build-lead/examples/train_sim
sim_cmd=($SIM --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx)
mlp_cmd=(python3 examples/pytorch/mlp.py --steps 12 --nvtx)
for name in mlp sim; do
	w=$($B/umplan $A/$name.replay.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	for ratio in 2 3; do
		budget=$(python3 -c "print(int($w / $ratio))")
		$B/umplan $A/$name.replay.db --capacity $budget -o $A/$name.$ratio.plan >/dev/null 2>&1
	done
done
for rep in $(seq ${REPS:-3}); do
	for name in mlp sim; do
		w=$($B/umplan $A/$name.replay.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
		cmdvar=${name}_cmd[@]
		for ratio in 2 3; do
			budget=$(python3 -c "print(int($w / $ratio))")
			for build in build-lead build-lead/old; do
				tag=$name.$ratio.$(basename $build).$rep
				$build/bin/umreplay -q --plan $A/$name.$ratio.plan --policy plan --gpu-budget $budget --max-managed 8G \
					--stats $OUT/s/$tag.json -- "${!cmdvar}" > $OUT/s/$tag.out 2>&1
				echo "$tag rc=$? $(python3 tests/gpu/replay_table.py $OUT/s/$tag.json 2>/dev/null | grep -oE '(iter_ms|faults_per_iter)=[0-9.]+' | tr '\n' ' ') $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); g=d["measured"]["host"]["prefetch_gates"]; print("gated", d["engine"]["gated_launches"], "waits", g["waits"], "unissued", g["unissued"], "after_mig", d["measured"]["host"].get("discards_after_migrations"))' $OUT/s/$tag.json 2>/dev/null) $(grep -m1 checksum $OUT/s/$tag.out)"
			done
		done
	done
done | tee $OUT/s/ab.txt
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
