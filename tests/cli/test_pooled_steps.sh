#!/usr/bin/env bash
# Command-line tests for bench/pooled_steps.py: the pooled and paired step
# times of a small synthetic set of runs (a folder of .out files and the
# same as a tarball), the bootstrap interval of the pairs' mean ratio
# (given with 3 or more pairs, the same on every run, holding the
# ratio the pairs share), --skip, --ref and --experiment, the errors
# for a folder without runs and a reference that did not run, and the usage
# errors for a negative --skip and OUTPUTS missing or not runs.
source "$(dirname "$0")/lib.sh"
ROOT=$(realpath "$(dirname "$0")/../..")
POOLED=$ROOT/bench/pooled_steps.py
export PYTHONDONTWRITEBYTECODE=1

runs=$SCRATCH/runs
mkdir -p "$runs"
# steps FILE FIRST REST...: a run's stdout with per_step_ms FIRST (a slow
# first step) and then the rest.
steps() {
	local f=$1 first=$2
	shift 2
	printf 'step 1 loss 2.5\nper_step_ms %s\n' "$(IFS=,; echo "$first,$*")" >"$runs/$f"
}
# plain_ms REP [RATIO]: round REP's plain step, 10, 20 and 10 ms, times RATIO.
plain_ms() { python3 -c "print(($1 == 2 and 20 or 10) * ${2:-1})"; }
# Plan 10 % slower in every pair; ideal 10 ms in rounds 1 and 2 only.
for rep in 1 2 3; do
	base=$(plain_ms $rep)
	steps "overhead.b8.r0.plain.$rep.out" 99 $base $base $base
	slow=$(plain_ms $rep 1.1)
	steps "overhead.b8.r0.8.plan.$rep.out" 99 "$slow" "$slow" "$slow"
done
steps overhead.b8.r0.ideal.1.out 99 10 10 10
steps overhead.b8.r0.ideal.2.out 99 10 10 10

row() { grep -F "| $1 |" <<<"$out"; }
run python3 "$POOLED" "$runs" --skip 1
expect_status 0 "a folder of runs: exit 0"
expect_out_has "Steps after the first 1 of each run" "the steps skipped are said"
plan=$(row "overhead b8 0.8 plan")
grep -qF "| 3 | 9 | 11.00 | 11.00 | +10.0% | +10.0% (+10.0% – +10.0%), 3 pairs | +10.0% – +10.0% |" <<<"$plan" \
	&& ok "plan: runs, steps, p10, median, pooled, paired and the interval against plain" \
	|| not_ok "plan: runs, steps, p10, median, pooled, paired and the interval against plain (got: $plan)"
ideal=$(row "overhead b8 0.0 ideal")
grep -qF "| +0.0% | -25.0% (-50.0% – +0.0%), 2 pairs | – |" <<<"$ideal" \
	&& ok "two pairs: a paired median and range, no interval" \
	|| not_ok "two pairs: a paired median and range, no interval (got: $ideal)"

# Pairs that differ: plan 5 % slower, 5 % faster and 20 % slower.
for rep in 1 2 3; do
	ratio=$(echo "1.05 0.95 1.2" | cut -d' ' -f$rep)
	steps "overhead.b8.r0.8.plan.$rep.out" 99 "$(plain_ms $rep $ratio)"
done
run python3 "$POOLED" "$runs" --skip 1
first=$(row "overhead b8 0.8 plan")
run python3 "$POOLED" "$runs" --skip 1
interval=$(row "overhead b8 0.8 plan" | awk -F'|' '{print $9}')
[ -n "$first" ] && [ "$first" = "$(row "overhead b8 0.8 plan")" ] && ok "the interval is the same on every run (a fixed seed)" \
	|| not_ok "the interval is the same on every run (a fixed seed)"
python3 - "$interval" <<'PY' && ok "the interval holds the pairs' geometric mean and lies within their range" \
	|| not_ok "the interval holds the pairs' geometric mean and lies within their range (got: $interval)"
import math, sys
lo, hi = (float(x.strip().rstrip("%")) / 100 + 1 for x in sys.argv[1].split("–"))
mean = math.exp(sum(map(math.log, (1.05, 0.95, 1.2))) / 3)
sys.exit(0 if 0.95 <= lo < mean < hi <= 1.2 else 1)
PY

tar -czf "$SCRATCH/outputs.tar.gz" -C "$runs" .
run python3 "$POOLED" "$SCRATCH/outputs.tar.gz" --skip 1
[ "$(row "overhead b8 0.8 plan")" = "$first" ] && ok "a tarball reads as the folder" \
	|| not_ok "a tarball reads as the folder"
run python3 "$POOLED" "$runs"
expect_out_has "Steps after the first 5 of each run" "--skip defaults to 5"
run python3 "$POOLED" "$runs" --skip 1 --ref ideal
grep -qF "| overhead b8 0.0 plain | 3 | 9 | 10.00 | 10.00 | +0.0% | +50.0% (+0.0% – +100.0%), 2 pairs | – |" <<<"$out" \
	&& ok "--ref ideal: plain against ideal, paired where ideal ran" \
	|| not_ok "--ref ideal: plain against ideal, paired where ideal ran (got: $(row "overhead b8 0.0 plain"))"

# --experiment: that experiment's rows and the reference's runs, no other.
steps warmup.b8.r3.plan.1.out 99 30 30 30
run python3 "$POOLED" "$runs" --skip 1 --experiment warmup
if [ -n "$(row "warmup b8 3.0 plan")" ] && [ -n "$(row "overhead b8 0.0 plain")" ] && [ -z "$(row "overhead b8 0.8 plan")" ]; then
	ok "--experiment warmup: its runs against plain, the other experiment's left out"
else not_ok "--experiment warmup: its runs against plain, the other experiment's left out"; fi
run python3 "$POOLED" "$runs" --skip 1 --experiment overhead
if [ -z "$(row "warmup b8 3.0 plan")" ] && [ -n "$(row "overhead b8 0.8 plan")" ]; then
	ok "--experiment overhead: the warm-up runs left out"
else not_ok "--experiment overhead: the warm-up runs left out"; fi

# One command's parts ("overhead grid"): each experiment has its own plain
# runs, of other lengths and at other times; a variant is compared with
# its own experiment's, not with the grid's (which sorts first).
mixed=$SCRATCH/mixed
mkdir -p "$mixed"
for rep in 1 2 3; do
	printf 'per_step_ms 99,20,20,20\n' >"$mixed/grid.b8.r0.plain.$rep.out"
	printf 'per_step_ms 99,10,10,10\n' >"$mixed/overhead.b8.r0.plain.$rep.out"
	printf 'per_step_ms 99,11,11,11\n' >"$mixed/overhead.b8.r0.8.plan.$rep.out"
	printf 'per_step_ms 99,11,11,11\n' >"$mixed/overhead-noplan.b8.r0.ideal.$rep.out"
done
run python3 "$POOLED" "$mixed" --skip 1
grep -qF "| +10.0% | +10.0% (+10.0% – +10.0%), 3 pairs |" <<<"$(row "overhead b8 0.8 plan")" \
	&& grep -qF "| +10.0% | +10.0% (+10.0% – +10.0%), 3 pairs |" <<<"$(row "overhead-noplan b8 0.0 ideal")" \
	&& ok "two parts in one command: each variant against its own experiment's plain" \
	|| not_ok "two parts in one command: each variant against its own experiment's plain (got: $(row "overhead b8 0.8 plan"))"

# maxbatch runs each batch once (rep 1) under every policy, ideal at W/B 0
# at each: a batch's runs are its own variant, compared with its own
# batch's ideal, none dropped for another batch's.
mb=$SCRATCH/maxbatch
mkdir -p "$mb"
printf 'per_step_ms 99,20,20\n' >"$mb/maxbatch.b8.r0.ideal.1.out"
printf 'per_step_ms 99,22,22\n' >"$mb/maxbatch.b8.r2.5.plan.1.out"
printf 'per_step_ms 99,30,30\n' >"$mb/maxbatch.b12.r0.ideal.1.out"
printf 'per_step_ms 99,45,45\n' >"$mb/maxbatch.b12.r3.75.plan.1.out"
run python3 "$POOLED" "$mb" --skip 1 --ref ideal
if grep -qF "| maxbatch b8 0.0 ideal | 1 | 2 | 20.00 | 20.00 |" <<<"$out" &&
	grep -qF "| maxbatch b12 0.0 ideal | 1 | 2 | 30.00 | 30.00 |" <<<"$out" &&
	grep -qF "| maxbatch b8 2.5 plan | 1 | 2 | 22.00 | 22.00 | +10.0% |" <<<"$out" &&
	grep -qF "| maxbatch b12 3.75 plan | 1 | 2 | 45.00 | 45.00 | +50.0% |" <<<"$out"; then
	ok "maxbatch: each batch's runs kept apart, against that batch's ideal"
else not_ok "maxbatch: each batch's runs kept apart, against that batch's ideal"; fi

mkdir -p "$SCRATCH/empty"
run python3 "$POOLED" "$SCRATCH/empty"
expect_status 1 "a folder without runs: exit 1"
expect_err_has "no run with per_step_ms" "it says so, naming the folder"
run python3 "$POOLED" "$runs" --ref deepum
expect_status 1 "a reference that did not run: exit 1"
expect_err_has "no deepum run to compare with" "it says which"

# Usage errors (status 2), naming what is wrong, no traceback.
run python3 "$POOLED" "$runs" --skip -1
expect_status 2 "a negative --skip is a usage error"
expect_err_has "--skip -1: the steps dropped are 0 or more" "it says so"
run python3 "$POOLED" "$SCRATCH/none"
expect_status 2 "OUTPUTS that is not there is a usage error"
expect_err_has "$SCRATCH/none: No such file or directory" "it names it"
run python3 "$POOLED" "$runs/overhead.b8.r0.plain.1.out"
expect_status 2 "OUTPUTS that is a file but no tar archive is a usage error"
expect_err_has "overhead.b8.r0.plain.1.out: neither a folder nor a readable tar archive" "it names it"
head -c 200 "$SCRATCH/outputs.tar.gz" >"$SCRATCH/cut.tar.gz"
run python3 "$POOLED" "$SCRATCH/cut.tar.gz"
expect_status 2 "an archive cut short is a usage error"
expect_err_lacks "Traceback" "without a traceback"
mkdir -p "$runs/sub.out"
run python3 "$POOLED" "$runs" --skip 1
expect_status 0 "a folder inside OUTPUTS is passed over"
finish
