# Session 38: where a plan replay's remaining faults come from. MODEL is
# recorded and planned for W/B RATIO (1.5), then replayed under plan by
# build-diag/ (the build under study with diag.patch: every executor call, launch,
# allocation, free, gate wait and Unified Memory record is logged to
# UMDIAG_LOG), once with --kernel-times (kernel records carry the
# launch's correlation ID) and once without; a warm-up replay by build/
# goes first (docs/benchmarks.md, "The slow first replay is the machine's
# first"). The trace, plan, stats and logs come back for
# bench/results/2026-11-26/s38/fault-kinds.py.
# Usage, from the repository root on the GPU machine, with build/ and
# build-diag/ carried: bash THIS MODEL (a suite model, mlp or sim)
set -uo pipefail
MODEL=${1:?usage: run-diag.sh MODEL}
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
W=/tmp/s38-diag; D=$OUT/$MODEL-${RATIO:-1.5}; rm -rf $W; mkdir -p $W $D
. bench/models.sh
case $MODEL in # the GPU checks' two replay cases (tests/gpu/run.sh), or a suite model
mlp) cmd=(python3 examples/pytorch/mlp.py --steps 12 --nvtx) ;;
sim) cmd=(build/examples/train_sim --layers 16 --width 2048 --batch 2048 --per-layer-update --iters 12 --nvtx) ;;
*) read -ra cmd < <(model_command $MODEL "$(default_batch $MODEL)") ;;
esac
MAXM=12G
build/bin/umrec -q -o $W/m.db --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>&1 || exit 1
w=$(build/bin/umplan $W/m.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
budget=$(python3 -c "print(int($w / ${RATIO:-1.5}))")
htod=$(python3 tests/gpu/calibrate.py 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["htod_gbps"])')
build/bin/umplan $W/m.db --capacity $budget --htod-bw $htod -q -o $W/m.plan || exit 1
"${cmd[@]}" >$W/plain.out 2>&1
replay() { # TAG BUILD [OPTIONS...]
	local tag=$1 b=$2; shift 2
	LD_LIBRARY_PATH=$PWD/$b/lib UMDIAG_LOG=$W/$tag.log $b/bin/umreplay -q --plan $W/m.plan --policy plan \
		--gpu-budget $budget --max-managed $MAXM --stats $D/$tag.json "$@" -- "${cmd[@]}" >$D/$tag.out 2>&1
	local rc=$? same=no
	diff <(grep -E '^(checksum|step) ' $W/plain.out) <(grep -E '^(checksum|step) ' $D/$tag.out) >/dev/null && same=yes
	python3 - $D/$tag.json $tag $rc $same <<'PY' | tee -a $D/table.txt
import json, statistics, sys
d = json.load(open(sys.argv[1])); m = d["measured"]
it = m["iterations"][1:]
print(f"{sys.argv[2]:12} rc={sys.argv[3]} same={sys.argv[4]} steady_ms={[round(t / 1e6) for t in d['iteration_ns'][1:]]} "
      f"faults={statistics.median(i['fault_migrations'] for i in it):.0f}")
PY
	[ -f $W/$tag.log ] && gzip -c $W/$tag.log >$D/$tag.log.gz
}
replay warmup build
replay ktimes build-diag --kernel-times
replay plain build-diag
cp $W/m.plan $D/ && gzip -c $W/m.db >$D/m.db.gz
echo "budget=$budget w=$w htod=$htod" | tee -a $D/table.txt
ls -la $D
