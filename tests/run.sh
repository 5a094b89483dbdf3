#!/usr/bin/env bash
# Runs every CI test: the cmocka unit-test binaries in BUILD/tests (and, if
# given, again from a sanitizer build SAN_BUILD/tests) and the command-line
# tests in tests/cli. Prints one summary line per suite, with the seconds
# it took (CI must stay under 10 minutes), and a final "N passed, M
# failed"; exits non-zero if anything failed. A skipped test
# counts as failed: CI must not pass on what it did not run. So does a
# unit test not built or that printed no summary, and a CLI test that
# printed no ok line. A test that runs past UMKIT_TEST_TIMEOUT_S seconds
# (300) is stopped and fails: a bug that makes a loop endless would
# otherwise stall CI until CI's own limit ends everything unsaid.
# Usage: tests/run.sh [BUILD] [SAN_BUILD]
set -uo pipefail
build=${1:-build}
san_build=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
export UMKIT_FIXTURES="$root/$build/fixtures"   # make fixtures unpacks them
export UMKIT_BUILD="$root/$build"
log_dir=$(mktemp -d "${TMPDIR:-/tmp}/umkit-tests-XXXXXX")
# Every test's scratch files go under one directory removed at the end (the
# unit tests' test_path() dirs would otherwise stay behind).
scratch=$(mktemp -d "${TMPDIR:-/tmp}/umkit-scratch-XXXXXX")
trap 'rm -rf "$log_dir" "$scratch"' EXIT
export TMPDIR=$scratch
passed=0 failed=0 failed_names=()
limit=${UMKIT_TEST_TIMEOUT_S:-300}

# run_one NAME LOG COMMAND...: runs COMMAND from the checkout's root with
# its output in LOG, stopped (with what it started) past the time limit,
# which LOG then says; returns its status, and sets took to the tenths of
# a second it ran.
run_one() {
	local name=$1 log=$2 rc t0
	shift 2
	t0=$(date +%s%N)
	(cd "$root" && timeout -k 10 "$limit" "$@") >"$log" 2>&1
	rc=$?
	took=$(( ($(date +%s%N) - t0) / 100000000 ))
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "run.sh: $name timed out after $limit s" >>"$log"
	fi
	return "$rc"
}

# summary NAME PASSED FAILED: a suite's line, with the seconds it took.
summary() {
	printf '%-28s %3d passed, %d failed %4d.%d s\n' "$1" "$2" "$3" $((took / 10)) $((took % 10))
}

count() { # count FILE PATTERN: the number in the first line matching PATTERN
	grep -m1 -E "$2" "$1" | grep -oE '[0-9]+' | head -1
}

# run_units DIR PREFIX: every test of tests/unit, its binary in DIR/tests,
# reported as PREFIX and its name. A test not built (a failed or forgotten
# build) or that printed no summary (it stopped before cmocka ran) fails:
# either ran nothing, and CI must not pass without it. A binary whose
# source is gone (a reverted test, left in a local build folder) tests
# nothing that exists, and is not run.
run_units() {
	local src name t log rc p f s
	for src in "$root"/tests/unit/test_*.c; do
		[ -f "$src" ] || continue
		t=$root/$1/tests/$(basename "$src" .c)
		name=$2$(basename "$t")
		log=$log_dir/$name.log
		took=0
		if [ -x "$t" ]; then
			run_one "$name" "$log" "$t"
			rc=$?
		else
			echo "run.sh: $t is not built" >"$log"
			rc=1
		fi
		p=$(count "$log" '^\[  PASSED  \]')
		f=$(count "$log" '^\[  FAILED  \] [0-9]+ test'); f=${f:-0}
		s=$(count "$log" '^\[  SKIPPED \] [0-9]+ test'); f=$((f + ${s:-0}))
		if [ -z "$p" ]; then
			[ -x "$t" ] && echo "run.sh: $name printed no summary" >>"$log"
			p=0 f=$((f > 0 ? f : 1))
		fi
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # failed after its summary
		passed=$((passed + p)); failed=$((failed + f))
		if [ "$f" -ne 0 ]; then
			failed_names+=("$name"); cat "$log"
		fi
		summary "$name" "$p" "$f"
	done
}
run_units "$build" ""
[ -n "$san_build" ] && run_units "$san_build" "asan:"

for t in "$root"/tests/cli/test_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	run_one "$name" "$log_dir/$name.log" bash "$t"
	rc=$?
	p=$(grep -c '^ok ' "$log_dir/$name.log"); f=$(grep -c '^not ok ' "$log_dir/$name.log")
	s=$(grep -c '^ok .*# SKIP' "$log_dir/$name.log"); p=$((p - s)); f=$((f + s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	# One that checked nothing (it stopped before its first check) fails.
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		f=1; echo "run.sh: $name printed no ok line" >>"$log_dir/$name.log"
	fi
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$f" -ne 0 ]; then
		failed_names+=("$name"); cat "$log_dir/$name.log"
	fi
	summary "$name" "$p" "$f"
done

[ ${#failed_names[@]} -eq 0 ] || echo "failed: ${failed_names[*]}"
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
