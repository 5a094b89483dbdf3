#!/usr/bin/env bash
# Command-line test for bench/suite.sh without a GPU: nvidia-smi, the
# calibration, the model scripts and the umkit tools are fakes on PATH and
# in fake build folders, so what is checked is the script's own logic: the
# rows it writes per part, build and policy (a grid part without base runs
# ideal for every build, COMPARE runs a second build beside the first, each
# round starting with the other build, POLICIES picks the grid's policies),
# the warm-up replays before the first round (WARMUP per build, once per
# command, none with WARMUP=0), the build column, the outputs compared with
# the plain run, the tarballs, the overhead part's variants (with COMPARE
# too), the busy times and KERNEL_TIMES, and its refusals (a build without
# COMMIT, too little free GPU memory); bench/models.sh's record_and_plan;
# and bench/overhead_lockstep.sh's runs, report and refusals, with RATIO
# too; the plans' capacity floors kept for bench/suite_report.py.
source "$(dirname "$0")/lib.sh"
ROOT=$(realpath "$(dirname "$0")/../..")
export PYTHONDONTWRITEBYTECODE=1
REAL_PY=$(command -v python3)

fake=$SCRATCH/fakebin
mkdir -p "$fake"
cat >"$fake/nvidia-smi" <<'EOF_SMI'
#!/bin/sh
case "$*" in
*memory.free*) echo "${FAKE_FREE_MIB:-81000}" ;;
*name*) echo "Fake GPU" ;;
esac
EOF_SMI
# python3: the calibration and the model scripts are faked, the rest is real.
cat >"$fake/python3" <<EOF_PY
#!/bin/sh
case "\$1" in
tests/gpu/calibrate.py) echo '{"htod_gbps": 40, "dtoh_gbps": 10}' ;;
examples/pytorch/*) [ -n "\${FAKE_LOG:-}" ] && echo "model \$*" >>"\$FAKE_LOG"
	printf 'step 1 loss 2.5\nper_step_ms 12,10,11\nchecksum 42\n' ;;
*) exec "$REAL_PY" "\$@" ;;
esac
EOF_PY

# fake_build DIR COMMIT: umrec writes a trace file, umplan answers --report,
# --json and -o, umreplay runs the program and writes a --stats file.
fake_build() {
	mkdir -p "$1/bin" "$1/lib"
	echo "$2" >"$1/COMMIT"
	echo "$2" >"$1/lib/libumrec.so"
	cat >"$1/bin/umrec" <<'EOF_REC'
#!/bin/sh
while [ "$1" != -o ]; do shift; done
echo trace >"$2"
EOF_REC
	cat >"$1/bin/umplan" <<'EOF_PLAN'
#!/bin/sh
case "$*" in
*--report*) echo "iterations   5 found"; echo "planned      iteration 3"; exit ;;
*" -o "*) [ -n "${FAKE_LOG:-}" ] && echo "umplan $*" >>"$FAKE_LOG" ;;
esac
json=
while [ $# -gt 0 ]; do
	case $1 in
	--json) json=1 ;;
	-o) echo plan >"$2"; shift ;;
	--host-bw) window=$2; shift ;;
	esac
	shift
done
# the floor's window kernels: 7 ms, or --host-bw's figure
[ -n "$json" ] && echo '{"memory": {"live_peak": 2000000000}, "plan": {"capacity_floor":
  {"ns": 9000000, "kernel_ns": 8000000, "from": 3, "to": 1, "evict_bytes": 20000000, "window_kernel_ns": '$((${window:-7} * 1000000))'}}}'
exit 0
EOF_PLAN
	cat >"$1/bin/umreplay" <<'EOF_REPLAY'
#!/bin/sh
[ -n "${FAKE_LOG:-}" ] && echo "umreplay $*" >>"$FAKE_LOG"
kb=null
while [ "$1" != -- ]; do
	[ "$1" = --stats ] && stats=$2
	[ "$1" = --kernel-times ] && kb=5000000
	shift
done
shift
it='{"fault_migrations": 0, "htod_bytes": 0, "dtoh_bytes": 0, "callback_ns": 0, "resynced": 0, "lost": 0,
     "htod_busy_ns": 3000000, "dtoh_busy_ns": 4000000, "kernel_busy_ns": '$kb'}'
cat >"$stats" <<EOF_STATS
{"engine": {"iterations": 2, "matched": 9, "resynced": 0, "lost": 0, "signature_mismatch": false,
  "modelled_peak_bytes": 1000000},
 "iteration_ns": [2000000, 1000000],
 "measured": {"peak_residency_bytes": 1000000, "budget_bytes": 0,
  "host": {"callback_ns": 1000000, "driver_calls": {}},
  "iterations": [$it, $it]}}
EOF_STATS
exec "$@"
EOF_REPLAY
	chmod +x "$1"/bin/*
}
chmod +x "$fake"/*
fake_build "$SCRATCH/build-a" aaaa111
fake_build "$SCRATCH/build-b" bbbb222

suite() { # OUTDIR PARTS; settings (REPS, RATIOS, ...) come from the caller's environment
	(cd "$ROOT" && PATH="$fake:$PATH" TRACE_CACHE=$SCRATCH/cache BUILD=$SCRATCH/build-a \
		bash bench/suite.sh gpt2 "$@")
}
rows() { # CSV FILTER: the rows' "build policy ratio" for rows matching FILTER
	"$REAL_PY" -c 'import csv,sys; [print(r["build"], r["policy"], r["ratio"], r["same_output"])
		for r in csv.DictReader(open(sys.argv[1])) if eval(sys.argv[2])]' "$1" "$2" | sort | uniq -c | sed 's/^ *//'
}

out1=$SCRATCH/out1
REPS=2 RATIOS="2" POLICIES="plan" COMPARE="$SCRATCH/build-b" run suite "$out1" grid
expect_status 0 "a grid part with COMPARE exits 0"
got=$(rows "$out1/gpt2.csv" 'r["experiment"] == "grid"')
want=$(printf '%s\n' "2 aaaa111 ideal 0 1" "2 aaaa111 plan 2 1" "2 bbbb222 ideal 0 1" "2 bbbb222 plan 2 1")
[ "$got" = "$want" ] && ok "grid without base: ideal and the chosen policies, per build, per repetition" \
	|| not_ok "grid without base: ideal and the chosen policies, per build, per repetition (got: $got)"
# The builds' first runs of each round, in the order they ran.
got=$("$REAL_PY" -c 'import csv,sys; seen=set()
for r in csv.DictReader(open(sys.argv[1])):
    if r["experiment"] == "grid" and r["rep"] not in seen: seen.add(r["rep"]); print(r["rep"], r["build"])' "$out1/gpt2.csv" | tr '\n' ' ')
[ "$got" = "1 aaaa111 2 bbbb222 " ] && ok "with COMPARE, the build that runs first alternates between rounds" \
	|| not_ok "with COMPARE, the build that runs first alternates between rounds (got: $got)"
got=$("$REAL_PY" -c 'import csv,sys; [print(r["experiment"], r["build"], r["policy"], r["ratio"], r["rep"])
	for r in list(csv.DictReader(open(sys.argv[1])))[:3]]' "$out1/gpt2.csv" | tr '\n' ';')
[ "$got" = "warmup aaaa111 plan 2 1;warmup bbbb222 plan 2 1;grid aaaa111 ideal 0 1;" ] \
	&& ok "the command's first replays are a warm-up plan replay per build, at the grid's last ratio" \
	|| not_ok "the command's first replays are a warm-up plan replay per build, at the grid's last ratio (got: $got)"
[ -s "$out1/calib-gpt2.json" ] && ok "the calibration is kept" || not_ok "the calibration is kept"
tar -tzf "$out1/gpt2-outputs.tar.gz" | grep -q '^grid.b4.r2.plan.2.build-b.out$' \
	&& ok "every run's stdout is kept, named by build" || not_ok "every run's stdout is kept, named by build"
[ "$(tar -tzf "$out1/gpt2-stats.tar.gz" | grep -c '\.json$')" -eq 10 ] \
	&& ok "a stats file per replay" || not_ok "a stats file per replay"

# A plan made for a budget leaves its capacity floor in floors-MODEL.jsonl,
# plan-migrate's too (made with --host-bw 0); the plan made without one,
# which ideal runs with, none.
out10=$SCRATCH/out10
WARMUP=0 REPS=1 RATIOS="2 3" POLICIES="plan plan-migrate" run suite "$out10" grid
got=$("$REAL_PY" -c 'import json,sys; [print(x["batch"], x["budget_bytes"], x["policy"], x["kernel_ns"], x["window_kernel_ns"],
	x["evict_bytes"]) for x in map(json.loads, open(sys.argv[1]))]' "$out10/floors-gpt2.jsonl" 2>&1)
want=$(printf '%s\n' "4 1000000000 plan 8000000 7000000 20000000" "4 1000000000 plan-migrate 8000000 0 20000000" \
	"4 666666666 plan 8000000 7000000 20000000" "4 666666666 plan-migrate 8000000 0 20000000")
[ "$status" = 0 ] && [ "$got" = "$want" ] && ok "a floor per plan made for a budget, plan-migrate's apart" \
	|| not_ok "a floor per plan made for a budget, plan-migrate's apart (status $status, got: $got)"
# bench/suite_report.py reads them: 8 ms of kernels, 20 MB at the fake
# calibration's 10 GB/s (2 ms) inside plan's 7 ms window, beyond
# plan-migrate's 0 ms one.
got=$("$REAL_PY" bench/suite_report.py "$out10" | grep -E '^\| gpt2 \(aaaa111\) \| 2 \| plan' | awk -F' [|] ' '{print $3, $(NF-2)}')
[ "$got" = "$(printf '%s\n' "plan-migrate 10.0" "plan 8.0")" ] && ok "the report reads the floors the suite kept" \
	|| not_ok "the report reads the floors the suite kept (got: $got)"

busy() { # CSV: each replay row's kernel, HtoD and DtoH busy ms, distinct ones
	"$REAL_PY" -c 'import csv,sys; [print(r["steady_kernel_busy_ms"] or "-", r["steady_htod_busy_ms"],
		r["steady_dtoh_busy_ms"]) for r in csv.DictReader(open(sys.argv[1])) if r["policy"] != "plain"]' "$1" | sort -u
}
[ "$(busy "$out1/gpt2.csv")" = "- 3.000 4.000" ] && ok "the copy engines' busy ms per steady iteration; no kernel times by default" \
	|| not_ok "the copy engines' busy ms per steady iteration; no kernel times by default (got: $(busy "$out1/gpt2.csv"))"
out7=$SCRATCH/out7
FAKE_LOG=$SCRATCH/ktimes.log KERNEL_TIMES=1 REPS=1 RATIOS="2" POLICIES="plan" run suite "$out7" grid
[ "$(grep -c '^umreplay.*--kernel-times' "$SCRATCH/ktimes.log")" -eq 3 ] && [ "$(busy "$out7/gpt2.csv")" = "5.000 3.000 4.000" ] \
	&& ok "KERNEL_TIMES=1: every replay times the kernels, and the CSV has their busy ms" \
	|| not_ok "KERNEL_TIMES=1: every replay times the kernels, and the CSV has their busy ms (got: $(busy "$out7/gpt2.csv"))"

out2=$SCRATCH/out2
REPS=1 run suite "$out2" base
expect_status 0 "a base part exits 0"
got=$(rows "$out2/gpt2.csv" 'r["experiment"] == "grid"')
want=$(printf '%s\n' "1 aaaa111 ideal 0 1" "1 aaaa111 plain 0 1" "1 aaaa111 plan 0.8 1")
[ "$got" = "$want" ] && ok "base: plain, ideal, plan with room" || not_ok "base: plain, ideal, plan with room (got: $got)"
got=$(rows "$out2/gpt2.csv" 'r["experiment"] == "warmup"')
[ "$got" = "1 aaaa111 plan 0.8 " ] && ok "base alone: the warm-up replay has room, and no output to compare" \
	|| not_ok "base alone: the warm-up replay has room, and no output to compare (got: $got)"

out8=$SCRATCH/out8
WARMUP=2 REPS=1 RATIOS="1.5 3" POLICIES="plan" run suite "$out8" "grid overhead"
got=$("$REAL_PY" -c 'import csv,sys; [print(r["policy"], r["ratio"], r["rep"])
	for r in csv.DictReader(open(sys.argv[1])) if r["experiment"] == "warmup"]' "$out8/gpt2.csv" | tr '\n' ';')
[ "$got" = "plan 3 1;plan 3 2;" ] && ok "WARMUP replays at the last of RATIOS, once per command whatever its parts" \
	|| not_ok "WARMUP replays at the last of RATIOS, once per command whatever its parts (got: $got)"
out9=$SCRATCH/out9
WARMUP=0 REPS=1 RATIOS="2" POLICIES="plan" run suite "$out9" grid
[ -s "$out9/gpt2.csv" ] && ! grep -q ',warmup,' "$out9/gpt2.csv" && ok "WARMUP=0: no warm-up" || not_ok "WARMUP=0: no warm-up"

out5=$SCRATCH/out5
FAKE_LOG=$SCRATCH/overhead.log WARMUP=0 REPS=2 OVERHEAD_STEPS=7 run suite "$out5" overhead
expect_status 0 "an overhead part exits 0"
got=$("$REAL_PY" -c 'import csv,sys; [print(r["rep"], r["experiment"], r["policy"], r["ratio"], r["same_output"])
	for r in csv.DictReader(open(sys.argv[1]))]' "$out5/gpt2.csv")
want=$(printf '%s\n' "1 overhead plain 0 1" "1 overhead-cached ideal 0 1" "1 overhead-noplan ideal 0 1" \
	"1 overhead ideal 0 1" "1 overhead plan 0.8 1" "2 overhead-cached ideal 0 1" "2 overhead-noplan ideal 0 1" \
	"2 overhead ideal 0 1" "2 overhead plan 0.8 1" "2 overhead plain 0 1")
[ "$got" = "$want" ] && ok "overhead: plain, ideal cached, ideal without a plan, ideal, roomy plan; the next round one later" \
	|| not_ok "overhead: plain, ideal cached, ideal without a plan, ideal, roomy plan; the next round one later (got: $got)"
replays=$(grep '^umreplay' "$SCRATCH/overhead.log" | head -4)
if [ "$(grep -c -- '--plan' <<<"$replays")" -eq 2 ] &&
	sed -n 1p <<<"$replays" | grep -q -- '-- env -u PYTORCH_NO_CUDA_MEMORY_CACHING ' &&
	! sed -n '2,$p' <<<"$replays" | grep -q -- ' env -u ' &&
	! sed -n 1,2p <<<"$replays" | grep -q -- '--plan'; then
	ok "overhead: the cached and no-plan variants run without a plan, the cached one with the cache kept"
else
	not_ok "overhead: the cached and no-plan variants run without a plan, the cached one with the cache kept"
	echo "$replays"
fi
steps=$(grep '^model' "$SCRATCH/overhead.log" | grep -o -- '--steps [0-9]*' | sort | uniq -c | sed 's/^ *//')
[ "$steps" = "$(printf '%s\n' "10 --steps 7")" ] && ok "overhead: its runs have OVERHEAD_STEPS steps" \
	|| not_ok "overhead: its runs have OVERHEAD_STEPS steps (got: $steps)"

out6=$SCRATCH/out6
REPS=1 COMPARE="$SCRATCH/build-b" run suite "$out6" overhead
got=$("$REAL_PY" -c 'import csv,sys; [print(r["build"], r["experiment"], r["policy"])
	for r in csv.DictReader(open(sys.argv[1]))]' "$out6/gpt2.csv" | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')
want="1 aaaa111 overhead ideal;1 aaaa111 overhead plain;1 aaaa111 overhead plan;1 aaaa111 overhead-cached ideal;1 aaaa111 overhead-noplan ideal;1 aaaa111 warmup plan;1 bbbb222 overhead ideal;1 bbbb222 overhead plan;1 bbbb222 overhead-cached ideal;1 bbbb222 overhead-noplan ideal;1 bbbb222 warmup plan;"
[ "$got" = "$want" ] && ok "overhead with COMPARE: every replay variant per build, plain once, a warm-up per build" \
	|| not_ok "overhead with COMPARE: every replay variant per build, plain once, a warm-up per build (got: $got)"

# record_and_plan, the A/B scripts' prelude (bench/models.sh): records,
# plans for B = W / RATIO at the calibrated speed or $htod, says why not.
rp_bin=$SCRATCH/build-rp/bin
mkdir -p "$rp_bin" "$SCRATCH/rp"
cp "$SCRATCH/build-a/bin/umrec" "$rp_bin/"
cat >"$rp_bin/umplan" <<'EOF_PLAN'
#!/bin/sh
case "$*" in
*--json*) echo '{"memory": {"live_peak": 3000000000}}' ;;
*) echo "umplan $*" >>"$FAKE_LOG"; while [ "$1" != -o ]; do shift; done; echo plan >"$2" ;;
esac
EOF_PLAN
printf '#!/bin/sh\necho "no GPU here" >&2; exit 1\n' >"$rp_bin/umrec-fails"
chmod +x "$rp_bin"/*
record_and_plan() { # HTOD BIN: bench/models.sh's record_and_plan at W/B 1.5 ($htod empty: calibrated)
	(cd "$ROOT" && PATH="$fake:$PATH" FAKE_LOG=$SCRATCH/rp.log htod=$1 bash -c \
		'. bench/models.sh && record_and_plan "$1" "$2" 1.5 8G python3 examples/pytorch/mlp.py --steps 3 &&
		 echo "$w $budget $htod" && ls "$2"' _ "$2" "$SCRATCH/rp")
}
run record_and_plan "" "$rp_bin"
[ "$status" -eq 0 ] && [ "$(echo $out)" = "3000000000 2000000000 40 m.db m.plan rec.err rec.out" ] &&
	grep -q -- "--capacity 2000000000 --htod-bw 40 -q -o $SCRATCH/rp/m.plan" "$SCRATCH/rp.log" \
	&& ok "record_and_plan: records, plans for W / RATIO at the calibrated speed, sets w, budget, htod" \
	|| not_ok "record_and_plan: records, plans for W / RATIO at the calibrated speed, sets w, budget, htod"
run record_and_plan 25 "$rp_bin"
[ "$status" -eq 0 ] && grep -q -- "--htod-bw 25 " "$SCRATCH/rp.log" \
	&& ok "record_and_plan: a set htod is kept" || not_ok "record_and_plan: a set htod is kept"
mv "$rp_bin/umrec-fails" "$rp_bin/umrec"
run record_and_plan "" "$rp_bin"
[ "$status" -eq 1 ] && grep -q "no GPU here" <<<"$out" \
	&& ok "record_and_plan: a failed recording returns 1 with its error" \
	|| not_ok "record_and_plan: a failed recording returns 1 with its error"

lockstep() { # MODEL OUTDIR: bench/overhead_lockstep.sh with the fakes, 2 rounds of 4 steps, the first skipped
	(cd "$ROOT" && PATH="$fake:$PATH" FAKE_LOG=$SCRATCH/ls.log BUILD=$SCRATCH/build-a SKIP=1 ROUNDS=2 \
		bash bench/overhead_lockstep.sh "$1" "$2" 4)
}
rm -f "$SCRATCH/ls.log"
run lockstep dlrm "$SCRATCH/ls"
expect_status 0 "overhead_lockstep: exit 0"
report=$(cat "$SCRATCH/ls/dlrm-lockstep.md" 2>/dev/null)
grep -q "^## dlrm, batch 4096, 4 steps, Fake GPU, aaaa111, " <<<"$report" &&
	grep -qF "| plain2 | 0 |" <<<"$report" && grep -qE "^\| plan \| 0 \| .* \| yes \|$" <<<"$report" \
	&& grep -qF "2 rounds; steps after the first 1," <<<"$report" \
	&& ok "overhead_lockstep: a heading, plain against plain and against the plan in ROUNDS rounds, outputs compared" \
	|| not_ok "overhead_lockstep: a heading, plain against plain and against the plan in ROUNDS rounds, outputs compared (got: $report)"
grep -q -- "--plan .*/dlrm.plan --policy plan --gpu-budget 2500000000 --max-managed 4G -- " "$SCRATCH/ls.log" &&
	grep -q "model examples/pytorch/dlrm.py --rows 2000000 --steps 4 --nvtx --batch-size 4096 --turn-fds" "$SCRATCH/ls.log" \
	&& ok "overhead_lockstep: the replay under B = 1.25 W and --max-managed 2 W, the runs in turn" \
	|| not_ok "overhead_lockstep: the replay under B = 1.25 W and --max-managed 2 W, the runs in turn"
[ "$(tar -tzf "$SCRATCH/ls/dlrm-lockstep.tar.gz" | grep -c '^runs/round-[12]/plain2\?\.out$\|^runs/round-[12]/plan\.out$')" = 6 ] \
	&& ok "overhead_lockstep: the six runs' outputs kept" || not_ok "overhead_lockstep: the six runs' outputs kept"
rm -f "$SCRATCH/ls.log"
RATIO=2 run lockstep dlrm "$SCRATCH/ls"
expect_status 0 "overhead_lockstep, RATIO: exit 0"
report=$(cat "$SCRATCH/ls/dlrm-lockstep-wb2.md" 2>/dev/null)
grep -q "^## dlrm, W/B 2, batch 4096, 4 steps, Fake GPU, aaaa111, " <<<"$report" &&
	grep -qF "| ideal2 | 0 |" <<<"$report" && grep -qE "^\| plan \| 0 \| .* \| yes \|$" <<<"$report" \
	&& ok "overhead_lockstep, RATIO: ideal against ideal and against the plan, in a report of its own" \
	|| not_ok "overhead_lockstep, RATIO: ideal against ideal and against the plan, in a report of its own (got: $report)"
grep -qxF "The plan's last run, steady medians per iteration: 0 fault migrations, 0.0 MB HtoD, 0.0 MB DtoH; modelled peak residency 1 MB under a budget of 0 MB. The launch callbacks: 0.000 ms of a steady iteration." <<<"$report" \
	&& ok "overhead_lockstep, RATIO: what the plan migrated and faulted, and its callbacks' time, from the stats" \
	|| not_ok "overhead_lockstep, RATIO: what the plan migrated and faulted, and its callbacks' time, from the stats"
[ "$(grep -c -- "--stats .*/stats/ideal2\?\.json --policy ideal --max-managed 4G -- " "$SCRATCH/ls.log")" = 4 ] &&
	grep -q -- "--stats .*/stats/plan.json --plan .*/m.plan --policy plan --gpu-budget 1000000000 --max-managed 4G -- " "$SCRATCH/ls.log" &&
	grep -q -- "--capacity 1000000000 --htod-bw 40 " "$SCRATCH/ls.log" \
	&& ok "overhead_lockstep, RATIO: planned for W / RATIO at the calibrated speed, ideal without a budget, the plan under it" \
	|| not_ok "overhead_lockstep, RATIO: planned for W / RATIO at the calibrated speed, ideal without a budget, the plan under it"
[ "$(tar -tzf "$SCRATCH/ls/dlrm-lockstep-wb2.tar.gz" | grep -c '^runs/round-[12]/\(ideal2\?\|plan\)\.out$\|^stats/\(ideal2\?\|plan\)\.json$')" = 9 ] \
	&& ok "overhead_lockstep, RATIO: the six runs' outputs and the three runs' last stats kept" \
	|| not_ok "overhead_lockstep, RATIO: the six runs' outputs and the three runs' last stats kept"
run lockstep nosuch "$SCRATCH/ls"
expect_status 2 "overhead_lockstep: an unknown model exits 2"
expect_err_has "unknown model 'nosuch'" "overhead_lockstep: the model is named"
FAKE_FREE_MIB=30000 run lockstep dlrm "$SCRATCH/ls"
expect_status 1 "overhead_lockstep: too little free GPU memory exits 1"

rm "$SCRATCH/build-b/COMMIT"
COMPARE="$SCRATCH/build-b" run suite "$SCRATCH/out3" grid
expect_status 2 "a build without COMMIT exits 2"
expect_err_has "build-b/COMMIT: make all first" "the build without COMMIT is named"
[ ! -e "$SCRATCH/out3/gpt2.csv" ] && ok "nothing runs then" || not_ok "nothing runs then"

FAKE_FREE_MIB=30000 run suite "$SCRATCH/out4" grid
expect_status 1 "too little free GPU memory exits 1"
expect_err_has "refusing to run" "the refusal says why"

finish
