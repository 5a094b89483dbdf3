# lib.sh: a tiny TAP-style harness for the command-line tests.
# Each check prints "ok - what" or "not ok - what" (tests/run.sh counts them).
# UMKIT_BUILD points at the build folder, UMKIT_FIXTURES at the unpacked
# fixtures (both set by tests/run.sh; `make fixtures` unpacks them there).
BIN=${UMKIT_BUILD:-build}/bin
FIXTURES=${UMKIT_FIXTURES:-${UMKIT_BUILD:-build}/fixtures}
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/umkit-cli-XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
failures=0
# The checks in Python (expect_json's and others') are assert statements,
# which PYTHONOPTIMIZE in the environment strips: every one would pass.
unset PYTHONOPTIMIZE
# python3 is the interpreter itself, first on PATH: a version manager's
# shim (pyenv's) takes most of a second to start it, and these tests start
# it hundreds of times.
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
	mkdir -p "$SCRATCH/python" && ln -s "$py" "$SCRATCH/python/python3" && PATH=$SCRATCH/python:$PATH
fi

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
# empty_text TEXT DESC: true, the check DESC failed, when TEXT is empty.
# The TEXT of the checks below is never empty: an empty TEXT is in every
# output, and lacking it in none, so the check could not fail (a variable
# left unset by a typo would do that silently).
empty_text() { [ -n "$1" ] && return 1; not_ok "$2 (an empty TEXT: a check that cannot fail)"; }
# expect_err_has TEXT DESC: stderr contains TEXT
expect_err_has() { empty_text "$1" "$2" || if grep -qF -- "$1" <<<"$err"; then ok "$2"; else not_ok "$2 (stderr lacks '$1')"; fi; }
# expect_err_lacks TEXT DESC: stderr does not contain TEXT
expect_err_lacks() { empty_text "$1" "$2" || if grep -qF -- "$1" <<<"$err"; then not_ok "$2 (stderr has '$1')"; else ok "$2"; fi; }
# expect_out_has TEXT DESC: stdout contains TEXT
expect_out_has() { empty_text "$1" "$2" || if grep -qF -- "$1" <<<"$out"; then ok "$2"; else not_ok "$2 (stdout lacks '$1')"; fi; }
# expect_out_word WORD DESC: stdout has WORD as a whole word (so -q is not
# found inside --quiet)
expect_out_word() { empty_text "$1" "$2" || if grep -qwF -- "$1" <<<"$out"; then ok "$2"; else not_ok "$2 (stdout lacks the word '$1')"; fi; }
# expect_out_lacks TEXT DESC: stdout does not contain TEXT
expect_out_lacks() { empty_text "$1" "$2" || if grep -qF -- "$1" <<<"$out"; then not_ok "$2 (stdout has '$1')"; else ok "$2"; fi; }
# expect_help_lists ITEM DESC: --help's text on stdout has a line of its
# own for ITEM: a line that begins with it, after the indentation and a
# short option's "-x, " ("  -q, --quiet   no summary"), followed by a
# space, a comma, ':' or the line's end. A word found anywhere (the usage
# line names every option, the exit status --help and --version) would
# pass with ITEM's own line gone.
expect_help_lists() {
	empty_text "$1" "$2" || if awk -v item="$1" '
	function at_start(s) { return index(s, item) == 1 && substr(s, length(item) + 1, 1) ~ /^([ ,:]|)$/ }
	{ sub(/^ */, ""); if (at_start($0)) found = 1; if (sub(/^-[A-Za-z], /, "") && at_start($0)) found = 1 }
	END { exit !found }' <<<"$out"; then ok "$2"
	else not_ok "$2 (stdout has no line for '$1')"; fi
}

# expect_json CODE DESC: CODE, Python with the JSON on stdout as d, passes
# (its asserts hold)
expect_json() { if python3 -c "import json, sys; d = json.load(sys.stdin); $1" <<<"$out"; then ok "$2"; else not_ok "$2"; fi; }

finish() { exit $((failures > 0)); }

# hold_lock DB SQL [SECONDS]: another process opens DB, runs SQL
# (statements split at ';') and keeps the connection, with the locks it
# holds, for SECONDS (default 60) or until release_lock.
hold_lock() {
	rm -f "$SCRATCH/lock.held"
	python3 - "$1" "$2" "$SCRATCH/lock.held" "${3:-60}" <<'PY' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
for sql in sys.argv[2].split(";"):
    if sql.strip():
        db.execute(sql).fetchall()
open(sys.argv[3], "w").close()
time.sleep(float(sys.argv[4]))
PY
	lock_pid=$!
	for _ in $(seq 200); do
		[ -e "$SCRATCH/lock.held" ] && return
		kill -0 "$lock_pid" 2>/dev/null || break # the helper failed
		sleep 0.05
	done
	# Never held (the helper failed, or took over 10 s): the checks that
	# follow would pass on a file no one holds, testing nothing.
	not_ok "hold_lock: another process holds $1 locked ($2)"
}
release_lock() { kill "$lock_pid" 2>/dev/null; wait "$lock_pid" 2>/dev/null; }

# make_trace PATH [EXTRA_SQL]: a small well-formed trace, built with the
# sqlite3 shell from schema/trace.sql, then EXTRA_SQL: 6 iterations of 4
# kernels (execution IDs 11..14), a 4 MiB weight used by kernels 0 and 2, and
# per iteration a 2 MiB activation used by kernels 1 and 3.
make_trace() {
	rm -f "$1"
	{
		cat "$(dirname "${BASH_SOURCE[0]}")/../../schema/trace.sql"
		cat <<'EOF'
PRAGMA user_version = 1;
INSERT INTO meta VALUES ('schema_version', '1'), ('status', 'complete'),
  ('device_name', 'test device'), ('device_memory', '1073741824'), ('command', 'python train.py');
INSERT INTO string VALUES (1, 'k0'), (2, 'k1'), (3, 'k2'), (4, 'k3');
INSERT INTO alloc(id, address, size, reserved, api, alloc_ns) VALUES (1, 4294967296, 4194304, 4194304, 'cudaMalloc', 1000);
WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 23)
INSERT INTO kernel(correlation_id, seq, exec_id, name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z,
                   shared_mem, launch_ns, start_ns, end_ns)
SELECT 100 + n, n, 11 + n % 4, 1 + n % 4, 1, 1, 1, 32, 1, 1, 0,
       (n + 1) * 1000000 - 10000, (n + 1) * 1000000, (n + 1) * 1000000 + 100000 FROM g;
WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 5)
INSERT INTO alloc(id, address, size, reserved, api, alloc_ns, free_ns)
SELECT 2 + n, 8589934592, 2097152, 2097152, 'cudaMalloc', (4 * n + 2) * 1000000 - 30000, (4 * n + 4) * 1000000 + 5000 FROM i;
INSERT INTO kernel_arg SELECT 100 + seq, 0, CASE WHEN seq % 2 = 0 THEN 1 ELSE 2 + seq / 4 END, 0 FROM kernel;
EOF
		[ -n "${2:-}" ] && echo "$2"
	} | sqlite3 "$1"
}
