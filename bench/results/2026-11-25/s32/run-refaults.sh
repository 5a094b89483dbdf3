# Session 32: engine.refault_blocks on the H100: the PyTorch MLP recorded,
# planned at W/B 2, replayed under ondemand and plan with --stats; prints
# per steady iteration the model's refault blocks beside the measured
# on-demand migrations.
set -uo pipefail
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build/lib
W=/tmp/s32-refaults; rm -rf $W; mkdir -p $W
mlp=(python3 examples/pytorch/mlp.py --steps 8 --nvtx)
build/bin/umrec -q -o $W/mlp.db --max-managed 8G -- "${mlp[@]}" >/dev/null 2>&1
w=$(build/bin/umplan $W/mlp.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
b=$((w / 2))
build/bin/umplan $W/mlp.db --capacity $b -o $W/mlp.plan >/dev/null 2>&1
"${mlp[@]}" > $W/plain.out 2>&1
for policy in ondemand plan; do
	build/bin/umreplay -q --plan $W/mlp.plan --policy $policy --gpu-budget $b --max-managed 8G \
		--stats $OUT/s/$policy.json -- "${mlp[@]}" > $W/$policy.out 2>&1
	rc=$?
	same=no; diff <(grep -E '^step ' $W/plain.out) <(grep -E '^step ' $W/$policy.out) >/dev/null && [ $rc -eq 0 ] && same=yes
	python3 - $OUT/s/$policy.json $policy $same <<'PY' | tee -a $OUT/s/table.txt
import json, sys
d = json.load(open(sys.argv[1])); m = d["measured"]
print(sys.argv[2], "same=" + sys.argv[3], "engine.refault_blocks=%d" % d["engine"]["refault_blocks"],
      "per iteration (refault_blocks, fault_migrations, MB on demand n/a):",
      [(i["refault_blocks"], i["fault_migrations"]) for i in m["iterations"]])
PY
	python3 tests/gpu/replay_table.py $OUT/s/$policy.json | tr ' ' '\n' | grep -E 'steady_refault|faults_per_iter' | tee -a $OUT/s/table.txt
done
