#!/usr/bin/env bash
# Command-line tests for bench/alloc_path: on the DLRM fixture, every
# allocation and free of every repetition timed, the engine idle with a
# budget above the plan's peak and following launches below it; usage errors
# (status 2) and a missing trace or plan named (status 1).
source "$(dirname "$0")/lib.sh"
ALLOC_PATH=$(realpath "$BIN/../bench/alloc_path")
trace=$FIXTURES/h100_dlrm.db
plan=$SCRATCH/dlrm.plan
"$BIN/umplan" "$trace" -q -o "$plan" || { not_ok "umplan planned the fixture"; finish; }
events=$(sqlite3 "$trace" "SELECT count(*) + count(free_ns) FROM alloc")

run "$ALLOC_PATH" "$trace" "$plan" 64G 2
expect_status 0 "a run exits 0"
expect_out_has "calls $((2 * events)) " "every allocation and free of both repetitions is timed"
expect_out_has "engine idle" "the engine stays idle with a budget above the plan's peak"
run "$ALLOC_PATH" "$trace" "$plan" 64M 1 16 4096
expect_status 0 "a run that touches memory between calls exits 0"
expect_out_has "engine following launches" "a budget below the plan's peak follows launches"

run "$ALLOC_PATH" "$trace" "$plan"
expect_status 2 "no budget is a usage error"
expect_err_has "usage: alloc_path" "usage is printed"
run "$ALLOC_PATH" "$trace" "$plan" lots
expect_status 2 "a bad budget is a usage error"
expect_err_has "'lots' is not a size" "the bad budget is named"
run "$ALLOC_PATH" "$trace" "$plan" 99999999999999999999G
expect_status 2 "a budget past 2^64 bytes is a usage error"
expect_err_has "'99999999999999999999G' is too large" "the budget past 2^64 bytes is called too large"
run "$ALLOC_PATH" "$trace" "$plan" 1G 0
expect_status 2 "zero repetitions are a usage error"
run "$ALLOC_PATH" "$SCRATCH/none.db" "$plan" 1G
expect_status 1 "a missing trace fails"
expect_err_has "$SCRATCH/none.db" "the missing trace is named"
run "$ALLOC_PATH" "$trace" "$SCRATCH/none.plan" 1G
expect_status 1 "a missing plan fails"
expect_err_has "$SCRATCH/none.plan" "the missing plan is named"
finish
