#!/usr/bin/env bash
# Command-line tests for bench/launch_path: on the DLRM fixture planned for
# 2 GiB (its tables' tails in host memory, so no policy leaves the engine
# idle), a line per policy with every launch of the trace followed and a
# time per launch, with and without memory touched between launches;
# usage errors (status 2) and a missing trace or plan named (status 1).
source "$(dirname "$0")/lib.sh"
LAUNCH_PATH=$(realpath "$BIN/../bench/launch_path")
trace=$FIXTURES/h100_dlrm.db
plan=$SCRATCH/dlrm.plan
"$BIN/umplan" "$trace" -q --capacity 2G -o "$plan" || { not_ok "umplan planned the fixture"; finish; }
kernels=$(sqlite3 "$trace" "SELECT count(*) FROM kernel")

run "$LAUNCH_PATH" "$trace" "$plan" 2G 1
expect_status 0 "a run exits 0"
for policy in ideal ondemand deepum plan; do
	grep -qE "^$policy +launches $kernels, [0-9]+\.[0-9]{3} us per launch$" <<<"$out" \
		&& ok "$policy: every launch followed and timed" \
		|| not_ok "$policy: every launch followed and timed (got: $out)"
done
[ "$(grep -c . <<<"$out")" = 4 ] && ok "a line per policy, nothing else" || not_ok "a line per policy, nothing else"

run "$LAUNCH_PATH" "$trace" "$plan" 2G 1 64 4096
expect_status 0 "a run touching memory between launches exits 0"
[ "$(grep -cE "^[a-z]+ +launches $kernels, [0-9]+\.[0-9]{3} us per launch$" <<<"$out")" = 4 ] \
	&& ok "with memory touched between launches: the same four lines" \
	|| not_ok "with memory touched between launches: the same four lines (got: $out)"
run "$LAUNCH_PATH" "$trace" "$plan" 2G 1 64 0
expect_status 2 "a zero stride is a usage error"
expect_err_has "REPS and STRIDE must be positive" "the usage error says why"

run "$LAUNCH_PATH" "$trace" "$plan"
expect_status 2 "no budget is a usage error"
expect_err_has "usage: launch_path" "usage is printed"
run "$LAUNCH_PATH" "$trace" "$plan" lots
expect_status 2 "a bad budget is a usage error"
expect_err_has "'lots' is not a size" "the bad budget is named"
run "$LAUNCH_PATH" "$trace" "$plan" 1G 0
expect_status 2 "zero repetitions are a usage error"
run "$LAUNCH_PATH" "$SCRATCH/none.db" "$plan" 1G
expect_status 1 "a missing trace fails"
expect_err_has "$SCRATCH/none.db" "the missing trace is named"
run "$LAUNCH_PATH" "$trace" "$SCRATCH/none.plan" 1G
expect_status 1 "a missing plan fails"
expect_err_has "$SCRATCH/none.plan" "the missing plan is named"
finish
