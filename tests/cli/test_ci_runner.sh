#!/usr/bin/env bash
# test_ci_runner.sh: tests/run.sh fails CI on a test that did not run: a
# unit test not built (in the build or the sanitizer build), a unit binary
# that prints no cmocka summary, a CLI test that prints no ok line. run.sh
# runs on a tree of its own here: a copy of it, with one fake unit test
# and one fake CLI test. Each case is the healthy tree, which must pass,
# with one thing broken, and must fail naming that thing with the other
# tests' counts intact: a run.sh that did not run at all, or that counted
# nothing, fails every case.
source "$(dirname "$0")/lib.sh"
RUN_SH=$(cd "$(dirname "$0")/.." && pwd)/run.sh
T=$SCRATCH/tree

# fake_unit PATH OUTPUT [STATUS]: a unit-test binary that prints OUTPUT,
# exits STATUS (default 0).
fake_unit() {
	printf '#!/bin/sh\ncat <<"END"\n%s\nEND\nexit %s\n' "$2" "${3:-0}" >"$1"
	chmod +x "$1"
}
PASSED_2='[==========] Running 2 test(s).
[==========] 2 test(s) run.
[  PASSED  ] 2 test(s).'

# healthy: run.sh, unit test test_a built in build/ and asan/ (2 passed
# each), CLI test test_c (1 ok): 5 passed.
healthy() {
	rm -rf "$T"
	mkdir -p "$T/tests/unit" "$T/tests/cli" "$T/build/tests" "$T/asan/tests"
	cp "$RUN_SH" "$T/tests/run.sh"
	: >"$T/tests/unit/test_a.c"
	fake_unit "$T/build/tests/test_a" "$PASSED_2"
	fake_unit "$T/asan/tests/test_a" "$PASSED_2"
	echo 'echo "ok - c"' >"$T/tests/cli/test_c.sh"
}
run_tree() { run bash "$T/tests/run.sh" build asan; }

healthy
run_tree
expect_status 0 "the healthy tree passes"
expect_out_has "total: 5 passed, 0 failed" "the healthy tree counts every test"

# Each suite's line says how long it took: a CLI test that sleeps 1.2 s.
healthy
echo 'sleep 1.2; echo "ok - c"' >"$T/tests/cli/test_c.sh"
run_tree
if grep -qE '^test_c +1 passed, 0 failed +1\.[2-9] s$' <<<"$out" && grep -qE '^test_a +2 passed, 0 failed +0\.[0-9] s$' <<<"$out"; then
	ok "each suite's line says the seconds it took"
else
	not_ok "each suite's line says the seconds it took"
fi

healthy
rm "$T/build/tests/test_a"
run_tree
expect_status 1 "a unit test not built fails"
expect_out_has "failed: test_a" "a unit test not built is named"
expect_out_has "total: 3 passed, 1 failed" "a unit test not built counts one failure"

healthy
rm "$T/asan/tests/test_a"
run_tree
expect_status 1 "a unit test not built in the sanitizer build fails"
expect_out_has "failed: asan:test_a" "a unit test not built in the sanitizer build is named"
expect_out_has "total: 3 passed, 1 failed" "a unit test not built in the sanitizer build counts one failure"

healthy
fake_unit "$T/build/tests/test_a" "[==========] Running 2 test(s)."
run_tree
expect_status 1 "a unit binary that prints no summary fails"
expect_out_has "failed: test_a" "a unit binary that prints no summary is named"
expect_out_has "total: 3 passed, 1 failed" "a unit binary that prints no summary counts one failure"

healthy
echo 'echo "checked c"' >"$T/tests/cli/test_c.sh"
run_tree
expect_status 1 "a CLI test that prints no ok line fails"
expect_out_has "failed: test_c" "a CLI test that prints no ok line is named"
expect_out_has "total: 4 passed, 1 failed" "a CLI test that prints no ok line counts one failure"

# A skipped test ran nothing: it counts as a failure, in the unit tests
# (cmocka's SKIPPED line) and in the CLI tests (an ok line with "# SKIP").
healthy
fake_unit "$T/build/tests/test_a" "$PASSED_2
[  SKIPPED ] 1 test(s), listed below:"
run_tree
expect_status 1 "a unit test that skipped a test fails"
expect_out_has "failed: test_a" "a unit test that skipped a test is named"
expect_out_has "total: 5 passed, 1 failed" "a unit test that skipped a test counts it failed"

healthy
printf 'echo "ok - c"\necho "ok - d # SKIP no GPU"\n' >"$T/tests/cli/test_c.sh"
run_tree
expect_status 1 "a CLI test with a skipped check fails"
expect_out_has "failed: test_c" "a CLI test with a skipped check is named"
expect_out_has "total: 5 passed, 1 failed" "a CLI test's skipped check counts failed, not passed"

# A test that exits non-zero failed, whatever it printed before.
healthy
fake_unit "$T/build/tests/test_a" "$PASSED_2" 1
run_tree
expect_status 1 "a unit binary that fails after its summary fails"
expect_out_has "failed: test_a" "a unit binary that fails after its summary is named"
expect_out_has "total: 5 passed, 1 failed" "a unit binary that fails after its summary counts one failure"

healthy
printf 'echo "ok - c"\nexit 1\n' >"$T/tests/cli/test_c.sh"
run_tree
expect_status 1 "a CLI test that exits non-zero after its ok lines fails"
expect_out_has "failed: test_c" "a CLI test that exits non-zero after its ok lines is named"
expect_out_has "total: 5 passed, 1 failed" "a CLI test that exits non-zero after its ok lines counts one failure"

# A test that hangs is stopped at the time limit, with what it started,
# and fails named; the others still run and count.
export UMKIT_TEST_TIMEOUT_S=1
healthy
printf '#!/bin/sh\nsleep 60\n' >"$T/build/tests/test_a"
started=$SECONDS
run_tree
expect_status 1 "a unit binary that hangs fails"
expect_out_has "run.sh: test_a timed out after 1 s" "a unit binary that hangs is said to have timed out"
expect_out_has "total: 3 passed, 1 failed" "a unit binary that hangs counts one failure"
if [ $((SECONDS - started)) -lt 30 ]; then ok "a hanging unit binary is stopped at the limit"
else not_ok "a hanging unit binary is stopped at the limit (took $((SECONDS - started)) s)"; fi

healthy
printf 'echo "ok - c"\nsleep 60 &\nwait\n' >"$T/tests/cli/test_c.sh"
started=$SECONDS
run_tree
expect_status 1 "a CLI test that hangs after its ok lines fails"
expect_out_has "run.sh: test_c timed out after 1 s" "a CLI test that hangs is said to have timed out"
expect_out_has "total: 5 passed, 1 failed" "a CLI test that hangs counts one failure"
if [ $((SECONDS - started)) -lt 30 ]; then ok "a hanging CLI test and its child are stopped at the limit"
else not_ok "a hanging CLI test and its child are stopped at the limit (took $((SECONDS - started)) s)"; fi
unset UMKIT_TEST_TIMEOUT_S

# A binary whose source is gone (left in a local build folder) is still
# not run.
healthy
fake_unit "$T/build/tests/test_gone" "[  FAILED  ] 1 test(s), listed below:"
run_tree
expect_status 0 "a unit binary without its source is not run"
expect_out_has "total: 5 passed, 0 failed" "a unit binary without its source counts nothing"
finish
