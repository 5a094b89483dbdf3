# test_umrec.sh: umrec's command line, exit statuses and setup errors.
# Needs no GPU: every check stops before the program would run, except
# where a driver is present (then the no-driver check is skipped).
source "$(dirname "$0")/lib.sh"
UMREC=$BIN/umrec

run "$UMREC" --help
expect_status 0 "--help exits 0"
for opt in -o --output --max-managed --no-managed --framework-cache -q --quiet -h --help --version \
	UMKIT_LIBDIR UMKIT_CUPTI "Exit status"; do
	expect_help_lists "$opt" "--help documents $opt, in a line of its own"
done

run "$UMREC" --version
expect_status 0 "--version exits 0"
expect_out_has "umrec (umkit) $(cat VERSION)" "--version prints the version"

# Help that cannot be written (a full disk: /dev/full) is an error.
for opt in --help --version; do
	"$UMREC" $opt >/dev/full 2>"$SCRATCH/full.err"
	status=$? err=$(cat "$SCRATCH/full.err")
	expect_status 1 "umrec $opt > /dev/full: exit 1"
	expect_err_has "writing to standard output failed: No space left on device" "umrec $opt > /dev/full: says so"
done

run "$UMREC"
expect_status 2 "no arguments: usage error"
expect_err_has "no command given" "no arguments: says the command is missing"

run "$UMREC" -q -o x.db
expect_status 2 "options without a command: usage error"

run "$UMREC" --frobnicate true
expect_status 2 "unknown option: usage error"
expect_err_has "unknown option '--frobnicate'" "unknown option: names it"
expect_err_has "umrec --help" "usage error: points at --help"

run "$UMREC" --max-managed 12parsecs true
expect_status 2 "bad --max-managed: usage error"
expect_err_has "'12parsecs'" "bad --max-managed: names the text"

run "$UMREC" --max-managed=0 true
expect_status 2 "--max-managed=0: usage error"

run "$UMREC" --max-managed 40 true
expect_status 2 "--max-managed below one 2 MiB block: usage error"
expect_err_has "'40' is 40 bytes, less than one 2 MiB block of memory (did you mean 40G?)" \
	"--max-managed 40: suggests the missing unit"

run "$UMREC" --max-managed
expect_status 2 "--max-managed without a value: usage error"

run "$UMREC" -o
expect_status 2 "-o without a value: usage error"
expect_err_has "option '-o' needs a file name" "-o without a value: says so"

run "$UMREC" --no-managed --max-managed 8G true
expect_status 2 "--no-managed with --max-managed: usage error"

# Setup errors, in the order umrec checks them: the trace path, the library,
# libcupti, the driver. An earlier trace is removed only once all passed
# and the program runs.
run "$UMREC" -o "$SCRATCH/no/such/dir/t.db" true
expect_status 3 "-o into a missing folder: setup error"
expect_err_has "$SCRATCH/no/such/dir" "-o into a missing folder: names it"
# A path that names no file, or a file where its folder should be.
run "$UMREC" -o "$SCRATCH/" true
expect_status 3 "-o naming a folder: setup error"
expect_err_has "-o $SCRATCH/: not a file name" "-o naming a folder: says it names no file"
: >"$SCRATCH/plain-file"
run "$UMREC" -o "$SCRATCH/plain-file/t.db" true
expect_status 3 "-o under a file: setup error"
expect_err_has "cannot write the trace $SCRATCH/plain-file/t.db: $SCRATCH/plain-file: Not a directory" \
	"-o under a file: names it and says why"

echo "my notes" >"$SCRATCH/notes.txt"
run "$UMREC" -o "$SCRATCH/notes.txt" true
expect_status 3 "-o naming a non-trace file: setup error"
expect_err_has "is not a trace" "-o naming a non-trace file: refuses to replace it"
if [ "$(cat "$SCRATCH/notes.txt")" = "my notes" ]; then ok "-o naming a non-trace file: file untouched"
else not_ok "-o naming a non-trace file: file untouched"; fi

# A trace another process holds open in WAL mode (a recording still
# writing it) is kept, and said to be in use, not to be no trace.
make_trace "$SCRATCH/held.db" "PRAGMA journal_mode = WAL;" >/dev/null
hold_lock "$SCRATCH/held.db" "SELECT count(*) FROM meta"
run "$UMREC" -o "$SCRATCH/held.db" true
release_lock
expect_status 3 "-o naming a trace in use: setup error"
expect_err_has "held.db is in use by another process, which holds it locked: not replacing it" \
	"-o naming a trace in use: says so, naming it"
expect_err_lacks "not a trace file" "-o naming a trace in use: does not call it another file"
if [ "$(sqlite3 "$SCRATCH/held.db" 'SELECT count(*) FROM kernel')" = 24 ]; then ok "-o naming a trace in use: trace untouched"
else not_ok "-o naming a trace in use: trace untouched"; fi
# A trace in rollback-journal mode (as umrec leaves it) that a reader
# holds inside a transaction (a sqlite3 shell after BEGIN; SELECT ...),
# with only a shared lock, is in use too, and kept byte for byte.
make_trace "$SCRATCH/read.db" >/dev/null
cp "$SCRATCH/read.db" "$SCRATCH/read.copy"
hold_lock "$SCRATCH/read.db" "BEGIN; SELECT count(*) FROM meta"
run "$UMREC" -o "$SCRATCH/read.db" true
release_lock
expect_status 3 "-o naming a trace being read: setup error"
expect_err_has "read.db is in use by another process, which holds it locked: not replacing it" \
	"-o naming a trace being read: says so, naming it"
if cmp -s "$SCRATCH/read.db" "$SCRATCH/read.copy" && [ ! -e "$SCRATCH/read.db-journal" ]; then
	ok "-o naming a trace being read: trace byte-identical"
else not_ok "-o naming a trace being read: trace byte-identical"; fi

sqlite3 "$SCRATCH/old.db" ".read schema/trace.sql"
UMKIT_LIBDIR=/nonexistent run "$UMREC" -o "$SCRATCH/old.db" true
expect_status 3 "library missing: setup error"
expect_err_has "cannot find libumrec.so in UMKIT_LIBDIR=/nonexistent" "library missing: says what"
expect_err_has "/nonexistent/libumrec.so" "library missing: names the path looked for"
if [ -f "$SCRATCH/old.db" ]; then ok "failed setup keeps the earlier trace"
else not_ok "failed setup keeps the earlier trace"; fi

# Options stop at the command; '--' is optional.
UMKIT_LIBDIR=/nonexistent run "$UMREC" -q true --frobnicate
expect_status 3 "options after the command belong to it"
UMKIT_LIBDIR=/nonexistent run "$UMREC" -- --odd-command
expect_status 3 "'--' ends the options"

# A stand-in library and libcupti get past those checks to the driver's.
mkdir -p "$SCRATCH/lib" "$SCRATCH/cupti"
: >"$SCRATCH/lib/libumrec.so"
: >"$SCRATCH/cupti/libcupti.so.13"

UMKIT_LIBDIR=$SCRATCH/lib UMKIT_CUPTI=/nonexistent run "$UMREC" true
expect_status 3 "libcupti missing: setup error"
expect_err_has "UMKIT_CUPTI=/nonexistent" "libcupti missing: names what was looked for"
# A libcupti found nowhere along a long LD_LIBRARY_PATH (a module system's):
# the message keeps its end, the way out, after the folders looked in.
mkdir -p "$SCRATCH/needs-cupti"
echo 'void umkit_stand_in(void) {}' >"$SCRATCH/needs-cupti/c.c"
${CC:-cc} -shared -o "$SCRATCH/needs-cupti/libcupti.so.99" -Wl,-soname,libcupti.so.99 "$SCRATCH/needs-cupti/c.c"
${CC:-cc} -shared -o "$SCRATCH/needs-cupti/libumrec.so" "$SCRATCH/needs-cupti/c.c" -Wl,--no-as-needed \
	-L"$SCRATCH/needs-cupti" -l:libcupti.so.99
rm "$SCRATCH/needs-cupti/libcupti.so.99"
long_path=$(for i in $(seq 30); do printf '/opt/modules/some-library/version-%02d/lib64:' "$i"; done)
UMKIT_LIBDIR=$SCRATCH/needs-cupti LD_LIBRARY_PATH=$long_path run "$UMREC" true
expect_status 3 "libcupti nowhere along a long LD_LIBRARY_PATH: setup error"
expect_err_has "cannot find libcupti.so.99 (looked in /opt/modules/some-library/version-01/lib64" \
	"libcupti nowhere along a long LD_LIBRARY_PATH: names it and where it was looked for"
expect_err_has "): set UMKIT_CUPTI to its path" "libcupti nowhere along a long LD_LIBRARY_PATH: the way out survives"

# Where a driver is installed (a GPU developer's make test), its absence
# cannot be shown: that the check finds it can.
if { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libcuda\.so\.1 '; then
	UMKIT_LIBDIR=$SCRATCH/lib UMKIT_CUPTI=$SCRATCH/cupti run "$UMREC" -o "$SCRATCH/t.db" true
	expect_err_lacks "no NVIDIA driver" "a driver installed: found"
	expect_status 0 "a driver installed: the program's status"
else
	UMKIT_LIBDIR=$SCRATCH/lib UMKIT_CUPTI=$SCRATCH/cupti run "$UMREC" -o "$SCRATCH/t.db" true
	expect_status 3 "no driver: setup error"
	expect_err_has "no NVIDIA driver (libcuda.so.1 not found): umrec needs a GPU" "no driver: clear message"
fi

# The run itself, without a GPU: the toolkit's stub libcuda stands in for
# the driver (umrec only dlopens it) and for libumrec.so (a harmless library
# to preload); the "program" is a script that looks at its environment and
# writes the trace the recorder would have written.
stub=${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so
if [ ! -f "$stub" ]; then
	not_ok "runs the program: no $stub to stand in for the driver (the CUDA toolkit is a build dependency)"
	finish
fi
mkdir -p "$SCRATCH/driver"
cp "$stub" "$SCRATCH/driver/libcuda.so.1"
cp "$stub" "$SCRATCH/lib/libumrec.so"
UMREC_ABS=$(cd "$BIN" && pwd)/umrec
REAL_SCRATCH=$(cd "$SCRATCH" && pwd -P)
SCHEMA_VERSION=$(sed -n 's/^#define TRACE_SCHEMA_VERSION //p' common/trace_schema.h)
SCHEMA=$PWD/schema/trace.sql

# fake_umrec ARGS...: umrec with the stand-ins (the library in $libdir),
# run from $SCRATCH.
libdir=$SCRATCH/lib
fake_umrec() {
	pushd "$SCRATCH" >/dev/null || return
	rm -f env.txt
	UMKIT_LIBDIR=$libdir UMKIT_CUPTI=$SCRATCH/cupti LD_LIBRARY_PATH=$SCRATCH/driver \
		run "$UMREC_ABS" "$@"
	popd >/dev/null || return
}

# The program: writes its environment to env.txt; given a status, also a
# trace with that status (and, unless "empty", 2 kernels and 1 allocation);
# exits with its second argument.
cat >"$SCRATCH/program.sh" <<PROGRAM
env >"\$PWD/env.txt"
if [ -n "\$1" ]; then
	status=\$1; [ "\$1" = empty ] && status=complete
	sqlite3 "\$UMKIT_TRACE" ".read $SCHEMA" "PRAGMA user_version = $SCHEMA_VERSION" \\
		"INSERT OR REPLACE INTO meta VALUES ('status', '\$status')"
	[ "\$1" = empty ] || sqlite3 "\$UMKIT_TRACE" "INSERT INTO string VALUES (1, 'k')" \\
		"INSERT INTO kernel (correlation_id, name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem) VALUES (1, 1, 1, 1, 1, 1, 1, 1, 0), (2, 1, 1, 1, 1, 1, 1, 1, 0)" \\
		"INSERT INTO alloc (id, address, size, reserved, api, alloc_ns, live_at_exit) VALUES (1, 2097152, 64, 2097152, 'cudaMalloc', 1, 1)"
fi
[ "\${2:-}" = killed ] && kill -TERM \$\$
exit "\${2:-0}"
PROGRAM
env_has() { # env_has NAME=VALUE DESC: the program saw exactly that
	if grep -qxF -- "$1" "$SCRATCH/env.txt"; then ok "$2"; else not_ok "$2 (env lacks '$1')"; fi
}
env_lacks() { # env_lacks NAME DESC: the program ran and did not see NAME
	if [ -f "$SCRATCH/env.txt" ] && ! grep -q "^$1=" "$SCRATCH/env.txt"; then ok "$2"; else not_ok "$2 ($1 is set)"; fi
}

fake_umrec sh -c 'exit 7'
expect_status 7 "exits with the program's status"
expect_err_has "no trace was written to $REAL_SCRATCH/trace.db" "no trace: says so, naming the default path"
# The recorder claims the file before it opens it as a trace: left empty
# (the opening failed), it is not a trace to read.
fake_umrec sh -c ': >"$UMKIT_TRACE"'
expect_err_has "no trace was written to $REAL_SCRATCH/trace.db" "claimed, never written: no trace, says so"
if [ ! -e "$SCRATCH/trace.db" ]; then ok "claimed, never written: the empty file is removed"
else not_ok "claimed, never written: the empty file is removed"; fi
fake_umrec sh -c 'kill -TERM $$'
expect_status 143 "program killed by SIGTERM: 143"
# A program killed by SIGINT kills umrec with SIGINT too: a shell running
# umrec in a script stops there on ^C only then. (Python tells a status
# of 130 from death by signal 2, which bash reports alike.)
died_of() { # died_of SIGNUM DESC UMREC-ARGS...: umrec ended by that signal
	local want=$1 desc=$2
	shift 2
	local got
	got=$(cd "$SCRATCH" && UMKIT_LIBDIR=$SCRATCH/lib UMKIT_CUPTI=$SCRATCH/cupti LD_LIBRARY_PATH=$SCRATCH/driver \
		python3 -c 'import subprocess, sys; print(subprocess.run(sys.argv[1:], stderr=subprocess.DEVNULL).returncode)' \
		"$UMREC_ABS" "$@")
	if [ "$got" = "$want" ]; then ok "$desc"; else not_ok "$desc (returncode $got, wanted $want)"; fi
}
died_of -2 "program killed by SIGINT: umrec dies of SIGINT" sh -c 'kill -INT $$'
died_of 130 "program exiting 130: umrec exits 130" sh -c 'exit 130'
died_of -15 "program killed by SIGTERM: umrec dies of SIGTERM" sh -c 'kill -TERM $$'
died_of 139 "program killed by SIGSEGV: umrec exits 139, no crash of its own" sh -c 'kill -SEGV $$'
# A terminal's ^C reaches the whole foreground process group, so umrec
# passes none on to a program in its group; but timeout(1) puts its
# command in a group of its own, which the terminal's ^C misses: umrec
# passes it on to that one (a review found ^C lost there). On a
# pseudo-terminal: ^C one second in, the program ends by SIGINT at once.
got=$(cd "$SCRATCH" && UMKIT_LIBDIR=$SCRATCH/lib UMKIT_CUPTI=$SCRATCH/cupti LD_LIBRARY_PATH=$SCRATCH/driver \
	timeout 60 python3 - "$UMREC_ABS" <<'PY'
import os, pty, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "-q", "timeout", "30", "sleep", "10"])
time.sleep(1.0)
t0 = time.time()
os.write(fd, b"\x03")
while True:  # drain the terminal, or a full one could hold the child
    try:
        if not os.read(fd, 1024):
            break
    except OSError:
        break
_, st = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(st), "%.0f" % (time.time() - t0))
PY
)
if [ "${got%% *}" = -2 ] && [ "${got##* }" -lt 5 ]; then ok "^C at a terminal reaches a program in a group of its own (timeout)"
else not_ok "^C at a terminal reaches a program in a group of its own (timeout) (returncode, seconds: $got)"; fi
# umrec started with SIGCHLD ignored (a disposition exec keeps): the
# program's status still comes back, and the program still sees it ignored.
got=$(cd "$SCRATCH" && UMKIT_LIBDIR=$SCRATCH/lib UMKIT_CUPTI=$SCRATCH/cupti LD_LIBRARY_PATH=$SCRATCH/driver \
	python3 -c 'import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execvp(sys.argv[1], sys.argv[1:])' \
	"$UMREC_ABS" -q python3 -c 'import signal, sys; sys.exit(5 if signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN else 6)' \
	2>/dev/null; echo $?)
if [ "$got" = 5 ]; then ok "SIGCHLD ignored: umrec exits with the program's status, which sees it ignored"
else not_ok "SIGCHLD ignored: umrec exits with the program's status, which sees it ignored (got $got)"; fi
# umrec leading a session on a terminal (ssh -t, a terminal window's
# command): the terminal's hangup reaches umrec alone, which passes it on.
if (cd "$SCRATCH" && rm -f hup.pid && UMKIT_LIBDIR=$SCRATCH/lib UMKIT_CUPTI=$SCRATCH/cupti LD_LIBRARY_PATH=$SCRATCH/driver \
	python3 - "$UMREC_ABS" <<'PY'
import os, pty, signal, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "-q", "sh", "-c", "echo $$ >hup.pid; exec sleep 30"])
deadline = time.time() + 10
while not os.path.exists("hup.pid") or not open("hup.pid").read().strip():
    if time.time() > deadline:
        sys.exit("the program did not start")
    time.sleep(0.05)
program = int(open("hup.pid").read())
os.close(fd)  # the terminal hangs up
deadline = time.time() + 10
while time.time() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        sys.exit(0 if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGHUP else 1)
    time.sleep(0.05)
os.kill(program, signal.SIGKILL)
os.waitpid(pid, 0)
sys.exit("umrec and the program outlived the hangup")
PY
); then ok "hangup of umrec's terminal, umrec leading the session: the program and umrec end"
else not_ok "hangup of umrec's terminal, umrec leading the session: the program and umrec end"; fi

sqlite3 "$SCRATCH/trace.db" ".read $SCHEMA"
fake_umrec umkit-no-such-command
expect_status 127 "command not found: 127"
expect_err_has "cannot run 'umkit-no-such-command': No such file or directory" "command not found: says so"
if [ -f "$SCRATCH/trace.db" ]; then ok "command not found: the earlier trace is kept"
else not_ok "command not found: the earlier trace is kept"; fi
printf '#!/umkit/no-such-shell\n' >"$SCRATCH/orphan.sh"
chmod +x "$SCRATCH/orphan.sh"
fake_umrec ./orphan.sh
expect_status 127 "a script whose interpreter is missing: 127"
expect_err_has "cannot run './orphan.sh': its interpreter '/umkit/no-such-shell': No such file or directory" \
	"a script whose interpreter is missing: names it"
if [ -f "$SCRATCH/trace.db" ]; then ok "a script whose interpreter is missing: the earlier trace is kept"
else not_ok "a script whose interpreter is missing: the earlier trace is kept"; fi
# An ELF program whose interpreter (PT_INTERP) is missing passes every
# check but the exec's own: the earlier trace waits aside until the
# program runs, and is put back when it cannot.
echo 'int main(void) { return 0; }' | ${CC:-cc} -x c - -o "$SCRATCH/no-loader" \
	-Wl,--dynamic-linker=/umkit/no-such-ld.so
fake_umrec ./no-loader
expect_status 127 "an ELF program whose interpreter is missing: 127"
expect_err_has "cannot run './no-loader': the ELF interpreter it names (its dynamic loader): No such file or directory" \
	"an ELF program whose interpreter is missing: says so"
if [ "$(sqlite3 "$SCRATCH/trace.db" "SELECT count(*) FROM sqlite_master WHERE name = 'kernel'")" = 1 ]; then
	ok "an ELF program whose interpreter is missing: the earlier trace is kept"
else
	not_ok "an ELF program whose interpreter is missing: the earlier trace is kept"
fi
if [ -z "$(find "$SCRATCH" -maxdepth 1 -name '.trace.db.*')" ]; then ok "an ELF program whose interpreter is missing: nothing left aside"
else not_ok "an ELF program whose interpreter is missing: nothing left aside"; fi
fake_umrec ./program.sh
expect_status 126 "command not executable: 126"
chmod +x "$SCRATCH/program.sh"

mkdir -p "$SCRATCH/sub"
LD_PRELOAD=$SCRATCH/driver/libcuda.so.1 UMKIT_NO_MANAGED=1 UMKIT_LOG=debug \
	fake_umrec -q --max-managed 8G -o sub/../t.db -- ./program.sh "" 0
expect_status 0 "the program runs"
env_has "UMKIT_TRACE=$REAL_SCRATCH/t.db" "env: UMKIT_TRACE is the absolute trace path"
env_has "UMKIT_MAX_MANAGED=8589934592" "env: UMKIT_MAX_MANAGED in bytes"
env_lacks UMKIT_NO_MANAGED "env: a stale UMKIT_NO_MANAGED is removed"
env_has "UMKIT_LOG=quiet" "env: -q sets UMKIT_LOG=quiet"
env_has "UMKIT_COMMAND=./program.sh '' 0" "env: UMKIT_COMMAND quotes the command line"
env_has "UMKIT_OPTIONS=-q --max-managed 8G -o sub/../t.db" "env: UMKIT_OPTIONS as given, without '--'"
env_has "LD_PRELOAD=$SCRATCH/lib/libumrec.so:$SCRATCH/driver/libcuda.so.1" \
	"env: the library first in LD_PRELOAD"
env_has "CUDA_INJECTION64_PATH=$SCRATCH/lib/libumrec.so" "env: CUDA_INJECTION64_PATH"
env_has "NVTX_INJECTION64_PATH=$REAL_SCRATCH/cupti/libcupti.so.13" "env: NVTX_INJECTION64_PATH is libcupti"
env_has "PYTORCH_NO_CUDA_MEMORY_CACHING=1" "env: PyTorch's cache off by default"
# Another tool's injections are replaced, each said; the user's UMKIT_LOG
# is kept without -q.
UMKIT_LOG=debug CUDA_INJECTION64_PATH=/opt/profiler/libinject.so NVTX_INJECTION64_PATH=/opt/profiler/libnvtx.so \
	fake_umrec ./program.sh
expect_status 0 "another tool's injections set: the program runs"
env_has "CUDA_INJECTION64_PATH=$SCRATCH/lib/libumrec.so" "env: another tool's CUDA_INJECTION64_PATH replaced by the library"
env_has "NVTX_INJECTION64_PATH=$REAL_SCRATCH/cupti/libcupti.so.13" "env: another tool's NVTX_INJECTION64_PATH replaced by libcupti"
expect_err_has "replacing CUDA_INJECTION64_PATH=/opt/profiler/libinject.so: another tool's injection cannot run with umrec" \
	"another tool's CUDA_INJECTION64_PATH: its replacement is warned about"
expect_err_has "replacing NVTX_INJECTION64_PATH=/opt/profiler/libnvtx.so: another tool's injection cannot run with umrec" \
	"another tool's NVTX_INJECTION64_PATH: its replacement is warned about"
env_has "UMKIT_LOG=debug" "env: the user's UMKIT_LOG is kept without -q"

# A library in a folder whose path holds a space cannot be preloaded
# (LD_PRELOAD splits at spaces): umrec says so, and the way out it
# offers, a link to that folder named in UMKIT_LIBDIR, works.
mkdir -p "$SCRATCH/my tools"
cp "$SCRATCH/lib/libumrec.so" "$SCRATCH/my tools/"
ln -sfn "my tools" "$SCRATCH/mytools"
libdir="$SCRATCH/my tools" fake_umrec ./program.sh
expect_status 3 "a library path with a space: setup error"
expect_err_has "ln -s '$SCRATCH/my tools' LINK, then UMKIT_LIBDIR=LINK" "a library path with a space: offers a link in UMKIT_LIBDIR"
libdir=$SCRATCH/mytools fake_umrec ./program.sh
expect_status 0 "a library path with a space, through a link in UMKIT_LIBDIR: the program runs"
env_has "CUDA_INJECTION64_PATH=$SCRATCH/mytools/libumrec.so" \
	"a library path with a space, through a link in UMKIT_LIBDIR: injected through the link"

UMKIT_MAX_MANAGED=1 UMKIT_PLAN=/stale.bin UMKIT_POLICY=deepum fake_umrec --no-managed --framework-cache ./program.sh
env_lacks UMKIT_PLAN "env: a stale UMKIT_PLAN is removed"
env_lacks UMKIT_POLICY "env: a stale UMKIT_POLICY is removed"
env_has "UMKIT_NO_MANAGED=1" "env: --no-managed"
env_lacks UMKIT_MAX_MANAGED "env: a stale UMKIT_MAX_MANAGED is removed"
env_lacks PYTORCH_NO_CUDA_MEMORY_CACHING "env: --framework-cache leaves PyTorch's cache on"
PYTORCH_NO_CUDA_MEMORY_CACHING=0 fake_umrec ./program.sh
env_has "PYTORCH_NO_CUDA_MEMORY_CACHING=0" "env: the user's PyTorch setting is kept"
expect_err_has "PYTORCH_NO_CUDA_MEMORY_CACHING=0 keeps PyTorch's caching allocator on" \
	"env: a PyTorch setting that keeps the cache on is warned about"
PYTORCH_NO_CUDA_MEMORY_CACHING=1 fake_umrec ./program.sh
if grep -q PYTORCH <<<"$err"; then not_ok "env: the user's 1 needs no warning"; else ok "env: the user's 1 needs no warning"; fi
PYTORCH_ALLOC_CONF="max_split_size_mb:64, expandable_segments:True" fake_umrec --framework-cache ./program.sh
env_has "PYTORCH_ALLOC_CONF=max_split_size_mb:64, expandable_segments:False" \
	"env: --framework-cache turns PyTorch's expandable segments off"
expect_err_has "expandable segments turned off for this run" "env: expandable segments turned off are said"
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True fake_umrec ./program.sh
env_has "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" "env: with PyTorch's cache off, expandable segments stay"
expect_err_lacks "expandable" "env: expandable segments left alone are not warned about"

sqlite3 "$SCRATCH/trace.db" ".read $SCHEMA"
: >"$SCRATCH/trace.db-wal"
fake_umrec true
if [ ! -e "$SCRATCH/trace.db" ] && [ ! -e "$SCRATCH/trace.db-wal" ]; then ok "an earlier trace is removed once the program runs"
else not_ok "an earlier trace is removed once the program runs"; fi
if [ -z "$(find "$SCRATCH" -maxdepth 1 -name '.trace.db.*')" ]; then ok "an earlier trace removed: nothing left aside"
else not_ok "an earlier trace removed: nothing left aside"; fi
# A database with nothing in it is what a recording killed before its schema
# leaves; one with other tables is someone's data.
sqlite3 "$SCRATCH/trace.db" 'CREATE TABLE t(x); DROP TABLE t'
fake_umrec true
expect_status 0 "-o naming a database with nothing in it: replaced"
if [ ! -e "$SCRATCH/trace.db" ]; then ok "-o naming a database with nothing in it: removed before the run"
else not_ok "-o naming a database with nothing in it: removed before the run"; fi
sqlite3 "$SCRATCH/app.sqlite" 'CREATE TABLE users(name); INSERT INTO users VALUES ("ada")'
fake_umrec -o app.sqlite true
expect_status 3 "-o naming another SQLite database: setup error"
expect_err_has "app.sqlite exists and is not a trace file" "-o naming another SQLite database: refuses to replace it"
if [ "$(sqlite3 "$SCRATCH/app.sqlite" 'SELECT name FROM users')" = ada ]; then
	ok "-o naming another SQLite database: its data untouched"
else
	not_ok "-o naming another SQLite database: its data untouched"
fi

# A symbolic link stands for its target: the target is judged, removed and
# written, the link kept; a link to nothing, or to a file that is not a
# trace, is refused with the file left alone.
sqlite3 "$SCRATCH/target.db" ".read $SCHEMA"
ln -sfn target.db "$SCRATCH/link.db"
fake_umrec -o link.db ./program.sh
expect_status 0 "-o naming a link to a trace: taken"
env_has "UMKIT_TRACE=$REAL_SCRATCH/target.db" "-o naming a link to a trace: the trace written is the target"
if [ -L "$SCRATCH/link.db" ] && [ ! -e "$SCRATCH/target.db" ]; then ok "-o naming a link to a trace: the link kept, the earlier trace removed"
else not_ok "-o naming a link to a trace: the link kept, the earlier trace removed"; fi
ln -sfn notes.txt "$SCRATCH/link.db"
fake_umrec -o link.db true
expect_status 3 "-o naming a link to a non-trace file: setup error"
expect_err_has "$REAL_SCRATCH/notes.txt exists and is not a trace file" "-o naming a link to a non-trace file: names the target"
if [ -L "$SCRATCH/link.db" ] && [ "$(cat "$SCRATCH/notes.txt")" = "my notes" ]; then ok "-o naming a link to a non-trace file: both untouched"
else not_ok "-o naming a link to a non-trace file: both untouched"; fi
ln -sfn absent.db "$SCRATCH/link.db"
fake_umrec -o link.db true
expect_status 3 "-o naming a link to nothing: setup error"
expect_err_has "link.db is a symbolic link to nothing: not replacing it" "-o naming a link to nothing: says so"
if [ -L "$SCRATCH/link.db" ]; then ok "-o naming a link to nothing: the link kept"
else not_ok "-o naming a link to nothing: the link kept"; fi
# A link that cannot be followed (a loop) is said to be one, its reason
# named as such, not as what it points to.
ln -sfn loop.db "$SCRATCH/loop.db"
fake_umrec -o loop.db true
expect_status 3 "-o naming a link in a loop: setup error"
expect_err_has "loop.db is a symbolic link that cannot be followed: Too many levels of symbolic links: not replacing it" \
	"-o naming a link in a loop: says it cannot be followed, and why"
if [ -L "$SCRATCH/loop.db" ]; then ok "-o naming a link in a loop: the link kept"
else not_ok "-o naming a link in a loop: the link kept"; fi

# A signal sent to umrec alone (kill PID, as a batch scheduler sends it)
# is passed on to the program: each of those docs/cli.md lists. The
# program traps it and exits with a status of its own, which umrec
# returns.
got=$(cd "$SCRATCH" && UMKIT_LIBDIR=$SCRATCH/lib UMKIT_CUPTI=$SCRATCH/cupti LD_LIBRARY_PATH=$SCRATCH/driver \
	timeout 60 python3 - "$UMREC_ABS" <<'PY'
import os, signal, subprocess, sys, time
codes = {"INT": 11, "TERM": 12, "HUP": 13, "QUIT": 14, "USR1": 15, "USR2": 16}
traps = "; ".join("trap 'exit %d' %s" % (c, s) for s, c in codes.items())
for name, code in codes.items():
    if os.path.exists("sig.pid"):
        os.unlink("sig.pid")
    p = subprocess.Popen([sys.argv[1], "-q", "sh", "-c", traps + "; echo $$ >sig.pid; while :; do sleep 0.05; done"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while not (os.path.exists("sig.pid") and open("sig.pid").read().strip()) and time.time() < deadline:
        time.sleep(0.02)
    os.kill(p.pid, getattr(signal, "SIG" + name))
    try:
        rc = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = "hung"
    if rc != code:  # the program may outlive umrec (not passed on: umrec died of it)
        try:
            os.kill(int(open("sig.pid").read()), signal.SIGKILL)
        except (OSError, ValueError):
            pass
        if rc == "hung":
            p.kill()
            p.wait()
    print("%s:%s" % (name, "ok" if rc == code else rc), end=" ")
PY
)
if [ "$got" = "INT:ok TERM:ok HUP:ok QUIT:ok USR1:ok USR2:ok " ]; then
	ok "signals sent to umrec (INT, TERM, HUP, QUIT, USR1, USR2) are passed on to the program"
else not_ok "signals sent to umrec (INT, TERM, HUP, QUIT, USR1, USR2) are passed on to the program (got: $got)"; fi

# umrec writes its summary after the program ends: a reader of its stderr
# that has gone must not turn the program's status into SIGPIPE's (Python
# starts umrec with SIGPIPE at its default action, as a shell would).
if (cd "$SCRATCH" && UMKIT_LIBDIR=$SCRATCH/lib UMKIT_CUPTI=$SCRATCH/cupti LD_LIBRARY_PATH=$SCRATCH/driver \
	python3 - "$UMREC_ABS" <<'PY'
import subprocess, sys
p = subprocess.Popen([sys.argv[1], "sh", "-c", "sleep 0.3; exit 5"], stderr=subprocess.PIPE)
p.stderr.close()
sys.exit(0 if p.wait() == 5 else f"umrec ended with {p.returncode}")
PY
); then ok "stderr's reader gone before the summary: the program's status"
else not_ok "stderr's reader gone before the summary: the program's status"; fi

fake_umrec ./program.sh complete 5
expect_status 5 "with a trace: exits with the program's status"
expect_err_has "umrec: trace $REAL_SCRATCH/trace.db: complete" "summary: path and status"
expect_err_has "kernels      2" "summary: kernels"
expect_err_has "allocations  1 (0 freed, 1 live at exit)" "summary: allocations"
expect_err_has "NVTX ranges  0" "summary: NVTX ranges"
fake_umrec -q ./program.sh complete
expect_status 0 "-q: the program's status"
if [ -z "$err" ]; then ok "-q: no summary"; else not_ok "-q: no summary"; fi
fake_umrec ./program.sh recording killed
expect_status 143 "killed recording: the program's status"
expect_err_has "the trace is incomplete (status=recording): the program was killed before the recorder finished" \
	"killed recording: says the trace is incomplete, the program killed"
# No signal ended the program, yet its trace was left unfinished: it ended
# with _exit (no exit handler ran), not killed.
fake_umrec ./program.sh recording 0
expect_status 0 "recording ended by _exit: the program's status"
expect_err_has "the trace is incomplete (status=recording): the program exited without running its exit handlers (_exit" \
	"recording ended by _exit: says the trace is incomplete, the program exited"
# CUPTI could not be set up inside the program (meta.status failed): the
# program ran unrecorded, with its own status; said, even with -q.
fake_umrec -q ./program.sh failed 4
expect_status 4 "a recording that failed to start: the program's status"
expect_err_has "the recorder could not set up CUPTI (its message above says why, as does meta.error): nothing was recorded" \
	"a recording that failed to start: says so"
fake_umrec -q ./program.sh finished
expect_err_has "the trace has no valid status: it was not finished by libumrec" "a trace of another status: not libumrec's"
fake_umrec -q ./program.sh empty
expect_err_has "no CUDA activity was recorded: did the program use the GPU?" "empty trace: says so, even with -q"

finish
