#!/usr/bin/env bash
# Runs every CI test: the cmocka unit-test binaries in BUILD/tests (and, if
# given, again from a sanitizer build SAN_BUILD/tests) and the command-line
# tests in tests/cli. Prints one summary line per suite and a final
# "N passed, M failed"; exits non-zero if anything failed. A skipped test
# counts as failed: CI must not pass on what it did not run.
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

count() { # count FILE PATTERN: the number in the first line matching PATTERN
	grep -m1 -E "$2" "$1" | grep -oE '[0-9]+' | head -1
}

unit_tests=("$root/$build"/tests/test_*)
[ -n "$san_build" ] && unit_tests+=("$root/$san_build"/tests/test_*)
for t in "${unit_tests[@]}"; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	# A binary whose source is gone (a reverted test, left in a local
	# build folder) tests nothing that exists.
	[ -f "$root/tests/unit/$name.c" ] || continue
	case $t in "$root/$san_build"/*) [ -n "$san_build" ] && name="asan:$name" ;; esac
	(cd "$root" && "$t") >"$log_dir/$name.log" 2>&1
	rc=$?
	p=$(count "$log_dir/$name.log" '^\[  PASSED  \]'); p=${p:-0}
	f=$(count "$log_dir/$name.log" '^\[  FAILED  \] [0-9]+ test'); f=${f:-0}
	s=$(count "$log_dir/$name.log" '^\[  SKIPPED \] [0-9]+ test'); f=$((f + ${s:-0}))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # crashed before its summary
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$f" -ne 0 ]; then
		failed_names+=("$name"); cat "$log_dir/$name.log"
	fi
	printf '%-28s %3d passed, %d failed\n' "$name" "$p" "$f"
done

for t in "$root"/tests/cli/test_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	(cd "$root" && bash "$t") >"$log_dir/$name.log" 2>&1
	rc=$?
	p=$(grep -c '^ok ' "$log_dir/$name.log"); f=$(grep -c '^not ok ' "$log_dir/$name.log")
	s=$(grep -c '^ok .*# SKIP' "$log_dir/$name.log"); p=$((p - s)); f=$((f + s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$f" -ne 0 ]; then
		failed_names+=("$name"); cat "$log_dir/$name.log"
	fi
	printf '%-28s %3d passed, %d failed\n' "$name" "$p" "$f"
done

[ ${#failed_names[@]} -eq 0 ] || echo "failed: ${failed_names[*]}"
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
