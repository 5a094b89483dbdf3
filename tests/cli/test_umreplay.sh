#!/usr/bin/env bash
# test_umreplay.sh: umreplay's command line, exit statuses, setup errors,
# the plain run when the plan cannot be used, and the environment given to
# the program. Needs no GPU: the toolkit's stub libcuda stands in for the
# driver and for libumreplay.so where the program must actually start.
source "$(dirname "$0")/lib.sh"
UMREPLAY=$(cd "$BIN" && pwd)/umreplay
UMPLAN=$(cd "$BIN" && pwd)/umplan
REAL_SCRATCH=$(cd "$SCRATCH" && pwd -P)
# What umreplay adds for the library; none of it may reach a plain run.
INJECTION_VARS='^(LD_PRELOAD|CUDA_INJECTION64_PATH|NVTX_INJECTION64_PATH|PYTORCH_NO_CUDA_MEMORY_CACHING|UMKIT_[A-Z_]*)='

run "$UMREPLAY" --help
expect_status 0 "--help exits 0"
for opt in --plan --policy --gpu-budget --max-managed --stats --kernel-times --dry-run -q --quiet -h --help --version \
	UMKIT_LIBDIR UMKIT_LOG PYTORCH_NO_CUDA_MEMORY_CACHING "Exit status"; do
	expect_help_lists "$opt" "--help documents $opt, in a line of its own"
done
# Each policy heads its description in --policy's list, the name then a
# column's spaces: "plan" alone starts a line of the exit status too.
for policy in plan deepum ondemand ideal; do
	if grep -qE "^ +$policy {2,}[a-z]" <<<"$out"; then ok "--help describes the policy $policy"
	else not_ok "--help describes the policy $policy"; fi
done

run "$UMREPLAY" --version
expect_status 0 "--version exits 0"
expect_out_has "umreplay (umkit) $(cat VERSION)" "--version prints the version"

# Help that cannot be written (a full disk: /dev/full) is an error.
for opt in --help --version; do
	"$UMREPLAY" $opt >/dev/full 2>"$SCRATCH/full.err"
	status=$? err=$(cat "$SCRATCH/full.err")
	expect_status 1 "umreplay $opt > /dev/full: exit 1"
	expect_err_has "writing to standard output failed: No space left on device" "umreplay $opt > /dev/full: says so"
done

# ---- usage errors (2), all before anything is looked at ----
run "$UMREPLAY"
expect_status 2 "no arguments: usage error"
expect_err_has "no command given" "no arguments: says the command is missing"
expect_err_has "umreplay --help" "usage error: points at --help"

run "$UMREPLAY" --policy ideal -q
expect_status 2 "options without a command: usage error"
expect_err_has "no command given" "options without a command: says the command is missing"

run "$UMREPLAY" --frobnicate true
expect_status 2 "unknown option: usage error"
expect_err_has "unknown option '--frobnicate'" "unknown option: names it"

run "$UMREPLAY" --policy ideal --gpu-budget 12parsecs true
expect_status 2 "bad --gpu-budget: usage error"
expect_err_has "--gpu-budget: '12parsecs' is not a size" "bad --gpu-budget: names the text"
run "$UMREPLAY" --policy ideal --gpu-budget=0 true
expect_status 2 "--gpu-budget=0: usage error"
expect_err_has "'0' is not a size above zero" "--gpu-budget=0: says it must be above zero"
run "$UMREPLAY" --policy ideal --gpu-budget
expect_status 2 "--gpu-budget without a value: usage error"
expect_err_has "option '--gpu-budget' needs a size" "--gpu-budget without a value: says so"
run "$UMREPLAY" --policy ideal --max-managed -4G true
expect_status 2 "bad --max-managed: usage error"
expect_err_has "--max-managed: '-4G' is not a size" "bad --max-managed: names the text"
run "$UMREPLAY" --policy ideal --gpu-budget 0x1p30 true
expect_status 2 "a hexadecimal --gpu-budget: usage error"
expect_err_has "--gpu-budget: '0x1p30' is not a size" "a hexadecimal --gpu-budget: names the text"
run "$UMREPLAY" --policy ideal --max-managed 99999999999999999999G true
expect_status 2 "a --max-managed past 2^64 bytes: usage error"
expect_err_has "--max-managed: '99999999999999999999G' is too large" "a --max-managed past 2^64 bytes: says it is too large"

run "$UMREPLAY" --policy lru true
expect_status 2 "unknown policy: usage error"
expect_err_has "unknown policy 'lru'" "unknown policy: names it"
expect_err_has "ideal, ondemand, deepum, plan" "unknown policy: lists the valid names"
run "$UMREPLAY" --policy
expect_status 2 "--policy without a value: usage error"

run "$UMREPLAY" true
expect_status 2 "the default policy without --plan: usage error"
expect_err_has "--policy plan needs --plan FILE" "no --plan: says the plan policy needs one"
run "$UMREPLAY" --policy plan -- true
expect_status 2 "--policy plan without --plan: usage error"
run "$UMREPLAY" --plan
expect_status 2 "--plan without a value: usage error"
expect_err_has "option '--plan' needs a file name" "--plan without a value: says so"
run "$UMREPLAY" --plan= true
expect_status 2 "--plan= with an empty name: usage error"
run "$UMREPLAY" --policy ideal --stats
expect_status 2 "--stats without a value: usage error"

run "$UMREPLAY" --policy ondemand --gpu-budget 10G --max-managed=8G true
expect_status 2 "--gpu-budget above --max-managed: usage error"
expect_err_has "--gpu-budget 10G is above --max-managed 8G" "--gpu-budget above --max-managed: names both"

run "$UMREPLAY" --dry-run
expect_status 2 "--dry-run without a trace: usage error"
expect_err_has "option '--dry-run' needs a trace file" "--dry-run without a trace: says so"
run "$UMREPLAY" --dry-run trace.db --policy ondemand true
expect_status 2 "--dry-run with a command: usage error"
expect_err_has "--dry-run replays the trace and runs no command (got 'true')" "--dry-run with a command: says so"
run "$UMREPLAY" --dry-run trace.db --policy ondemand --max-managed 8G
expect_status 2 "--dry-run with --max-managed: usage error"
expect_err_has "--max-managed needs a GPU: not with --dry-run" "--dry-run with --max-managed: says why"
run "$UMREPLAY" --dry-run trace.db --policy ondemand --kernel-times
expect_status 2 "--dry-run with --kernel-times: usage error"
expect_err_has "--kernel-times needs a GPU: not with --dry-run" "--dry-run with --kernel-times: says why"
run "$UMREPLAY" --dry-run trace.db
expect_status 2 "--dry-run under the default policy without --plan: usage error"
expect_err_has "--policy plan needs --plan FILE" "--dry-run without --plan: says the plan policy needs one"

# ---- setup errors (3) that need no plan ----
run "$UMREPLAY" --policy ideal --stats "$SCRATCH/no/such/dir/s.json" true
expect_status 3 "--stats into a missing folder: setup error"
expect_err_has "$SCRATCH/no/such/dir" "--stats into a missing folder: names it"

# A folder the user cannot write. Root writes anywhere, so as root
# umreplay runs as nobody, a copy of it in a folder nobody may enter
# (the checkout's may be private); it needs only system libraries.
base=$(mktemp -d "/tmp/umkit-ro-XXXXXX") && chmod 755 "$base"
mkdir "$base/ro" && chmod 555 "$base/ro"
as_user=("$UMREPLAY")
if [ "$(id -u)" -eq 0 ]; then
	cp "$UMREPLAY" "$base/umreplay"
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups "$base/umreplay")
fi
cd "$base"
run "${as_user[@]}" --policy ideal --stats "$base/ro/s.json" true
cd - >/dev/null
expect_status 3 "--stats into a read-only folder: setup error"
expect_err_has "$base/ro" "--stats into a read-only folder: names it"
rm -rf "$base"

# Earlier stats, as replay/stats.c begins them; another program's JSON is
# not stats, and is left alone.
OLD_STATS='{
  "format": "umkit-replay-stats", "format_version": 1, "old": true}'
# stats_left_alone FILE CONTENT WHAT: --stats naming a file of CONTENT
# that is not earlier stats stops umreplay, and leaves the file as it was.
stats_left_alone() {
	printf '%s\n' "$2" >"$SCRATCH/$1"
	run "$UMREPLAY" --policy ideal --stats "$SCRATCH/$1" true
	expect_status 3 "--stats naming $3: setup error"
	expect_err_has "$1 exists and is not a stats file" "--stats naming $3: refuses to replace it"
	if [ "$(cat "$SCRATCH/$1")" = "$2" ]; then ok "--stats naming $3: file untouched"
	else not_ok "--stats naming $3: file untouched"; fi
}
stats_left_alone config.json '{"name": "my project"}' "another program's JSON"
stats_left_alone notes.txt "my notes" "a non-stats file"

UMKIT_LIBDIR=/nonexistent run "$UMREPLAY" --policy ondemand true
expect_status 3 "library missing: setup error"
expect_err_has "cannot find libumreplay.so in UMKIT_LIBDIR=/nonexistent" "library missing: says what"
UMKIT_LIBDIR=/nonexistent run "$UMREPLAY" --policy deepum -q true --frobnicate
expect_status 3 "options after the command belong to it"
run "$UMREPLAY" --policy ideal -- --odd-command
expect_status 127 "'--' ends the options"
expect_err_has "cannot run '--odd-command'" "'--' ends the options: the next word is the command"

# ---- a valid plan, from umplan on a small synthetic trace: 6 iterations of
# 4 kernels, a 4 MiB weight and a 2 MiB activation per iteration ----
plan=$SCRATCH/plan.bin
make_trace "$SCRATCH/trace.db"
have_plan=0
if [ -x "$UMPLAN" ] && "$UMPLAN" -q "$SCRATCH/trace.db" -o "$plan" --capacity 5M 2>"$SCRATCH/umplan.err" && [ -s "$plan" ]; then
	have_plan=1
	ok "umplan makes a valid plan for these tests"
else
	not_ok "umplan makes a valid plan for these tests (needed by the checks on a valid plan: $(cat "$SCRATCH/umplan.err" 2>/dev/null))"
fi

# ---- plans that cannot be used: one warning, then the command runs plain ----
# Each bad plan is built by hand (the 32-byte header of docs/plan-format.md),
# so these checks do not depend on umplan.
# header VERSION: magic, format version, no sections, no payload, and a
# checksum that matches nothing.
header() {
	python3 -c 'import struct, sys
sys.stdout.buffer.write(b"UMKPLAN\0" + struct.pack("<IIQQ", int(sys.argv[1]), 0, 0, 0x0807060504030201))' "$1"
}
: >"$SCRATCH/empty.bin"
echo "not a plan at all" >"$SCRATCH/text.bin"
printf 'UMKPLAN\0\1\0' >"$SCRATCH/short.bin"
header 4 >"$SCRATCH/newer.bin"
header 1 >"$SCRATCH/corrupt.bin"
mkdir -p "$SCRATCH/dir.bin"

# run_clean CMD...: run, from an environment without injection or UMKIT_
# variables (tests/run.sh exports some), so any that the program sees came
# from umreplay.
run_clean() {
	# shellcheck disable=SC2046 # one name per word
	(unset LD_PRELOAD CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH PYTORCH_NO_CUDA_MEMORY_CACHING \
		$(compgen -e | grep '^UMKIT_'); exec "$@") >"$SCRATCH/out" 2>"$SCRATCH/err"
	status=$?
	out=$(cat "$SCRATCH/out")
	err=$(cat "$SCRATCH/err")
}

# plain_run PLAN PROBLEM [EXTRA OPTIONS...]: umreplay with an unusable plan
# runs the program as it would run without umreplay.
plain_run() {
	local bad=$1 problem=$2 what
	what="plan $(basename "$bad") ($problem)"
	shift 2
	rm -f "$SCRATCH/env"
	run_clean "$UMREPLAY" --plan "$bad" "$@" -- sh -c 'env >"$0"; exit 5' "$SCRATCH/env"
	expect_status 5 "$what: the program runs, with its exit status"
	expect_err_has "umreplay: warning: $bad: $problem; running the program without umkit" \
		"$what: one clear warning naming the file and the problem"
	if [ "$(grep -c . <<<"$err")" -eq 1 ]; then ok "$what: nothing else is printed"
	else not_ok "$what: nothing else is printed"; fi
	if [ -f "$SCRATCH/env" ] && ! grep -qE "$INJECTION_VARS" "$SCRATCH/env"; then
		ok "$what: no injection or UMKIT_ variables reach the program"
	else
		not_ok "$what: no injection or UMKIT_ variables reach the program ($(grep -E "$INJECTION_VARS" "$SCRATCH/env" 2>/dev/null | tr '\n' ' '))"
	fi
}
plain_run "$SCRATCH/absent.bin" "cannot open: No such file or directory"
plain_run "$SCRATCH/empty.bin" "not a umkit plan (empty file)"
plain_run "$SCRATCH/text.bin" "not a umkit plan (bad magic)"
plain_run "$SCRATCH/short.bin" "truncated (10 of at least 32 bytes)"
plain_run "$SCRATCH/newer.bin" "format version 4 is newer than this umkit (3)"
plain_run "$SCRATCH/corrupt.bin" "checksum mismatch (file corrupt)"
plain_run "$SCRATCH/dir.bin" "not a regular file"
plain_run "$SCRATCH/corrupt.bin" "checksum mismatch (file corrupt)" --policy deepum --gpu-budget 1G -q
# A FIFO with no writer: refused at once, not waited on (under timeout,
# so that a regression fails rather than hangs).
mkfifo "$SCRATCH/fifo.bin"
run_clean timeout 20 "$UMREPLAY" --plan "$SCRATCH/fifo.bin" -- sh -c 'exit 5'
expect_status 5 "plan fifo.bin (a FIFO without a writer): the program runs, nothing waits"
expect_err_has "umreplay: warning: $SCRATCH/fifo.bin: not a regular file; running the program without umkit" \
	"plan fifo.bin (a FIFO without a writer): says so"
run timeout 20 "$UMREPLAY" --dry-run "$SCRATCH/fifo.bin" --policy ideal
expect_status 1 "dry run of a FIFO: error, nothing waits"
expect_err_has "$SCRATCH/fifo.bin: not a regular file" "dry run of a FIFO: says so"
if [ "$have_plan" -eq 1 ]; then
	size=$(stat -c %s "$plan")
	head -c $((size - 7)) "$plan" >"$SCRATCH/cut.bin"
	plain_run "$SCRATCH/cut.bin" "truncated ($((size - 7)) of $size bytes)"
	cp "$plan" "$SCRATCH/flipped.bin"
	printf '\377' | dd of="$SCRATCH/flipped.bin" bs=1 seek=$((size - 3)) conv=notrunc status=none
	plain_run "$SCRATCH/flipped.bin" "checksum mismatch (file corrupt)"
else
	not_ok "a plan cut short runs plain # needs umplan's plan"
	not_ok "a plan with a flipped byte runs plain # needs umplan's plan"
fi

# The plain run gets exactly the environment it would get without umreplay.
(cd "$SCRATCH" && env sh -c 'env >"$0"' "$SCRATCH/env.direct")
(cd "$SCRATCH" && "$UMREPLAY" --plan corrupt.bin sh -c 'env >"$0"' "$SCRATCH/env.plain") 2>/dev/null
# ($_ is the shell's note of the last command it started: umreplay, or env.)
if diff <(grep -v '^_=' "$SCRATCH/env.direct") <(grep -v '^_=' "$SCRATCH/env.plain") >"$SCRATCH/env.diff"; then
	ok "plain run: the environment is the user's, unchanged"
else
	not_ok "plain run: the environment is the user's, unchanged ($(tr '\n' ' ' <"$SCRATCH/env.diff"))"
fi
UMKIT_LIBDIR=/nonexistent run "$UMREPLAY" --plan "$SCRATCH/corrupt.bin" sh -c 'exit 6'
expect_status 6 "plain run: needs no libumreplay.so"

run "$UMREPLAY" --plan "$SCRATCH/corrupt.bin" umkit-no-such-command
expect_status 127 "plain run: command not found: 127"
expect_err_has "cannot run 'umkit-no-such-command'" "plain run: command not found: says so"
run "$UMREPLAY" --plan "$SCRATCH/corrupt.bin" sh -c 'kill -TERM $$'
expect_status 143 "plain run: program killed by SIGTERM: 143"

echo "$OLD_STATS" >"$SCRATCH/old.json"
run "$UMREPLAY" --plan "$SCRATCH/corrupt.bin" --stats "$SCRATCH/old.json" true
expect_status 0 "plain run with --stats: the program runs"
if [ ! -e "$SCRATCH/old.json" ]; then ok "plain run: earlier stats are removed, not passed off as this run's"
else not_ok "plain run: earlier stats are removed, not passed off as this run's"; fi
# A program that cannot start (an ELF whose interpreter is missing passes
# every check but the exec's own) leaves the earlier stats as they were:
# set aside while it starts, put back when it cannot.
echo 'int main(void) { return 0; }' | ${CC:-cc} -x c - -o "$SCRATCH/no-loader" \
	-Wl,--dynamic-linker=/umkit/no-such-ld.so
echo "$OLD_STATS" >"$SCRATCH/old.json"
run "$UMREPLAY" --plan "$SCRATCH/corrupt.bin" --stats "$SCRATCH/old.json" "$SCRATCH/no-loader"
expect_status 127 "plain run of a program that cannot start: 127"
if [ "$(cat "$SCRATCH/old.json" 2>/dev/null)" = "$OLD_STATS" ]; then
	ok "plain run of a program that cannot start: the earlier stats are kept"
else
	not_ok "plain run of a program that cannot start: the earlier stats are kept"
fi
if [ -z "$(find "$SCRATCH" -maxdepth 1 -name '.old.json.*')" ]; then
	ok "plain run of a program that cannot start: nothing left aside"
else
	not_ok "plain run of a program that cannot start: nothing left aside"
fi

# ---- --dry-run: a fixture trace through the replayer, with no program, no
# library and no driver (UMKIT_LIBDIR points nowhere) ----
fixture=$FIXTURES/h100_mlp.db
dry_plan=$SCRATCH/mlp.bin
if [ -x "$UMPLAN" ] && "$UMPLAN" -q "$fixture" --capacity 228M -o "$dry_plan" 2>"$SCRATCH/umplan.err"; then
	ok "umplan plans the MLP fixture for the dry runs"
else
	not_ok "umplan plans the MLP fixture for the dry runs ($(cat "$SCRATCH/umplan.err" 2>/dev/null))"
fi
UMKIT_LIBDIR=/nonexistent run "$UMREPLAY" --dry-run "$fixture" --plan "$dry_plan" --gpu-budget 220M
expect_status 0 "dry run: exits 0 without a GPU"
expect_out_has "umreplay --dry-run: $fixture under plan (plan $dry_plan), budget 220.00 MiB: 578 launches (" \
	"dry run: the summary names the trace, policy, plan and budget"
expect_out_has "iterations, modelled peak" "dry run: the summary counts iterations and the modelled peak"
expect_out_has "iteration  recorded_ms  launches  resynced      lost  prefetch_MiB" "dry run: the table's header"
if grep -qE '^ +1 +[0-9]+\.[0-9]{3} +[0-9]+' <<<"$out" && grep -qE '^ +total +- +578 ' <<<"$out"; then
	ok "dry run: a row per iteration and the total"
else
	not_ok "dry run: a row per iteration and the total"
fi
if [ -z "$err" ]; then ok "dry run: nothing on stderr"; else not_ok "dry run: nothing on stderr"; fi

# A plan made for more memory than the recording GPU has (the fixture's
# H100, 79.18 GiB): one warning naming the plan, the run as before; under
# a budget within the GPU, none (replay/device_fit.h).
"$UMPLAN" -q "$fixture" --capacity 100G -o "$SCRATCH/bigger.bin" 2>/dev/null
run "$UMREPLAY" --dry-run "$fixture" --plan "$SCRATCH/bigger.bin" -q
expect_status 0 "dry run of a plan for a larger GPU: exits 0"
expect_err_has "umreplay: warning: $SCRATCH/bigger.bin keeps residency under 97.00 GiB, more than the 79.18 GiB of NVIDIA H100 80GB HBM3 it runs on: the room the plan counts on is not there" \
	"dry run of a plan for a larger GPU: warned of, naming the plan"
if [ "$(grep -c 'keeps residency under' <<<"$err")" = 1 ]; then ok "dry run of a plan for a larger GPU: warned once"
else not_ok "dry run of a plan for a larger GPU: warned once"; fi
run "$UMREPLAY" --dry-run "$fixture" --plan "$SCRATCH/bigger.bin" --gpu-budget 1G -q
expect_status 0 "dry run of that plan under a budget within the GPU: exits 0"
expect_err_lacks "more than the" "dry run of that plan under a budget within the GPU: no warning"
# Only the plan policy keeps residency under the plan's capacity; the
# others use the plan only to place launches (deepum its tables too).
for policy in ondemand deepum ideal; do
	run "$UMREPLAY" --dry-run "$fixture" --plan "$SCRATCH/bigger.bin" --policy $policy -q
	expect_status 0 "dry run of that plan under $policy: exits 0"
	expect_err_lacks "keeps residency under" "dry run of that plan under $policy: no warning about its capacity"
done
run "$UMREPLAY" --dry-run "$fixture" --policy ondemand --gpu-budget 100G -q
expect_err_has "--gpu-budget 100.00 GiB is more than the 79.18 GiB of NVIDIA H100 80GB HBM3: residency past the GPU's memory is evicted by the driver on demand, not by the plan" \
	"dry run under a budget above the GPU: warned of"

run "$UMREPLAY" --dry-run "$fixture" --plan "$dry_plan" --gpu-budget 220M -q
expect_status 0 "dry run -q: exits 0"
expect_out_has "umreplay --dry-run: $fixture under plan" "dry run -q: the summary"
expect_out_lacks "recorded_ms" "dry run -q: no table"

# ideal migrates nothing: a budget given with it is not applied, and the
# summary does not claim one.
run "$UMREPLAY" --dry-run "$fixture" --policy ideal --gpu-budget 220M -q
expect_status 0 "dry run under ideal with a budget: exits 0"
expect_out_has "under ideal (no plan), no budget: 578 launches" "dry run under ideal: says no budget applies"
# ideal keeps no residency model: the summary says so, not a peak of 0 B.
expect_out_has "0 iterations, no residency model" "dry run under ideal: says it keeps no residency model"
expect_out_lacks "modelled peak" "dry run under ideal: no modelled peak claimed"

# A recording that ran CUDA graphs: a real replay stops following at the
# first capture or graph launch, which the trace does not date, and the
# dry run feeds every launch; the summary says so.
run "$UMREPLAY" --dry-run "$FIXTURES/h100_mlp_cuda_graph.db" --policy ondemand -q
expect_status 0 "dry run of a recording with CUDA graphs: exits 0"
expect_out_has "the recorded run used CUDA graphs (535 kernels ran from them): a real replay stops following" \
	"dry run of a recording with CUDA graphs: the summary says a real replay stops at the first graph"

# bench/fault_report.py on a dry run's stats (measured null): a clear
# refusal naming the file, not a traceback.
run "$UMREPLAY" --dry-run "$fixture" --policy ondemand -q --stats "$SCRATCH/dry.json"
run python3 "$(dirname "$0")/../../bench/fault_report.py" "$SCRATCH/dry.json"
expect_status 1 "fault_report.py on a dry run's stats: exits 1"
expect_err_has "$SCRATCH/dry.json: no measured figures (the stats of a dry run)" \
	"fault_report.py on a dry run's stats: names the file and why"
expect_err_lacks "Traceback" "fault_report.py on a dry run's stats: no traceback"
# ... and on a stats file missing or not umreplay's, a trace missing, an
# umplan that cannot run: each named on one line, exit 1.
FAULT_REPORT=$(dirname "$0")/../../bench/fault_report.py
# fault_report_fails DESC TEXT ARGS...
fault_report_fails() {
	local desc=$1 text=$2
	shift 2
	run python3 "$FAULT_REPORT" "$@"
	if [ "$status" -eq 1 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -qF -- "$text" <<<"$err"; then ok "$desc"
	else not_ok "$desc (wanted exit 1 and one line with '$text')"; fi
}
fault_report_fails "fault_report.py: a stats file that is not there is named" \
	"$SCRATCH/none.json: No such file or directory" "$SCRATCH/none.json"
echo 'not json' >"$SCRATCH/bad.json"
fault_report_fails "fault_report.py: a stats file that is not JSON says so" "$SCRATCH/bad.json: not JSON" "$SCRATCH/bad.json"
echo '{"format": "umkit-replay-stats"}' >"$SCRATCH/bad.json"
fault_report_fails "fault_report.py: JSON that is not umreplay's stats says so" \
	"$SCRATCH/bad.json: not umreplay --stats output" "$SCRATCH/bad.json"
echo '{"format": "umkit-replay-stats", "measured": {"fault_sources": {"migrations": 0, "unattributed": 0, "sources": 0, "top": []}, "lost_kernels": {"launches": 0, "distinct": 0, "top": []}}}' >"$SCRATCH/few.json"
run python3 "$FAULT_REPORT" "$SCRATCH/few.json"
expect_status 0 "fault_report.py: stats with no faults and no lost launches: exit 0"
fault_report_fails "fault_report.py: a --trace that is not there is named" \
	"$SCRATCH/none.db: not a trace umrec wrote" "$SCRATCH/few.json" --trace "$SCRATCH/none.db"
fault_report_fails "fault_report.py: an --umplan that cannot run is named" \
	"$SCRATCH/no-umplan: cannot run it" "$SCRATCH/few.json" --plan "$plan" --umplan "$SCRATCH/no-umplan"
fault_report_fails "fault_report.py: a --plan umplan cannot read is named" \
	"$SCRATCH/none.plan: umplan --dump failed" "$SCRATCH/few.json" --plan "$SCRATCH/none.plan" --umplan "$UMPLAN"

# A plan of another program: none of the MLP's launches is placed, and
# the summary says what that may mean.
sim_plan=$SCRATCH/sim.bin
"$UMPLAN" -q "$FIXTURES/h100_train_sim.db" --capacity 200M -o "$sim_plan" 2>/dev/null
run "$UMREPLAY" --dry-run "$fixture" --plan "$sim_plan" -q
expect_status 0 "dry run, another program's plan: exits 0"
expect_out_has "578 launches (0 matched, 0 by shape, 0 resynchronised, 578 lost), 0 iterations" \
	"dry run, another program's plan: every launch lost"
expect_out_has "no launch was placed in the plan: it may be made for another program" \
	"dry run, another program's plan: says it may be another program's"

# A plan with room to spare keeps the replayer idle until the MLP's final
# phase passes the budget: the launches it follows from then on are past
# the plan's iterations, and the summary does not blame the plan.
"$UMPLAN" -q "$fixture" --capacity 560M -o "$SCRATCH/roomy.bin" 2>/dev/null
run "$UMREPLAY" --dry-run "$fixture" --plan "$SCRATCH/roomy.bin" --gpu-budget 560M -q
expect_status 0 "dry run, a late wake: exits 0"
expect_out_has "156 of 578 launches (0 matched, 0 by shape, 0 resynchronised, 156 lost)" \
	"dry run, a late wake: only the final phase's launches followed, none placed"
expect_out_has "no launch followed from the wake on was placed in the plan: the program had left the plan's iterations by then" \
	"dry run, a late wake: says the program had left the iterations"
expect_out_lacks "it may be made for another program" "dry run, a late wake: does not call the plan another program's"

echo "$OLD_STATS" >"$SCRATCH/dry.json"
run "$UMREPLAY" --dry-run "$fixture" --plan "$dry_plan" --gpu-budget 220M --stats "$SCRATCH/dry.json"
expect_status 0 "dry run --stats: exits 0"
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["measured"] is None and d["policy"] == "plan" and d["engine"]["iterations"] > 0
assert len(d["iteration_ns"]) == d["engine"]["iterations"]' "$SCRATCH/dry.json" 2>"$SCRATCH/json.err"; then
	ok "dry run --stats: the engine's statistics as JSON, \"measured\": null"
else
	not_ok "dry run --stats: the engine's statistics as JSON, \"measured\": null ($(cat "$SCRATCH/json.err"))"
fi
# The table's total row sums its rows (the MiB within their rounding), and
# its counts are the engine's, as --stats has them.
if python3 -c 'import json, sys
lines = sys.argv[2].split("\n")
i = next(k for k, l in enumerate(lines) if l.split()[:2] == ["iteration", "recorded_ms"])
hdr = lines[i].split()
rows = [l.split() for l in lines[i + 1:] if l.strip()]
total = dict(zip(hdr, rows[-1]))
assert total["iteration"] == "total" and len(rows) > 2, rows
for c in hdr[2:]:
    s = sum(float(r[hdr.index(c)]) for r in rows[:-1])
    assert abs(s - float(total[c])) <= (len(rows) if c.endswith("_MiB") else 0), (c, s, total[c])
e = json.load(open(sys.argv[1]))["engine"]
for c, k in (("launches", "launches"), ("resynced", "resynced"), ("lost", "lost"), ("budget_evictions", "budget_evictions"),
             ("refault_blocks", "refault_blocks"), ("of_them_budget", "refault_budget_blocks"), ("of_them_shared", "refault_shared_blocks"),
             ("unread_evicted", "unread_evicted_blocks")):
    assert int(total[c]) == e[k], (c, total[c], e[k])' "$SCRATCH/dry.json" "$out" 2>"$SCRATCH/json.err"; then
	ok "dry run: the total row sums the table, and its counts are the engine's"
else
	not_ok "dry run: the total row sums the table, and its counts are the engine's ($(tail -1 "$SCRATCH/json.err"))"
fi
echo "$OLD_STATS" >"$SCRATCH/dry-old.json"
run "$UMREPLAY" --dry-run "$SCRATCH/no-such.db" --policy ideal --stats "$SCRATCH/dry-old.json"
expect_status 1 "dry run of a missing trace: error"
if [ ! -e "$SCRATCH/dry-old.json" ]; then ok "failed dry run: earlier stats are removed, not passed off as its own"
else not_ok "failed dry run: earlier stats are removed, not passed off as its own"; fi
run "$UMREPLAY" --dry-run "$fixture" --policy ondemand --stats "$SCRATCH/notes.txt"
expect_status 1 "dry run --stats naming a non-stats file: error"
expect_err_has "is not a stats file" "dry run --stats naming a non-stats file: refuses to replace it"

run "$UMREPLAY" --dry-run "$fixture" --policy ondemand --gpu-budget 220M
expect_status 0 "dry run --policy ondemand without --plan: exits 0"
expect_out_has "under ondemand (no plan), budget 220.00 MiB: 578 launches, 0 iterations" "dry run without a plan: the summary"
expect_out_has "no plan: iterations are passes over a plan's kernels" "dry run without a plan: says why no iterations"

run "$UMREPLAY" --dry-run "$SCRATCH/absent.db" --policy ondemand
expect_status 1 "dry run of a missing trace: error"
expect_err_has "$SCRATCH/absent.db" "dry run of a missing trace: names the file"
run "$UMREPLAY" --dry-run "$fixture" --plan "$SCRATCH/corrupt.bin"
expect_status 1 "dry run with a corrupt plan: error, not a plain run"
expect_err_has "$SCRATCH/corrupt.bin: checksum mismatch (file corrupt)" "dry run with a corrupt plan: names the plan"
expect_out_lacks "umreplay --dry-run:" "dry run with a corrupt plan: no report"
# The same kernels with other allocation sizes: the plan is foreign, unless
# the trace was recorded with PyTorch's cache on, whose allocations are its
# segments (a real run with the cache on judges by the kernels alone too).
if [ "$have_plan" -eq 1 ]; then
	make_trace "$SCRATCH/resized.db" "UPDATE alloc SET size = 1048576 WHERE id >= 2;"
	run "$UMREPLAY" --dry-run "$SCRATCH/resized.db" --plan "$plan"
	expect_out_has "the plan was judged foreign" "dry run: other allocation sizes, the plan is foreign"
	make_trace "$SCRATCH/resized-cached.db" "UPDATE alloc SET size = 1048576 WHERE id >= 2;
INSERT INTO meta VALUES ('framework_cache', '1');"
	run "$UMREPLAY" --dry-run "$SCRATCH/resized-cached.db" --plan "$plan"
	expect_status 0 "dry run: a trace recorded with the cache on: the dry run completes"
	expect_out_has "umreplay --dry-run:" "dry run: a trace recorded with the cache on: the report"
	expect_out_lacks "foreign" "dry run: a trace recorded with the cache on is judged by its kernels alone"
else
	not_ok "dry runs judging allocations # needs umplan's plan"
fi

# ---- a valid plan without a GPU driver ----
mkdir -p "$SCRATCH/lib" "$SCRATCH/driver"
: >"$SCRATCH/lib/libumreplay.so"
# Where a driver is installed (a GPU developer's make test), its absence
# cannot be shown: that the check finds it can.
if { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libcuda\.so\.1 '; then
	UMKIT_LIBDIR=$SCRATCH/lib run "$UMREPLAY" --plan "$plan" true
	expect_err_lacks "no NVIDIA driver" "valid plan, a driver installed: found"
	expect_status 0 "valid plan, a driver installed: the program's status"
elif [ "$have_plan" -eq 1 ]; then
	UMKIT_LIBDIR=$SCRATCH/lib run "$UMREPLAY" --plan "$plan" true
	expect_status 3 "valid plan, no driver: setup error"
	expect_err_has "no NVIDIA driver (libcuda.so.1 not found): umreplay needs a GPU" "valid plan, no driver: clear message"
	echo "$OLD_STATS" >"$SCRATCH/kept.json"
	UMKIT_LIBDIR=$SCRATCH/lib run "$UMREPLAY" --policy ideal --stats "$SCRATCH/kept.json" true
	expect_status 3 "no driver, no plan needed: setup error"
	if [ -e "$SCRATCH/kept.json" ]; then ok "failed setup keeps earlier stats"
	else not_ok "failed setup keeps earlier stats"; fi
else
	not_ok "valid plan, no driver: setup error # needs umplan's plan"
fi

# ---- the run itself: the stub libcuda stands in for the driver (umreplay
# only dlopens it) and for libumreplay.so (a harmless library to preload);
# the program writes its environment to env.txt ----
stub=${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so
if [ ! -f "$stub" ]; then
	not_ok "runs the program: no $stub to stand in for the driver (the CUDA toolkit is a build dependency)"
	finish
fi
cp "$stub" "$SCRATCH/driver/libcuda.so.1"
cp "$stub" "$SCRATCH/lib/libumreplay.so"
LIB=$SCRATCH/lib/libumreplay.so

# fake_umreplay ARGS...: umreplay with the stand-ins, run from $SCRATCH.
fake_umreplay() {
	pushd "$SCRATCH" >/dev/null || return
	rm -f env.txt
	UMKIT_LIBDIR=$SCRATCH/lib LD_LIBRARY_PATH=$SCRATCH/driver run "$UMREPLAY" "$@"
	popd >/dev/null || return
}
printf '#!/bin/sh\nenv >"$PWD/env.txt"\nexit "${1:-0}"\n' >"$SCRATCH/program.sh"
chmod +x "$SCRATCH/program.sh"
env_has() { # env_has NAME=VALUE DESC: the program saw exactly that
	if grep -qxF -- "$1" "$SCRATCH/env.txt" 2>/dev/null; then ok "$2"; else not_ok "$2 (env lacks '$1')"; fi
}
env_lacks() { # env_lacks NAME DESC
	if [ -f "$SCRATCH/env.txt" ] && ! grep -q "^$1=" "$SCRATCH/env.txt"; then ok "$2"; else not_ok "$2 ($1 is set)"; fi
}

fake_umreplay --policy ondemand sh -c 'exit 7'
expect_status 7 "exits with the program's status"
if [ -z "$err" ]; then ok "a normal run: umreplay itself prints nothing"; else not_ok "a normal run: umreplay itself prints nothing"; fi
fake_umreplay --policy ondemand sh -c 'kill -TERM $$'
expect_status 143 "program killed by SIGTERM: 143"
echo "$OLD_STATS" >"$SCRATCH/kept.json"
fake_umreplay --policy ondemand --stats kept.json umkit-no-such-command
expect_status 127 "command not found: 127"
if [ -e "$SCRATCH/kept.json" ]; then ok "command not found: earlier stats are kept"
else not_ok "command not found: earlier stats are kept"; fi
got=$(cd "$SCRATCH" && UMKIT_LIBDIR=$SCRATCH/lib LD_LIBRARY_PATH=$SCRATCH/driver python3 -c \
	'import subprocess, sys; print(subprocess.run(sys.argv[1:], stderr=subprocess.DEVNULL).returncode)' \
	"$UMREPLAY" --policy ondemand sh -c 'kill -INT $$')
if [ "$got" = -2 ]; then ok "program killed by SIGINT: umreplay dies of SIGINT"
else not_ok "program killed by SIGINT: umreplay dies of SIGINT (returncode $got)"; fi
: >"$SCRATCH/not-executable.sh"
fake_umreplay --policy ondemand ./not-executable.sh
expect_status 126 "command not executable: 126"
# A program that passes the checks but cannot start (an ELF whose
# interpreter is missing) is said to be so after the exec: a reader of
# stderr gone by then must not turn 127 into SIGPIPE's status, as for
# umrec (Python starts umreplay with SIGPIPE at its default action).
got=$(cd "$SCRATCH" && UMKIT_LIBDIR=$SCRATCH/lib LD_LIBRARY_PATH=$SCRATCH/driver python3 - "$UMREPLAY" <<'PY'
import subprocess, sys
p = subprocess.Popen([sys.argv[1], "--policy", "ondemand", "./no-loader"], stderr=subprocess.PIPE)
p.stderr.close()
print(p.wait())
PY
)
if [ "$got" = 127 ]; then ok "stderr's reader gone, a program that cannot start: 127"
else not_ok "stderr's reader gone, a program that cannot start: 127 (returncode $got)"; fi

if [ "$have_plan" -eq 1 ]; then
	mkdir -p "$SCRATCH/sub"
	echo "$OLD_STATS" >"$SCRATCH/stats.json"
	LD_PRELOAD=$SCRATCH/driver/libcuda.so.1 UMKIT_NO_MANAGED=1 UMKIT_PLAN=/stale.bin UMKIT_TRACE=/stale.db UMKIT_RUN=stale \
		NVTX_INJECTION64_PATH=/opt/profiler/libnvtx.so \
		fake_umreplay -q --plan sub/../plan.bin --gpu-budget 2G --max-managed 3GiB --stats sub/../stats.json \
		-- ./program.sh 0
	expect_status 0 "valid plan: the program runs"
	env_has "UMKIT_PLAN=$REAL_SCRATCH/plan.bin" "env: UMKIT_PLAN is the absolute plan path"
	env_has "UMKIT_POLICY=plan" "env: UMKIT_POLICY defaults to plan"
	env_has "UMKIT_GPU_BUDGET=2147483648" "env: UMKIT_GPU_BUDGET in bytes"
	env_has "UMKIT_MAX_MANAGED=3221225472" "env: UMKIT_MAX_MANAGED in bytes"
	env_has "UMKIT_STATS=$REAL_SCRATCH/stats.json" "env: UMKIT_STATS is the absolute stats path"
	env_has "UMKIT_LOG=quiet" "env: -q sets UMKIT_LOG=quiet"
	env_has "UMKIT_COMMAND=./program.sh 0" "env: UMKIT_COMMAND is the command line"
	if grep -Eqx 'UMKIT_RUN=[0-9]+-[0-9]+\.[0-9]{9}' "$SCRATCH/env.txt"; then ok "env: UMKIT_RUN names the run (umreplay's pid and start), not the user's"
	else not_ok "env: UMKIT_RUN names the run (umreplay's pid and start), not the user's"; fi
	env_has "LD_PRELOAD=$LIB:$SCRATCH/driver/libcuda.so.1" "env: the library first in LD_PRELOAD, the user's kept"
	env_has "CUDA_INJECTION64_PATH=$LIB" "env: CUDA_INJECTION64_PATH is the library"
	env_has "NVTX_INJECTION64_PATH=/opt/profiler/libnvtx.so" "env: the user's NVTX_INJECTION64_PATH is kept"
	env_has "PYTORCH_NO_CUDA_MEMORY_CACHING=1" "env: PyTorch's cache off by default"
	env_lacks UMKIT_NO_MANAGED "env: a stale UMKIT_NO_MANAGED is removed"
	env_lacks UMKIT_TRACE "env: a stale UMKIT_TRACE is removed"
	if [ ! -e "$SCRATCH/stats.json" ]; then ok "earlier stats are removed before the run"
	else not_ok "earlier stats are removed before the run"; fi

	env_lacks UMKIT_KERNEL_TIMES "env: no --kernel-times, no UMKIT_KERNEL_TIMES"

	UMKIT_LOG=debug PYTORCH_NO_CUDA_MEMORY_CACHING=0 fake_umreplay --plan="$plan" --policy=deepum --kernel-times \
		./program.sh
	env_has "UMKIT_POLICY=deepum" "env: --policy deepum"
	env_has "UMKIT_KERNEL_TIMES=1" "env: --kernel-times sets UMKIT_KERNEL_TIMES=1"
	env_has "UMKIT_PLAN=$REAL_SCRATCH/plan.bin" "env: deepum with a plan gets it"
	env_has "UMKIT_LOG=debug" "env: the user's UMKIT_LOG is kept without -q"
	env_has "PYTORCH_NO_CUDA_MEMORY_CACHING=0" "env: the user's PyTorch setting is kept"
	expect_err_has "PYTORCH_NO_CUDA_MEMORY_CACHING=0 keeps PyTorch's caching allocator on" \
		"env: a PyTorch setting that keeps the cache on is warned about"
	env_lacks NVTX_INJECTION64_PATH "env: no NVTX injection (replay reads no NVTX)"
	env_has "UMKIT_FRAMEWORK_CACHE=1" "env: the library is told when the user keeps the cache on"

	# A plan with nothing to do within the budget: PyTorch's cache stays
	# on, and the library is told; not under another policy, nor when the
	# budget is below the plan's peak or the user set the variable.
	"$UMPLAN" -q "$SCRATCH/trace.db" -o "$SCRATCH/idle.bin" --capacity 64M
	fake_umreplay --plan "$SCRATCH/idle.bin" ./program.sh
	expect_status 0 "idle plan: the program runs"
	env_lacks PYTORCH_NO_CUDA_MEMORY_CACHING "env: an idle plan keeps PyTorch's cache on"
	env_has "UMKIT_FRAMEWORK_CACHE=1" "env: an idle plan tells the library the cache is on"
	expect_err_has "PyTorch's caching allocator stays on" "an idle plan says the cache stays on"
	PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True fake_umreplay --plan "$SCRATCH/idle.bin" ./program.sh
	env_has "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False" \
		"env: an idle plan keeping PyTorch's cache turns its expandable segments off"
	expect_err_has "expandable segments turned off for this run" "expandable segments turned off are said"
	PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True fake_umreplay --plan "$SCRATCH/idle.bin" --gpu-budget 4M \
		./program.sh
	env_has "PYTORCH_NO_CUDA_MEMORY_CACHING=1" "env: a budget below the plan's peak turns the cache off"
	env_has "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" "env: with the cache off, expandable segments stay"
	env_lacks UMKIT_FRAMEWORK_CACHE "env: no UMKIT_FRAMEWORK_CACHE with the cache off"
	fake_umreplay --plan "$SCRATCH/idle.bin" --policy deepum ./program.sh
	env_has "PYTORCH_NO_CUDA_MEMORY_CACHING=1" "env: deepum turns the cache off, idle plan or not"
	PYTORCH_NO_CUDA_MEMORY_CACHING=1 fake_umreplay --plan "$SCRATCH/idle.bin" ./program.sh
	env_has "PYTORCH_NO_CUDA_MEMORY_CACHING=1" "env: the user's cache setting beats an idle plan"
	env_lacks UMKIT_FRAMEWORK_CACHE "env: no UMKIT_FRAMEWORK_CACHE when the user turned the cache off"

	# A plan from a recording with PyTorch's cache on names the cache's
	# segments: the cache stays on under every policy, unless the user
	# turns it off (then a warning says the allocations will differ).
	make_trace "$SCRATCH/cached.db" "INSERT INTO meta VALUES ('framework_cache', '1');"
	"$UMPLAN" -q "$SCRATCH/cached.db" -o "$SCRATCH/cached.bin" --capacity 5M
	fake_umreplay --plan "$SCRATCH/cached.bin" ./program.sh
	expect_status 0 "plan recorded with the cache on: the program runs"
	env_lacks PYTORCH_NO_CUDA_MEMORY_CACHING "env: a plan recorded with the cache on keeps it on"
	env_has "UMKIT_FRAMEWORK_CACHE=1" "env: a plan recorded with the cache on tells the library"
	expect_err_has "the plan was recorded with PyTorch's caching allocator on: it stays on" \
		"a plan recorded with the cache on says it stays on"
	for policy in ondemand deepum ideal; do
		fake_umreplay --plan "$SCRATCH/cached.bin" --policy $policy ./program.sh
		env_lacks PYTORCH_NO_CUDA_MEMORY_CACHING "env: a plan recorded with the cache on keeps it on under $policy"
		env_has "UMKIT_FRAMEWORK_CACHE=1" "env: a plan recorded with the cache on tells the library under $policy"
	done
	# A user's value that keeps the cache on agrees with the plan: no
	# warning that umkit will see the cache's blocks.
	PYTORCH_NO_CUDA_MEMORY_CACHING=0 fake_umreplay --plan "$SCRATCH/cached.bin" ./program.sh
	expect_status 0 "0 under a plan recorded with the cache on: the program runs"
	env_lacks PYTORCH_NO_CUDA_MEMORY_CACHING "env: 0 under a plan recorded with the cache on is umreplay's choice too"
	env_has "UMKIT_FRAMEWORK_CACHE=1" "env: 0 under a plan recorded with the cache on tells the library"
	expect_err_lacks "keeps PyTorch's caching allocator on" "0 under a plan recorded with the cache on is not warned about"
	expect_err_has "it stays on" "0 under a plan recorded with the cache on: says why the cache stays on"
	PYTORCH_NO_CUDA_MEMORY_CACHING=1 fake_umreplay --plan "$SCRATCH/cached.bin" ./program.sh
	env_has "PYTORCH_NO_CUDA_MEMORY_CACHING=1" "env: the user's cache setting beats the plan's recording"
	env_lacks UMKIT_FRAMEWORK_CACHE "env: with the user's setting the library is not told the cache is on"
	expect_err_has "the plan was recorded with PyTorch's caching allocator on, and PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns it off" \
		"turning the cache off under a plan recorded with it on is warned about"
	PYTORCH_NO_CUDA_MEMORY_CACHING=1 fake_umreplay --plan "$plan" ./program.sh
	expect_status 0 "turning the cache off under a plan recorded with it off: the program runs"
	expect_err_lacks "recorded with PyTorch's caching allocator on" \
		"turning the cache off under a plan recorded with it off: no warning"
else
	not_ok "valid plan: the program runs with the replay environment # needs umplan's plan"
fi

UMKIT_PLAN=/stale.bin UMKIT_GPU_BUDGET=1 UMKIT_STATS=/stale.json UMKIT_MAX_MANAGED=1 UMKIT_KERNEL_TIMES=1 \
	fake_umreplay --policy ideal ./program.sh "" "it's"
expect_status 0 "no plan, --policy ideal: the program runs"
env_has "UMKIT_POLICY=ideal" "env: --policy ideal"
env_lacks UMKIT_PLAN "env: no --plan, no UMKIT_PLAN (a stale one is removed)"
env_lacks UMKIT_GPU_BUDGET "env: no --gpu-budget, no UMKIT_GPU_BUDGET (a stale one is removed)"
env_lacks UMKIT_MAX_MANAGED "env: no --max-managed, no UMKIT_MAX_MANAGED (a stale one is removed)"
env_lacks UMKIT_STATS "env: no --stats, no UMKIT_STATS (a stale one is removed)"
env_lacks UMKIT_KERNEL_TIMES "env: no --kernel-times, no UMKIT_KERNEL_TIMES (a stale one is removed)"
env_has "UMKIT_COMMAND=./program.sh '' 'it'\\''s'" "env: UMKIT_COMMAND quotes the command line"
env_has "LD_PRELOAD=$LIB" "env: the library alone in LD_PRELOAD"
# --stats naming a symbolic link: the target is judged and written, the
# link kept; a link to nothing is refused.
echo "$OLD_STATS" >"$SCRATCH/stats-target.json"
ln -sfn stats-target.json "$SCRATCH/stats-link.json"
fake_umreplay --policy ideal --stats stats-link.json ./program.sh
expect_status 0 "--stats naming a link to earlier stats: the program runs"
env_has "UMKIT_STATS=$REAL_SCRATCH/stats-target.json" "--stats naming a link: the stats written are the target"
if [ -L "$SCRATCH/stats-link.json" ] && [ ! -e "$SCRATCH/stats-target.json" ]; then
	ok "--stats naming a link: the link kept, the earlier stats removed"
else not_ok "--stats naming a link: the link kept, the earlier stats removed"; fi
ln -sfn absent.json "$SCRATCH/stats-link.json"
fake_umreplay --policy ideal --stats stats-link.json ./program.sh
expect_status 3 "--stats naming a link to nothing: setup error"
expect_err_has "stats-link.json is a symbolic link to nothing" "--stats naming a link to nothing: says so"
if [ -L "$SCRATCH/stats-link.json" ] && [ ! -e "$SCRATCH/env.txt" ]; then ok "--stats naming a link to nothing: the link kept, the program not run"
else not_ok "--stats naming a link to nothing: the link kept, the program not run"; fi
# Another tool's injection is replaced, and said to be.
CUDA_INJECTION64_PATH=/opt/profiler/libinject.so fake_umreplay --policy ideal ./program.sh
expect_status 0 "another tool's CUDA_INJECTION64_PATH set: the program runs"
env_has "CUDA_INJECTION64_PATH=$LIB" "env: another tool's CUDA_INJECTION64_PATH replaced by the library"
expect_err_has "replacing CUDA_INJECTION64_PATH=/opt/profiler/libinject.so: another tool's injection cannot run with umreplay" \
	"another tool's CUDA_INJECTION64_PATH: its replacement is warned about"

finish
