# lib.sh: a tiny TAP-style harness for the command-line tests.
# Each check prints "ok - what" or "not ok - what" (tests/run.sh counts them).
# UMKIT_BUILD points at the build folder (set by tests/run.sh).
BIN=${UMKIT_BUILD:-build}/bin
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/umkit-cli-XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
failures=0

# run CMD...: runs it, keeping status in $status, stdout in $out, stderr in $err.
run() {
	"$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
	status=$?
	out=$(cat "$SCRATCH/out")
	err=$(cat "$SCRATCH/err")
}

ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); printf '  status=%s\n  stdout: %s\n  stderr: %s\n' "$status" "$out" "$err"; }

# expect_status N DESC
expect_status() { if [ "$status" -eq "$1" ]; then ok "$2"; else not_ok "$2 (wanted status $1)"; fi; }
# expect_err_has TEXT DESC: stderr contains TEXT
expect_err_has() { if grep -qF -- "$1" <<<"$err"; then ok "$2"; else not_ok "$2 (stderr lacks '$1')"; fi; }
# expect_out_has TEXT DESC: stdout contains TEXT
expect_out_has() { if grep -qF -- "$1" <<<"$out"; then ok "$2"; else not_ok "$2 (stdout lacks '$1')"; fi; }

finish() { exit $((failures > 0)); }
