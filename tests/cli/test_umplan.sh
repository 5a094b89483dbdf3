#!/usr/bin/env bash
# Command-line tests for umplan: usage errors, --report and --json output,
# host placement (--host-bw), -o writing a plan, --dump printing it as JSON,
# --check, and clear errors for a missing trace, a trace in use, a trace
# without a table and a newer schema.
# Traces come from lib.sh's make_trace.
source "$(dirname "$0")/lib.sh"
UMPLAN=$(realpath "$BIN/umplan")

trace=$SCRATCH/trace.db
make_trace "$trace"

run "$UMPLAN" --help
expect_status 0 "--help exits 0"
for opt in --output --capacity --htod-bw --dtoh-bw --call-cost --host-bw --iteration --report --json --check \
	--corr-rows --corr-ways --corr-successors --dump --quiet --version --simulate --ratios --constants --sim-csv --perturb; do
	expect_help_lists "$opt" "--help documents $opt, in a line of its own"
done
expect_out_has "  --host-bw GB/s " "--help explains --host-bw"
# The limits the parser enforces: --ratios refuses a ratio past 1e6.
expect_out_has "each from 1 to 1e6" "--help gives --ratios' limits"

run "$UMPLAN" --version
expect_status 0 "--version exits 0"
expect_out_has "umplan (umkit) $(cat VERSION)" "--version prints the version as umrec and umreplay do"

run "$UMPLAN"
expect_status 2 "no trace is a usage error"
expect_err_has "no trace given" "no trace says so"
# Options after the trace are options, as the synopsis writes them, also
# where POSIXLY_CORRECT is set (getopt would stop at the trace); words
# after '--' are traces.
POSIXLY_CORRECT=1 run "$UMPLAN" "$trace" -o "$SCRATCH/posix.bin" -q
expect_status 0 "POSIXLY_CORRECT: options after the trace are taken"
if [ -s "$SCRATCH/posix.bin" ]; then ok "POSIXLY_CORRECT: the plan is written where -o says"
else not_ok "POSIXLY_CORRECT: the plan is written where -o says"; fi
run "$UMPLAN" -q -- "$trace" --report
expect_status 2 "a second trace after '--' is a usage error"
expect_err_has "one trace at a time ('--report' is extra)" "a second trace after '--': named"
run "$UMPLAN" "$trace" "$SCRATCH/other.db"
expect_status 2 "two traces, no option: a usage error"
expect_err_has "one trace at a time ('$SCRATCH/other.db' is extra)" "two traces, no option: the second named"
run "$UMPLAN" "$trace" --frobnicate
expect_status 2 "an unknown option is a usage error"
expect_err_has "--frobnicate" "the unknown option is named"
# Inside a cluster of short options getopt has not moved past the word:
# the word before it (here a long option) is not the one refused.
run "$UMPLAN" --report -xq "$trace"
expect_status 2 "an unknown short option in a cluster is a usage error"
expect_err_has "unknown option '-x'" "the unknown short option in a cluster is named"
expect_err_lacks "takes no value" "the long option before the cluster is not blamed"
run "$UMPLAN" "$trace" --capacity lots
expect_status 2 "a bad size is a usage error"
expect_err_has "lots" "the bad size is named"
run "$UMPLAN" "$trace" --iteration sometimes
expect_status 2 "a bad --iteration is a usage error"
run "$UMPLAN" "$trace" --htod-bw -3
expect_status 2 "a negative bandwidth is a usage error"
run "$UMPLAN" "$trace" --host-bw abc
expect_status 2 "a bad --host-bw is a usage error"
expect_err_has "--host-bw: 'abc'" "the bad --host-bw is named"
# Below 1 MB/s a transfer's nanoseconds would overflow their sums; above
# 2^63 bytes a capacity would turn negative in the scheduler.
run "$UMPLAN" "$trace" --dtoh-bw 1e-10
expect_status 2 "a bandwidth below 0.001 GB/s is a usage error"
expect_err_has "from 0.001 to 1e6 GB/s" "it gives the range"
run "$UMPLAN" "$trace" --capacity 9223372036854775808
expect_status 2 "a capacity of 2^63 bytes is a usage error"
expect_err_has "is too large" "it says so"
# A call cost as tests/gpu/calibrate.py prints it (call_cost_us, with
# decimals) is taken, to the nanosecond; a negative one is not.
run "$UMPLAN" "$trace" --call-cost 13.8 --json
expect_status 0 "--call-cost with decimals: taken"
expect_json 'assert d["plan"]["call_cost_ns"] == 13800' "--call-cost 13.8 plans with 13800 ns per call"
# The link's bandwidths reach the schedule: the plan's busy times are its
# transfers at the speeds given (and the call cost), not the defaults'.
run "$UMPLAN" "$trace" --json --capacity 5M --host-bw 0 --htod-bw 20 --dtoh-bw 4.3
expect_json 'p = d["plan"]; assert (p["htod_bytes_per_s"], p["dtoh_bytes_per_s"]) == (20 * 10**9, 43 * 10**8) and p["evict"] > 0 and p["prefetch"] > 0
for key, n, b, bps in (("dtoh_busy_ns", "evict", "evict_bytes", 4.3e9), ("htod_busy_ns", "prefetch", "prefetch_bytes", 20e9)):
    assert abs(p[key] - (p[b] * 1e9 / bps + p[n] * p["call_cost_ns"])) <= p[n], (key, p[key])' \
	"--htod-bw 20 --dtoh-bw 4.3: the plan's transfers take their time at those speeds"
# The correlation tables' shape reaches the plan, as --dump shows it.
run "$UMPLAN" "$trace" -q --capacity 5M --corr-rows 64 --corr-ways 4 --corr-successors 2 -o "$SCRATCH/corr.bin"
expect_status 0 "--corr-rows, --corr-ways and --corr-successors: planned"
run "$UMPLAN" --dump "$SCRATCH/corr.bin"
expect_json 'c = d["correlation"]["config"]; assert (c["rows"], c["ways"], c["successors"]) == (64, 4, 2), c' \
	"--corr-rows 64 --corr-ways 4 --corr-successors 2: the plan's tables have that shape"
run "$UMPLAN" "$trace" --call-cost -1
expect_status 2 "a negative --call-cost is a usage error"
expect_err_has "--call-cost: '-1' is not a time from 0 to 1e6 microseconds" "it names the value and the range"
echo '{"htod_gbps": 1e-12}' >"$SCRATCH/slow.json"
run "$UMPLAN" "$trace" --simulate --constants "$SCRATCH/slow.json"
expect_status 1 "--constants with a bandwidth below 0.001 GB/s fails"
expect_err_has "htod_gbps is not one number from 0.001 to 1e+06" "it names the key and the range"
# What tests/gpu/calibrate.py may write (a fit clamped to 0) is taken; a
# cost so large that the sums of many calls would wrap, junk after the
# object, a key given twice are not.
echo '{"htod_gbps": 49.35, "call_cost_us": 13.8, "fault_batch_us": 0.0}' >"$SCRATCH/zero.json"
run "$UMPLAN" "$trace" --simulate --constants "$SCRATCH/zero.json" -q
expect_status 0 "--constants with fault_batch_us 0: taken"
for bad in '{"htod_gbps": 50, "call_cost_us": 1e15}' '{"htod_gbps": 50} junk' '{"htod_gbps": 50, "htod_gbps": -1}'; do
	echo "$bad" >"$SCRATCH/bad.json"
	run "$UMPLAN" "$trace" --simulate --constants "$SCRATCH/bad.json" -q
	expect_status 1 "--constants $bad: refused"
	expect_err_has "$SCRATCH/bad.json: " "--constants $bad: names the file"
done
echo '{"htod_gbps": 40, "htod_gbps": 41}' >"$SCRATCH/twice.json"
run "$UMPLAN" "$trace" --simulate --constants "$SCRATCH/twice.json" -q
expect_status 1 "--constants with a key given twice: refused"
expect_err_has "htod_gbps is given twice" "--constants with a key given twice: says so"
# Not a file to read to its end: a FIFO no one writes would block for
# ever, a device may never end.
mkfifo "$SCRATCH/constants.fifo"
for f in "$SCRATCH/constants.fifo" /dev/zero; do
	run timeout 10 "$UMPLAN" "$trace" --simulate --constants "$f" -q
	expect_status 1 "--constants $f: refused"
	expect_err_has "$f: not a regular file" "--constants $f: says why"
done
run "$UMPLAN" "$trace" --simulate --constants "$SCRATCH"
expect_status 1 "--constants naming a folder: refused"
expect_err_has "$SCRATCH: Is a directory" "--constants naming a folder: says so, naming it"
# Files too large to be what they are named as are refused by their
# size, before a byte is read (sparse: nothing is written).
truncate -s $((1 << 20 | 1)) "$SCRATCH/huge.json"
run "$UMPLAN" "$trace" --simulate --constants "$SCRATCH/huge.json" -q
expect_status 1 "--constants of 1 MiB and a byte: refused"
expect_err_has "$SCRATCH/huge.json: larger than 1 MiB: not a constants file" "--constants of 1 MiB and a byte: says why"
truncate -s $((1 << 36 | 65)) "$SCRATCH/huge.plan"
run timeout 10 "$UMPLAN" --dump "$SCRATCH/huge.plan"
expect_status 1 "--dump of a 64 GiB file: refused, nothing read"
expect_err_has "$SCRATCH/huge.plan: not a umkit plan (68719476801 bytes is too large)" "--dump of a 64 GiB file: says why"
rm -f "$SCRATCH/huge.json" "$SCRATCH/huge.plan"
run "$UMPLAN" "$trace" --corr-ways 0
expect_status 2 "an out-of-range table size is a usage error"
run "$UMPLAN" "$trace" "$trace"
expect_status 2 "two traces are a usage error"
run "$UMPLAN" "$trace" -o
expect_status 2 "-o without a value is a usage error"
# An empty file name is a value missing, as umrec and umreplay say of
# theirs: a usage error naming the option, not a file looked for.
run "$UMPLAN" "$trace" -o ""
expect_status 2 "-o '' (an empty name): a usage error"
expect_err_has "option '-o' needs a file name" "-o '' (an empty name): says so"
for form in "--output=" "--dump=" "--simulate --constants=" "--simulate --sim-csv="; do
	read -ra words <<<"$form"
	if [ "$form" = --dump= ]; then run "$UMPLAN" --dump=; else run "$UMPLAN" "$trace" "${words[@]}"; fi
	expect_status 2 "$form (an empty name): a usage error"
	expect_err_has "option '${words[-1]%=}' needs a file name" "$form (an empty name): says so, naming the option"
done

run "$UMPLAN" "$SCRATCH/absent.db"
expect_status 1 "a missing trace is bad input"
expect_err_has "$SCRATCH/absent.db" "the missing trace is named"
# What a hand edit can leave that umrec never writes: text in an integer
# column (SQLite keeps what the column's affinity cannot convert), and
# rows repeated in a table rebuilt without its primary key.
make_trace "$SCRATCH/text.db" "UPDATE alloc SET size = 'abc' WHERE id = 2;"
run "$UMPLAN" "$SCRATCH/text.db" --report
expect_status 1 "text in an integer column: bad input"
expect_err_has "$SCRATCH/text.db: a row of alloc has size 'abc', not an integer: not a trace umrec wrote" \
	"text in an integer column: names the file, the table, the column and the value"
make_trace "$SCRATCH/real.db" "UPDATE kernel SET launch_ns = 1.5 WHERE seq = 3;"
run "$UMPLAN" "$SCRATCH/real.db" --report
expect_status 1 "a fraction in an integer column: bad input"
expect_err_has "a row of kernel has launch_ns '1.5', not an integer" "a fraction in an integer column: says so"
make_trace "$SCRATCH/twice.db" "PRAGMA legacy_alter_table = ON; CREATE TABLE a2 AS SELECT * FROM alloc; DROP TABLE alloc;
ALTER TABLE a2 RENAME TO alloc; INSERT INTO alloc SELECT * FROM alloc WHERE id = 1;"
run "$UMPLAN" "$SCRATCH/twice.db" --report
expect_status 1 "an allocation twice: bad input"
expect_err_has "$SCRATCH/twice.db: allocation 1 appears more than once: not a trace umrec wrote" "an allocation twice: says which"
make_trace "$SCRATCH/ktwice.db" "PRAGMA legacy_alter_table = ON; CREATE TABLE k2 AS SELECT * FROM kernel; DROP TABLE kernel;
ALTER TABLE k2 RENAME TO kernel; INSERT INTO kernel SELECT correlation_id, seq + 1000, exec_id, name_id, grid_x, grid_y, grid_z,
block_x, block_y, block_z, shared_mem, stream_id, thread_id, launch_ns, start_ns, end_ns FROM kernel WHERE seq = 1;"
run "$UMPLAN" "$SCRATCH/ktwice.db" --report
expect_status 1 "a kernel twice: bad input"
expect_err_has "appears more than once: not a trace umrec wrote" "a kernel twice: says so"
# A path that is not UTF-8 (Latin-1 here) still gives valid JSON: its
# byte becomes U+FFFD, in --json and in --dump's provenance alike.
latin=$SCRATCH/$'tr\xe9.db'
cp "$trace" "$latin"
run "$UMPLAN" "$latin" --json --capacity 5M -o "$SCRATCH/latin.bin"
expect_status 0 "a trace whose path is not UTF-8: planned"
expect_json 'assert d["trace"]["path"].endswith("tr\ufffd.db")' "a trace whose path is not UTF-8: --json is valid, the byte replaced"
run "$UMPLAN" --dump "$SCRATCH/latin.bin"
expect_json 'assert "tr\ufffd.db" in json.dumps(d, ensure_ascii=False)' "a plan from a path that is not UTF-8: --dump is valid JSON"
# --simulate keeps a few words per 2 MiB block: a trace whose tensors span
# more than 32 TiB (an allocation of 2^50 bytes here) is refused, before
# the model would take more memory than the host has.
make_trace "$SCRATCH/vast.db" "UPDATE alloc SET size = 1 << 50, reserved = 1 << 50 WHERE id = 1;"
run "$UMPLAN" "$SCRATCH/vast.db" --simulate
expect_status 1 "--simulate past 32 TiB of tensors: refused"
expect_err_has "$SCRATCH/vast.db: the iteration's tensors span" "--simulate past 32 TiB of tensors: names the file"
expect_err_has "more than --simulate models (16777216: 32 TiB)" "--simulate past 32 TiB of tensors: gives the limit"
mkfifo "$SCRATCH/fifo.db"
run timeout 20 "$UMPLAN" "$SCRATCH/fifo.db"
expect_status 1 "a FIFO as the trace: bad input, nothing waits"
expect_err_has "$SCRATCH/fifo.db: not a regular file" "a FIFO as the trace: says so"
run timeout 20 "$UMPLAN" --dump "$SCRATCH/fifo.db"
expect_status 1 "--dump of a FIFO: bad input, nothing waits"
make_trace "$SCRATCH/nomig.db" "DROP VIEW kernel_migration; DROP TABLE migration;"
run "$UMPLAN" "$SCRATCH/nomig.db"
expect_status 1 "a trace without a table is bad input"
expect_err_has "nomig.db" "the file is named"
expect_err_has "migration" "the missing table is named"
# A trace another process holds locked is waited for, up to 5 s: one
# released within that (a commit, umrec's last checkpoint) is planned...
make_trace "$SCRATCH/held.db"
hold_lock "$SCRATCH/held.db" "BEGIN EXCLUSIVE" 1
run "$UMPLAN" "$SCRATCH/held.db" -o "$SCRATCH/held.bin"
release_lock
expect_status 0 "a trace locked for 1 s: waited for, then planned"
# ...and one held longer cannot be read: said to be in use, once the wait
# is over.
hold_lock "$SCRATCH/held.db" "BEGIN EXCLUSIVE"
started=$(date +%s%N)
run timeout 30 "$UMPLAN" "$SCRATCH/held.db" -o "$SCRATCH/held.bin"
waited_ms=$((($(date +%s%N) - started) / 1000000))
release_lock
expect_status 1 "a trace in use is bad input"
expect_err_has "held.db: cannot read: in use by another process, which holds it locked" \
	"a trace in use: says so, naming it"
if [ "$waited_ms" -ge 4500 ] && [ "$waited_ms" -lt 15000 ]; then ok "a trace in use: given up on after about 5 s"
else not_ok "a trace in use: given up on after about 5 s (after $waited_ms ms)"; fi
make_trace "$SCRATCH/newer.db" "PRAGMA user_version = 99;"
run "$UMPLAN" "$SCRATCH/newer.db"
expect_status 1 "a newer schema is bad input"
expect_err_has "is newer than this umkit" "the newer schema is explained"
run "$UMPLAN" "$trace" --iteration nvtx:step
expect_status 1 "a missing NVTX range is bad input"
expect_err_has "'step'" "the missing NVTX name is named"
run "$UMPLAN" "$trace" --iteration 40
expect_status 1 "an iteration out of range is bad input"
# A number in range is the iteration planned (auto plans iteration 4).
run "$UMPLAN" "$trace" --iteration 2 --report
expect_status 0 "--iteration 2 exits 0"
expect_out_has "planned      iteration 2: kernels 8..11" "--iteration 2 plans iteration 2, not the one auto picks"

run "$UMPLAN" "$trace" --report
expect_status 0 "--report exits 0"
expect_out_has "iterations   6 found by the period of the execution-ID sequence (4 kernels)" \
	"--report shows the iterations found"
expect_out_has "planned      iteration 4: kernels 16..19" "--report shows the planned iteration"
expect_out_has "from the trace's device memory (default): 1.00 GiB less 3 % headroom" \
	"--report shows the default capacity and its headroom"
expect_out_has "inactive periods" "--report shows inactive periods"
expect_out_has "predicted    peak residency" "--report shows the predicted peak"
expect_out_has "cannot fit   none" "--report says every kernel fits"
[ ! -e plan.bin ] && ok "--report alone writes no plan" || not_ok "--report alone writes no plan"
# Nor does --json, --check or --simulate without -o: each run in a folder of
# its own (a plan.bin left in this one would be written by any of them).
for opt in --report --json --check --simulate; do
	mkdir -p "$SCRATCH/cwd$opt"
	(cd "$SCRATCH/cwd$opt" && "$UMPLAN" "$trace" $opt -q >/dev/null 2>&1)
	status=$?
	if [ "$status" -eq 0 ] && [ -z "$(ls -A "$SCRATCH/cwd$opt")" ]; then ok "$opt without -o writes no plan"
	else not_ok "$opt without -o writes no plan (status $status, wrote: $(ls -A "$SCRATCH/cwd$opt"))"; fi
done

run "$UMPLAN" "$trace" --report --capacity 5M
expect_status 0 "--report under a small capacity exits 0"
expect_out_has "capacity     4.85 MiB, from --capacity: 5.00 MiB less 3 % headroom" "--capacity shows in the report"
# ("evict" alone is in the segments' header, with or without evictions.)
expect_out_has "plan moves   3 evictions (10.00 MiB to the host)" "the report counts the evictions"
expect_out_has "kernel      1 evict       4.00 MiB  persistent allocation 1  after kernel 0" "the report lists the evictions"

run "$UMPLAN" "$trace" --report --capacity 5M --headroom 0
expect_status 0 "--headroom 0 exits 0"
expect_out_has "capacity     5.00 MiB, from --capacity" "--headroom 0 plans under the whole capacity"
expect_out_lacks "headroom" "--headroom 0 leaves nothing free"
for bad in 51 -1 x; do
	run "$UMPLAN" "$trace" --capacity 5M --headroom "$bad"
	expect_status 2 "--headroom $bad is a usage error"
done
expect_err_has "'x' is not a whole percentage from 0 to 50" "the bad headroom is named"

run "$UMPLAN" "$trace" --json --capacity 5M --host-bw 0
expect_status 0 "--json exits 0"
expect_json 'assert d["iterations"]["period"] == 4; assert d["plan"]["capacity_before_headroom"] == 5*2**20; assert d["plan"]["capacity"] == 5*2**20 - 5*2**20 // 100 * 3; assert d["plan"]["evict"] > 0' "--json is JSON with the period, capacity and evictions"
# A count of 16 digits keeps them all: cJSON printed 2^53 - 1 as
# 9.00719925474099e+15, 9007199254740990 read back.
run "$UMPLAN" "$trace" --json --capacity 9007199254740991
expect_json 'assert d["plan"]["capacity_before_headroom"] == 2**53 - 1' "--json: a capacity of 2^53 - 1 bytes is printed exactly"
# Above 2^53, where a JSON reader's double would round, a decimal string.
run "$UMPLAN" "$trace" --json --capacity 9007199254740993
expect_json 'assert d["plan"]["capacity_before_headroom"] == "9007199254740993"' "--json: a capacity of 2^53 + 1 bytes is a decimal string"

# Host placement: at 5 MiB (4.85 after the headroom) the peak of 6 MiB is
# 1.15 MiB too high. This trace's kernels run 100 us each, 80 passes over
# the 4 MiB weight at the device's peak: they re-read it (a GEMM's
# signature), so it migrates. With kernels of 2 us (1.6 passes) the last
# 2 MiB block of the weight (two uses per iteration) stays in host memory by
# default, its first block resident, and nothing migrates; a slow link or
# --host-bw 0 leaves the weight to the migration schedule.
run "$UMPLAN" "$trace" --json --capacity 5M
expect_json 'p=d["plan"]; assert p["host_tensors"] == 0 and p["evict"] > 0' "a weight its kernels re-read stays in the migration schedule"
brief=$SCRATCH/brief.db
make_trace "$brief" "UPDATE kernel SET end_ns = start_ns + 2000;"
run "$UMPLAN" "$brief" --json --capacity 5M
expect_status 0 "--json with host placement exits 0"
expect_json 'p=d["plan"]; assert p["host_tensors"] == 1 and p["host_bytes"] == 2*2**20 and p["evict"] == 0 and p["prefetch"] == 0; assert 0 < p["host_pass_ns"] < p["predicted_iteration_ns"]' "--json: the weight's last block stays on the host, nothing migrates, its passes priced"
for bw in 0 0.0 1; do
	run "$UMPLAN" "$brief" --json --capacity 5M --host-bw "$bw"
	expect_status 0 "--host-bw $bw exits 0"
	expect_json 'p=d["plan"]; assert p["host_tensors"] == 0 and p["host_bytes"] == 0 and p["host_pass_ns"] == 0 and p["evict"] > 0' "--host-bw $bw: nothing on the host, the weight migrates"
done
run "$UMPLAN" "$brief" --report --capacity 5M
expect_out_has "host         1 tensors (2.00 MiB; of 1 only the tail, the rest resident) stay in host memory" "--report lists the host tensors, the partial one"
expect_out_has "  largest on the host:" "--report lists the tensors on the host"
expect_out_has "passes cost at most about" "--report gives the passes' price as the ceiling it is"
expect_out_has "2.00 MiB of 4.00 MiB from byte 2097152, 2 uses per iteration" \
	"--report says how much of each is there, from where, and its uses"
run "$UMPLAN" "$brief" -o "$SCRATCH/host.bin" --capacity 5M --check -q
expect_status 0 "a plan with host placement passes --check"
run "$UMPLAN" --dump "$SCRATCH/host.bin"
expect_json 'assert d["host"] == [0] and d["host_offsets"] == [2*2**20] and d["allocs"][0]["origin"] == "persistent" and d["n_ops"] == 0' "--dump shows the host list and where the host part starts"

plan=$SCRATCH/plan.bin
run "$UMPLAN" "$trace" -o "$plan" --capacity 5M --check
expect_status 0 "-o with --check exits 0"
[ -s "$plan" ] && ok "-o writes the plan" || not_ok "-o writes the plan"
expect_err_has "wrote $plan" "umplan says what it wrote"
expect_err_has "keeps every property" "--check passes"
# (Moved away first: a plan not written again would compare equal.)
mv "$plan" "$SCRATCH/first.bin"
run "$UMPLAN" "$trace" -o "$plan" --capacity 5M -q
expect_status 0 "-q exits 0"
[ -z "$err" ] && ok "-q prints nothing" || not_ok "-q prints nothing"
cmp -s "$plan" "$SCRATCH/first.bin" && ok "the same trace and options give the same plan bytes" \
	|| not_ok "the same trace and options give the same plan bytes"
UMKIT_LOG=quiet run "$UMPLAN" "$trace" -o "$plan" --capacity 5M
expect_status 0 "UMKIT_LOG=quiet exits 0"
[ -z "$err" ] && ok "UMKIT_LOG=quiet prints nothing, as -q" || not_ok "UMKIT_LOG=quiet prints nothing, as -q"

# -o never overwrites what is not a plan: the trace itself, or other data.
cp "$trace" "$SCRATCH/self.db"
run "$UMPLAN" "$SCRATCH/self.db" -o "$SCRATCH/self.db" --capacity 5M
expect_status 1 "-o naming the trace: error"
expect_err_has "self.db exists and is not a plan file" "-o naming the trace: says so"
cmp -s "$trace" "$SCRATCH/self.db" && ok "-o naming the trace: the trace is untouched" \
	|| not_ok "-o naming the trace: the trace is untouched"
echo "my notes" >"$SCRATCH/notes.txt"
run "$UMPLAN" "$trace" -o "$SCRATCH/notes.txt" --capacity 5M
expect_status 1 "-o naming a non-plan file: error"
[ "$(cat "$SCRATCH/notes.txt")" = "my notes" ] && ok "-o naming a non-plan file: untouched" \
	|| not_ok "-o naming a non-plan file: untouched"
# A symbolic link stands for its target: the plan replaces the target, the
# link stays a link (renaming the new plan over it would have replaced it).
: >"$SCRATCH/target.bin"
ln -sfn target.bin "$SCRATCH/link.bin"
run "$UMPLAN" "$trace" -o "$SCRATCH/link.bin" --capacity 5M -q
expect_status 0 "-o naming a link: planned"
if [ -L "$SCRATCH/link.bin" ] && head -c 8 "$SCRATCH/target.bin" | grep -q UMKPLAN; then ok "-o naming a link: the plan is the target, the link kept"
else not_ok "-o naming a link: the plan is the target, the link kept"; fi
# An activation still read by the next iteration's third kernel, after
# its next instance was made before the second: two instances live at
# once, the older one planned as a tensor of its own, named by the
# ordinal it shares with its successor (origin "previous"), so that its
# ops hold in every iteration; nothing to warn about.
make_trace "$SCRATCH/overlap.db" "UPDATE alloc SET free_ns = free_ns + 3000000 WHERE id >= 2;
INSERT INTO kernel_arg SELECT 100 + seq, 8, 1 + seq / 4, 0 FROM kernel WHERE seq % 4 = 2 AND seq >= 4;"
run "$UMPLAN" "$SCRATCH/overlap.db" --json --capacity 5M
expect_status 0 "an instance used after its successor is made: planned"
expect_err_lacks "warning" "an instance used after its successor is made: nothing to warn about"
expect_json 'assert d["allocations"]["previous_instance_used_after"] == 1' \
	"an instance used after its successor is made: counted in --json"
run "$UMPLAN" "$trace" --json --capacity 5M
expect_json 'assert d["allocations"]["previous_instance_used_after"] == 0' "the plain synthetic trace has none"
# The same with the two instances at different addresses, where the plan
# must evict: the older instance starts the iteration as the newer one
# ended it (the same memory). Planned with the newer one's tail evicted,
# the older one's first use had no prefetch, which --check tells.
make_trace "$SCRATCH/overlap2.db" "UPDATE alloc SET free_ns = free_ns + 3000000, address = 8589934592 + (id % 2) * 4194304 WHERE id >= 2;
INSERT INTO kernel_arg SELECT 100 + seq, 8, 1 + seq / 4, 0 FROM kernel WHERE seq % 4 = 2 AND seq >= 4;"
for cap in 3M 4M 6M; do
	run "$UMPLAN" "$SCRATCH/overlap2.db" --capacity $cap --headroom 0 --check -o "$SCRATCH/overlap2.plan"
	expect_status 0 "an instance used after its successor is made, at $cap: the plan keeps every property"
done
# Three more shapes of it, iterations fixed by NVTX ranges, that failed
# --check in a review of the first version: the newer instance made at the
# iteration's first launch (live the whole cycle, so no period across the
# end); the two instances' footprints differ (3 and 2 MiB); the recorded
# iteration's instance freed early, so that its memory is not the older
# one of the next. And (first3, session 61's review) the newer instance
# made at the first launch, last used before the iteration's end, the
# older read by the first kernel: planned as live the whole cycle, its
# memory was evicted and never brought back as the older instance, every
# iteration, and --check, which started the older one resident, passed.
nvtx="INSERT INTO string VALUES (5, 'iteration');
WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 5)
INSERT INTO nvtx_range SELECT n + 1, 5, 1, (4 * n + 1) * 1000000 - 50000, (4 * n + 5) * 1000000 - 50000 FROM i;"
make_trace "$SCRATCH/first.db" "UPDATE alloc SET alloc_ns = (4 * (id - 2) + 1) * 1000000 - 10000,
  free_ns = free_ns + 3000000, address = 8589934592 + (id % 2) * 4194304 WHERE id >= 2;
INSERT INTO kernel_arg SELECT 100 + seq, 8, 1 + seq / 4, 0 FROM kernel WHERE seq % 4 = 2 AND seq >= 4; $nvtx"
make_trace "$SCRATCH/sizes.db" "UPDATE alloc SET free_ns = free_ns + 4000000, address = 8589934592 + (id % 2) * 4194304 WHERE id >= 2;
UPDATE alloc SET reserved = 3145728 WHERE id >= 2 AND id % 2 = 0;
UPDATE kernel_arg SET alloc_id = alloc_id - 1 WHERE (correlation_id - 100) % 4 = 3 AND correlation_id >= 104 AND alloc_id >= 2; $nvtx"
make_trace "$SCRATCH/early.db" "UPDATE alloc SET free_ns = free_ns + 2000000, address = 8589934592 + (id % 2) * 4194304 WHERE id >= 2;
UPDATE alloc SET free_ns = 19985000 WHERE id = 6;
DELETE FROM kernel_arg;
INSERT INTO kernel_arg SELECT 100 + seq, 0, 1, 0 FROM kernel WHERE seq % 4 = 2;
INSERT INTO kernel_arg SELECT 100 + seq, 8, 2 + seq / 4, 0 FROM kernel WHERE seq % 4 = 1;
INSERT INTO kernel_arg SELECT 100 + seq, 8, 1 + seq / 4, 0 FROM kernel WHERE seq % 4 = 0 AND seq >= 4; $nvtx"
make_trace "$SCRATCH/first3.db" "UPDATE alloc SET alloc_ns = (4 * (id - 2) + 1) * 1000000 - 10000,
  free_ns = free_ns + 3000000, address = 8589934592 + (id % 2) * 4194304 WHERE id >= 2;
DELETE FROM kernel_arg WHERE (correlation_id - 100) % 4 = 3;
INSERT INTO kernel_arg SELECT 100 + seq, 8, 1 + seq / 4, 0 FROM kernel WHERE seq % 4 = 0 AND seq >= 4; $nvtx"
for t in first first3 sizes early; do
	for cap in 3M 4M 5M 6M; do
		run "$UMPLAN" "$SCRATCH/$t.db" --capacity $cap --headroom 0 --check -o "$SCRATCH/$t.plan"
		expect_status 0 "two instances live at once ($t), at $cap: the plan keeps every property"
	done
done
# Freed only after the next iteration ends: each instance live into a third,
# which the plan cannot name in every iteration; said so.
make_trace "$SCRATCH/third.db" "UPDATE alloc SET free_ns = free_ns + 6000000 WHERE id >= 2;"
run "$UMPLAN" "$SCRATCH/third.db" --json --capacity 5M
expect_status 0 "an instance freed after the next iteration: planned"
expect_err_has "freed only after the next iteration ends, each live into a third iteration" \
	"an instance freed after the next iteration: warned about"
expect_json 'a = d["allocations"]; assert (a["previous_instance_freed_after_next"], a["previous_instance_freed_after"]) == (1, 0)' \
	"an instance freed after the next iteration: counted in --json"
# The activation freed after its next instance is made, and read by no
# kernel meanwhile: the same, and where the plan moves the older instance,
# its ops name it as the previous one.
make_trace "$SCRATCH/late.db" "UPDATE alloc SET free_ns = free_ns + 3000000 WHERE id >= 2;"
run "$UMPLAN" "$SCRATCH/late.db" --json --capacity 5M -o "$SCRATCH/late.plan"
expect_status 0 "an instance freed after its successor is made: planned"
expect_err_lacks "warning" "an instance freed after its successor is made: nothing to warn about"
expect_json 'a = d["allocations"]; assert (a["previous_instance_freed_after"], a["previous_instance_freed_after_bytes"], a["previous_instance_used_after"]) == (1, 2 << 20, 0)' \
	"an instance freed after its successor is made: counted in --json"
run "$UMPLAN" --dump "$SCRATCH/late.plan"
expect_json 'p = [a for a in d["allocs"] if a["origin"] == "previous"]
assert len(p) == 1 and p[0]["size"] == d["signature"]["alloc_sizes"][p[0]["ordinal"] - 1]
assert any(o["alloc"] == p[0]["index"] for o in d["ops"])' \
	"an instance freed after its successor is made: moved by the plan under its ordinal"

# Less memory, more paging: on train_sim's trace (a kernel larger than the
# capacity at W/B 3 and 4) ondemand and deepum slow down from one ratio to
# the next; a simulator that stayed over the capacity once a kernel pushed
# it there predicted the same time at every ratio.
sim_trace=$FIXTURES/h100_train_sim.db
run "$UMPLAN" "$sim_trace" --simulate --json --ratios 1.5,2,3,4 -q
if python3 -c '
import json, sys
rows = json.loads(sys.argv[1])["rows"]
times = [[r["time_ns"] for r in rows if r["policy"] == pol] for pol in ("ondemand", "deepum")]
sys.exit(not all(len(t) == 4 and all(a < b for a, b in zip(t, t[1:])) for t in times))' "$out"; then
	ok "--simulate: ondemand and deepum slow down as the capacity shrinks"
else not_ok "--simulate: ondemand and deepum slow down as the capacity shrinks"; fi

# Option errors name the option getopt refused, and why.
run "$UMPLAN" "$trace" -xq
expect_err_has "unknown option '-x'" "an unknown short option among others: named alone"
run "$UMPLAN" --c 1G "$trace"
expect_err_has "option '--c' is ambiguous" "an ambiguous long option: says so"
run "$UMPLAN" "$trace" --quiet=1
expect_err_has "--quiet takes no value" "a long option sharing a short one's letter: named as given"
run "$UMPLAN" "$trace" --output
expect_err_has "--output needs a value" "a long option's missing value: named as given"
run "$UMPLAN" --report=1 "$trace"
expect_status 2 "a value to an option that takes none: usage error"
expect_err_has "--report takes no value" "a value to an option that takes none: says so"
run "$UMPLAN" "$trace" --capacity 1.9K --report
expect_status 2 "--capacity below one 2 MiB block: usage error"
expect_err_has "--capacity: '1.9K' is 1945 bytes, less than one 2 MiB block of memory" "--capacity 1.9K: says why"
run "$UMPLAN" "$trace" -o "$SCRATCH/no/such/dir/p.bin" --capacity 5M
expect_status 1 "-o into a missing folder: error"
expect_err_has "$SCRATCH/no/such/dir" "-o into a missing folder: names it"
run "$UMPLAN" --dump "$plan" -o "$SCRATCH/x.bin"
expect_status 2 "--dump with -o: usage error"
run "$UMPLAN" --check --dump "$plan"
expect_status 2 "--dump with --check: usage error (it would not check)"
expect_err_has "--check does not apply" "--dump with --check: names the option"
run "$UMPLAN" -q --dump "$plan"
expect_status 0 "--dump with -q runs"
python3 -c 'import json,sys; json.load(sys.stdin)["ops"]' <<<"$out" \
	&& ok "--dump with -q prints the plan" || not_ok "--dump with -q prints the plan"

rm -f "$SCRATCH/plan.bin"
(cd "$SCRATCH" && "$UMPLAN" -q "$trace") && [ -s "$SCRATCH/plan.bin" ] \
	&& ok "without -o the plan goes to plan.bin" || not_ok "without -o the plan goes to plan.bin"

run "$UMPLAN" --dump "$plan"
expect_status 0 "--dump exits 0"
expect_json 'pass' "--dump prints JSON"
expect_out_has '"framework_cache":	false' "--dump: a trace without meta framework_cache was recorded with the cache off"
# The plan at 5 MiB has ops (the one above, at the trace's 1 GiB, none;
# "evict" alone is in the predictions' evict_bytes, ops or not).
run "$UMPLAN" --dump "$SCRATCH/first.bin"
expect_json 'assert d["n_ops"] == len(d["ops"]) > 0 and "evict" in [o["kind"] for o in d["ops"]]' "--dump shows the ops"
make_trace "$SCRATCH/cached.db" "INSERT INTO meta VALUES ('framework_cache', '1');"
"$UMPLAN" -q "$SCRATCH/cached.db" -o "$SCRATCH/cached.bin" --capacity 5M
run "$UMPLAN" --dump "$SCRATCH/cached.bin"
expect_out_has '"framework_cache":	true' "--dump: the plan carries meta framework_cache 1"
run "$UMPLAN" "$SCRATCH/cached.db" --report -o "$SCRATCH/cached.bin"
expect_out_has "recorded with PyTorch's caching allocator on" "--report: says the trace was recorded with the cache on"
run "$UMPLAN" --dump "$SCRATCH/absent.bin"
expect_status 1 "--dump of a missing plan is bad input"
expect_err_has "absent.bin" "the missing plan is named"
run "$UMPLAN" --dump "$trace"
expect_status 1 "--dump of a file that is no plan is bad input"
run "$UMPLAN" --dump "$plan" extra
expect_status 2 "--dump with an extra argument is a usage error"

# --simulate: the four policies on a committed fixture; --ratios checked.
fixture=$FIXTURES/h100_mlp.db
# The largest transfers across the iteration's end say so (plan.h: after
# at or past the position, deadline before it).
run "$UMPLAN" "$fixture" --report --capacity 100M
expect_out_has "evict      16.00 MiB  persistent allocation 89  after kernel 70 of the previous iteration" \
	"--report: an eviction at kernel 0 waits for the previous iteration's last kernel"
run "$UMPLAN" "$FIXTURES/h200_reset_probe.db" --report --capacity 150M
expect_out_has "prefetch   64.00 MiB  persistent allocation 1  for kernel 0 of the next iteration" \
	"--report: a prefetch late in the iteration is for the next one's first kernel"
run "$UMPLAN" "$fixture" --simulate --ratios 1.5,2 -q
expect_status 0 "--simulate exits 0"
# A row per ratio and policy: " ideal " alone is in the header's "% of ideal".
for pol in ideal ondemand deepum plan; do
	if [ "$(grep -cE "^ +(1\.50|2\.00) +[0-9.]+ $pol +[0-9.]+ " <<<"$out")" = 2 ]; then ok "--simulate prints the $pol policy's row at each ratio"
	else not_ok "--simulate prints the $pol policy's row at each ratio"; fi
done
expect_out_has "% of ideal" "--simulate prints % of ideal"
if [ "$(grep -cE "^ +(1\.50|2\.00) +[0-9.]+ floor +[0-9.]+ +[0-9.]+$" <<<"$out")" = 2 ]; then ok "--simulate prints the capacity floor's row at each ratio"
else not_ok "--simulate prints the capacity floor's row at each ratio"; fi
run "$UMPLAN" "$fixture" --simulate --capacity 300M -o "$SCRATCH/sim.bin"
expect_status 2 "--simulate with -o: usage error (its plan has no host placement)"
run "$UMPLAN" "$fixture" --simulate --json --report --capacity 300M -q
expect_status 2 "--simulate --json --report: usage error (the JSON would not parse)"
run "$UMPLAN" "$fixture" --simulate --json --capacity 300M -q
expect_status 0 "--simulate --json exits 0"
expect_json 'assert len(d["rows"]) == 4' "--simulate --json prints one row per policy at --capacity"
expect_json 'p = [r for r in d["rows"] if r["policy"] == "plan"][0]; f = d["floors"]; assert len(f) == 1 and f[0]["capacity"] == p["capacity"] and f[0]["kernel_ns"] <= f[0]["ns"] <= p["time_ns"]' \
	"--simulate --json gives the capacity floor, which the plan does not beat"
# Its counts keep their digits too: cJSON printed 2^53 - 1 as 9.00719925474099e+15.
run "$UMPLAN" "$fixture" --simulate --json --capacity 9007199254740991 -q
expect_json 'assert all(r["capacity"] == 2**53 - 1 for r in d["rows"])' "--simulate --json: a capacity of 2^53 - 1 bytes is printed exactly"
run "$UMPLAN" "$fixture" --simulate --json --capacity 9007199254740993 -q
expect_json 'assert all(r["capacity"] == "9007199254740993" for r in d["rows"])' "--simulate --json: a capacity of 2^53 + 1 bytes is a decimal string"
# The report's rows count each op at its kernel's row: with 71 kernels per
# iteration (rows of 7 or 8), an op at a row's first kernel once went to
# the row before.
"$UMPLAN" "$fixture" --capacity 200M -q -o "$SCRATCH/rows.bin"
run "$UMPLAN" "$fixture" --capacity 200M --json -q
if python3 -c '
import json, subprocess, sys
segs = json.loads(sys.argv[1])["memory"]["segments"]
ops = json.loads(subprocess.run([sys.argv[2], "--dump", sys.argv[3]], capture_output=True, check=True).stdout)["ops"]
assert len(segs) == 10 and segs[-1]["last_kernel"] == 70
assert any(op["position"] == s["first_kernel"] > 0 for op in ops for s in segs)
for s in segs:
    at = [op["kind"] for op in ops if s["first_kernel"] <= op["position"] <= s["last_kernel"]]
    for kind in ("evict", "prefetch", "discard", "discard_prefetch"):
        assert s[kind] == at.count(kind), (s, kind, at.count(kind))
' "$out" "$UMPLAN" "$SCRATCH/rows.bin"; then
	ok "--json: each segment counts the ops of its own kernels"
else
	not_ok "--json: each segment counts the ops of its own kernels"
fi
# The program's own managed memory (the MLP's allocations renamed
# cudaMallocManaged): counted and said, its births prefetched, never
# discard-prefetched.
sqlite3 "$fixture" ".backup '$SCRATCH/managed.db'"
sqlite3 "$SCRATCH/managed.db" "UPDATE alloc SET api = 'cudaMallocManaged'"
run "$UMPLAN" "$SCRATCH/managed.db" --capacity 200M --report -q -o "$SCRATCH/managed.plan"
expect_status 0 "a trace of managed memory plans"
managed_line="607 of the trace's are the program's own managed memory (cudaMallocManaged)"
if grep -qF "$managed_line" <<<"$out" && "$UMPLAN" --dump "$SCRATCH/managed.plan" |
	python3 -c 'import json,sys; assert not [o for o in json.load(sys.stdin)["ops"] if o["kind"] == "discard_prefetch"]'; then
	ok "--report says which allocations are managed memory, and the plan discard-prefetches none"
else
	not_ok "--report says which allocations are managed memory, and the plan discard-prefetches none"
fi
run "$UMPLAN" "$SCRATCH/managed.db" --capacity 200M --json -q -o "$SCRATCH/managed.plan"
expect_json 'assert d["trace"]["managed_allocations"] == d["trace"]["allocations"] == 607' "--json counts the managed allocations"
# A program that replays a CUDA graph of its whole step (recorded on the
# H100): the kernels the graph ran are counted, not planned, and said so.
graph_fixture=$(dirname "$fixture")/h100_mlp_cuda_graph.db
run "$UMPLAN" "$graph_fixture" --json -o "$SCRATCH/graph.plan"
expect_status 0 "a trace with CUDA graphs plans"
expect_err_has "535 kernels ran from CUDA graphs, which the plan cannot follow: it covers the 367 kernels launched one by one" \
	"umplan warns that the kernels graphs ran are not planned"
expect_json 'assert d["trace"]["graph_kernels"] == 535' "--json counts the kernels graphs ran"
# PyTorch captured with its cache on: the trace says so, and the plan too.
if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["trace"]["framework_cache"] is True' <<<"$out" &&
	"$UMPLAN" --dump "$SCRATCH/graph.plan" | python3 -c 'import json,sys; assert json.load(sys.stdin)["provenance"]["framework_cache"] is True'; then
	ok "the graph fixture was recorded with PyTorch's cache on, and its plan carries it"
else
	not_ok "the graph fixture was recorded with PyTorch's cache on, and its plan carries it"
fi
# A program that reset the device between two phases (recorded on an
# H200, tests/gpu/reset_probe.cu): the kernels launched after the reset
# are counted, not planned, and said so.
run "$UMPLAN" "$(dirname "$fixture")/h200_reset_probe.db" --json -o "$SCRATCH/reset.plan"
expect_status 0 "a trace with a device reset plans"
expect_err_has "the program reset the device (cudaDeviceReset); the 80 kernels launched after it used memory umkit did not manage and are not planned: the plan covers the 80 before it" \
	"umplan warns that the kernels after the reset are not planned"
expect_json 't=d["trace"]; assert t["after_reset_kernels"] == 80 and t["kernels"] == 80 and t["allocations"] == 4' "--json counts the kernels after the reset"
# Its phase launches one kernel over four 64 MiB buffers in turn: the
# execution IDs repeat every launch, the buffers every four. Planned for
# two buffers' room, one stays and the other three take turns.
expect_json 'it=d["iterations"]; assert it["period"] == 4 and it["rotation"] == 4 and it["count"] == 20' "a ring of four buffers is planned as a period of four launches"
run "$UMPLAN" "$(dirname "$fixture")/h200_reset_probe.db" --capacity 160M -o "$SCRATCH/ring.plan"
expect_err_has "4 kernels per iteration, 6 ops, predicted peak 128.00 MiB of 155.20 MiB" \
	"the ring's plan at two buffers' room turns three of them over"
# A PyTorch program on two GPUs (recorded on two H200s, tests/gpu/run.sh's
# devices section): the trace names the arena's context, and the 13
# kernels device 1 ran are counted, not planned, and said so. Without the
# key, as in traces before session 57, every kernel is planned.
two_fixture=$(dirname "$fixture")/h200_two_devices.db
run "$UMPLAN" "$two_fixture" --json
expect_status 0 "a trace of a program on two GPUs plans"
expect_err_has "13 kernels ran in another CUDA context than the one umkit's memory is in (another GPU's, or one the program made): they are not planned, and umreplay does not follow them; the plan covers the 21 kernels of the arena's context" \
	"umplan warns that another GPU's kernels are not planned"
expect_json 't=d["trace"]; assert t["other_context_kernels"] == 13 and t["kernels"] == 21' "--json counts another GPU's kernels apart"
# Recorded since session 58, device 0's steps repeat their execution IDs
# although device 1 launches the same functions (with its own memory)
# between them: the recorder learns a function's words per context. The
# trace umrec made before had two of the five positions differ.
expect_json 'it=d["iterations"]; assert it["steady"] and it["positions_differing"] == 0 and it["count"] == 3 and it["period"] == 5' \
	"device 0's steps of a two-GPU program repeat their execution IDs"
run "$UMPLAN" "$two_fixture" --report
expect_out_has "13 kernels launched in another CUDA context than the arena's, another GPU's or one the program made (not planned)" \
	"--report counts another GPU's kernels"
cp "$two_fixture" "$SCRATCH/two-unnamed.db"
sqlite3 "$SCRATCH/two-unnamed.db" "DELETE FROM meta WHERE key = 'arena_context_id'"
run "$UMPLAN" "$SCRATCH/two-unnamed.db" --json
expect_json 't=d["trace"]; assert t["other_context_kernels"] == 0 and t["kernels"] == 34' "a trace that names no arena context plans every kernel"
# A program on one GPU whose trace names the arena's context (the reset
# fixture as umrec records it since session 57): the kernels after the
# reset, whose streams are in the device's new context, count as after
# the reset, not as another context's.
sqlite3 "$(dirname "$fixture")/h200_reset_probe.db" ".backup '$SCRATCH/reset-named.db'"
sqlite3 "$SCRATCH/reset-named.db" "INSERT INTO meta VALUES ('arena_context_id', '1')"
run "$UMPLAN" "$SCRATCH/reset-named.db" --json
expect_status 0 "a program on one GPU with a reset, its arena context named: plans"
expect_json 't=d["trace"]; assert t["after_reset_kernels"] == 80 and t["other_context_kernels"] == 0 and t["kernels"] == 80' \
	"the kernels after a reset are not another context's"
expect_err_has "the 80 kernels launched after it used memory umkit did not manage" "the reset is warned of as a reset"
expect_err_lacks "another CUDA context" "no warning of another context's kernels for a program on one GPU"
run "$UMPLAN" "$fixture" -o "$SCRATCH/nograph.plan"
expect_status 0 "a program without graphs, a reset or the runtime's memory plans"
expect_err_has "wrote $SCRATCH/nograph.plan" "a program without graphs, a reset or the runtime's memory: says what it wrote"
expect_err_lacks "CUDA graphs" "no graph warning for a program without graphs"
expect_err_lacks "reset the device" "no reset warning for a program without a reset"
expect_err_lacks "the runtime's" "no warning of the runtime's memory for a program all of whose memory was umkit's"
# A program part of whose memory the runtime served (umrec counts it:
# docs/trace-schema.md, meta.runtime_allocs): said, in --report and --json.
cp "$fixture" "$SCRATCH/runtime.db"
sqlite3 "$SCRATCH/runtime.db" "INSERT INTO meta VALUES ('runtime_allocs', '3'), ('runtime_alloc_bytes', '12582912')"
run "$UMPLAN" "$SCRATCH/runtime.db" --report -o "$SCRATCH/runtime.plan"
expect_status 0 "a trace with the runtime's memory plans"
expect_err_has "3 of the program's allocations were the runtime's, not umkit's, and are not in the trace" \
	"umplan warns of the runtime's memory"
expect_out_has "3 allocations (12.00 MiB) the runtime served in the arena's stead: not in the trace, not planned" \
	"--report counts the runtime's memory"
run "$UMPLAN" "$SCRATCH/runtime.db" --json -q
expect_json 't=d["trace"]; assert t["runtime_allocations"] == 3 and t["runtime_allocation_bytes"] == 12582912' \
	"--json counts the runtime's memory"
# Memory the program got through the driver, past the shim (umrec counts
# it: meta.driver_allocs): counted in --report and --json, not warned of
# (a PyTorch program's libraries make some in every run).
cp "$fixture" "$SCRATCH/driver.db"
sqlite3 "$SCRATCH/driver.db" "INSERT INTO meta VALUES ('driver_allocs', '2'), ('driver_alloc_bytes', '41943040')"
run "$UMPLAN" "$SCRATCH/driver.db" --report -o "$SCRATCH/driver.plan"
expect_status 0 "a trace with memory got through the driver plans"
expect_err_lacks "through the driver" "umplan does not warn of memory got through the driver"
expect_out_has "2 allocations (40.00 MiB) made through the driver, past umkit's allocator: not in the trace, not planned" \
	"--report counts memory got through the driver"
run "$UMPLAN" "$SCRATCH/driver.db" --json -q
expect_json 't=d["trace"]; assert t["driver_allocations"] == 2 and t["driver_allocation_bytes"] == 41943040' \
	"--json counts memory got through the driver"
# The most of it held at once is the device's, never the budget's: the
# default capacity leaves it out; --capacity is taken as given.
sqlite3 "$SCRATCH/driver.db" "INSERT INTO meta VALUES ('driver_alloc_peak_bytes', '33554432')"
device=$(sqlite3 "$SCRATCH/driver.db" "SELECT value FROM meta WHERE key = 'device_memory'")
run "$UMPLAN" "$SCRATCH/driver.db" --report -o "$SCRATCH/driver.plan"
expect_out_has "from the trace's device memory less the 32.00 MiB the program held past umkit (default)" \
	"--report says the default capacity leaves out what the program held past umkit"
run "$UMPLAN" "$SCRATCH/driver.db" --json -q
expect_json "t=d['trace']; p=d['plan']; assert t['driver_allocation_peak_bytes'] == 33554432 and p['capacity_before_headroom'] == $device - 33554432 and p['capacity_source'] == 'device'" \
	"the default capacity is the device's memory less the peak held past umkit"
run "$UMPLAN" "$SCRATCH/driver.db" --json -q --capacity 1G
expect_json "assert d['plan']['capacity_before_headroom'] == 1 << 30" "--capacity is not reduced by it"
# Managed memory got so (cuMemAllocManaged) is counted apart: the driver
# migrates it, so the default capacity keeps it; warned of, as the
# runtime's is, for the plan knows nothing of it. The trace above, which
# lacks the keys, counted none.
expect_json 't=d["trace"]; assert (t["driver_managed_allocations"], t["driver_managed_allocation_bytes"], t["driver_managed_allocation_peak_bytes"]) == (0, 0, 0)' \
	"--json counts no managed memory got through the driver in a trace without the keys"
sqlite3 "$SCRATCH/driver.db" "INSERT INTO meta VALUES ('driver_managed_allocs', '3'), ('driver_managed_alloc_bytes', '12582912'), ('driver_managed_alloc_peak_bytes', '8388608')"
run "$UMPLAN" "$SCRATCH/driver.db" --report -o "$SCRATCH/driver.plan"
expect_status 0 "a trace with managed memory got through the driver plans"
expect_err_has "3 of the program's allocations were managed memory made through the driver (cuMemAllocManaged), past umkit's allocator, and are not in the trace" \
	"umplan warns of managed memory got through the driver"
expect_out_has "3 allocations (12.00 MiB) of managed memory made through the driver, past umkit's allocator, at most 8.00 MiB held at once: not in the trace, not planned, not taken off the capacity" \
	"--report counts managed memory got through the driver"
expect_out_has "from the trace's device memory less the 32.00 MiB the program held past umkit (default)" \
	"--report's default capacity leaves out the device memory alone"
run "$UMPLAN" "$SCRATCH/driver.db" --json -q
expect_json "t=d['trace']; assert (t['driver_managed_allocations'], t['driver_managed_allocation_bytes'], t['driver_managed_allocation_peak_bytes']) == (3, 12582912, 8388608) and t['driver_allocation_peak_bytes'] == 33554432 and d['plan']['capacity_before_headroom'] == $device - 33554432" \
	"--json counts managed memory got through the driver apart, and the default capacity keeps it"
# A real one: the MLP on the H200, whose cuBLAS made its workspaces with
# its own runtime (tests/fixtures/README.md).
run "$UMPLAN" "$(dirname "$fixture")/h200_mlp_past_shim.db" --json -q
expect_json 't=d["trace"]; assert (t["driver_allocations"], t["driver_allocation_bytes"], t["allocations"]) == (4, 67110912, 548)' \
	"--json counts the H200 MLP's cuBLAS workspaces, made past the shim"
expect_json 't=d["trace"]; assert t["driver_allocation_peak_bytes"] == 67110912 and d["plan"]["capacity_before_headroom"] == t["device_memory"] - 67110912' \
	"the H200 MLP's workspaces, held to the end, are left out of its default capacity"
# Both directions share the one link the report gives: on the MLP at half
# its peak they need more than the iteration.
run "$UMPLAN" "$fixture" --report --capacity 240M
expect_status 0 "--report on the MLP fixture at half its peak exits 0"
if grep -qE 'link busy [0-9.]+% of the iteration \(DtoH [0-9.]+%, HtoD [0-9.]+%\): more than it can carry' <<<"$out"; then
	ok "--report gives the link's busy time, both directions together, and warns above 100 %"
else
	not_ok "--report gives the link's busy time, both directions together, and warns above 100 %"
fi
# And no schedule can take less than the capacity floor (plan/floor.h),
# which the report and the JSON give with the windows that set it: here
# two stretches of kernels apart, whose evictions add up.
if grep -qE '^floor +[0-9.]+ ms an iteration, whatever the schedule: 2 stretches of kernels apart must$' <<<"$out" &&
	grep -qE '^ +alone, kernels [0-9]+\.\.[0-9]+, [0-9.]+ MiB; the kernels alone take [0-9.]+ ms$' <<<"$out"; then
	ok "--report gives the capacity floor and its windows"
else
	not_ok "--report gives the capacity floor and its windows"
fi
# There, 4 of the 10 prefetches have no earlier slot: the report and the
# JSON count them, and the JSON's agree with the plan's ops.
if grep -qE '^ +4 prefetches \([0-9.]+ MiB, 27% of the bytes prefetched\) issued at the kernel that needs them' <<<"$out"; then
	ok "--report counts the prefetches issued at the kernel that needs them"
else
	not_ok "--report counts the prefetches issued at the kernel that needs them"
fi
# The model has 4 more land after their kernel starts (one kernel ahead of
# it, shorter than the copy).
if grep -qE '^ +8 prefetches \([0-9.]+ MiB\) land, by the model, after the kernel that needs them starts' <<<"$out"; then
	ok "--report counts the prefetches the model has land late"
else
	not_ok "--report counts the prefetches the model has land late"
fi
# Where one window alone sets the floor, the report names it: train_sim at
# half its live peak, whose forward pass must evict before it ends.
run "$UMPLAN" "$(dirname "$fixture")/h100_train_sim.db" --report --capacity 214008064
if grep -qE '^floor +[0-9.]+ ms an iteration, whatever the schedule: kernels 19\.\.47 must evict [0-9.]+ MiB first$' <<<"$out"; then
	ok "--report names the one window that sets the floor"
else
	not_ok "--report names the one window that sets the floor"
fi
# The scheduler's stall is rough; no schedule beats the floor, so the
# prediction never falls below it. train_sim as the GPU checks run it,
# at 1/1.5 of its live peak without host placement: the optimizer's
# updates, 0.42 ms of kernels, must evict 213 MiB, which the scheduler's
# stall leaves out.
run "$UMPLAN" "$(dirname "$fixture")/h200_train_sim_16.db" --json --capacity 581867178 --host-bw 0
if python3 -c 'import json,sys
d = json.loads(sys.argv[1]); p = d["plan"]; f = p["capacity_floor"]
rough = d["iterations"]["iteration_ns"] + p["stall_ns"] + p["host_pass_ns"]
assert rough < f["ns"] == p["predicted_iteration_ns"], (rough, f["ns"], p["predicted_iteration_ns"])
assert (f["from"], f["to"]) == (97, 127), f' "$out"; then
	ok "--json's predicted iteration is the floor where the scheduler's stall would give less"
else
	not_ok "--json's predicted iteration is the floor where the scheduler's stall would give less"
fi
run "$UMPLAN" "$fixture" --json --capacity 240M -o "$SCRATCH/mlp240.plan"
json=$out
run "$UMPLAN" --dump "$SCRATCH/mlp240.plan"
if python3 -c 'import json,sys
r = json.loads(sys.argv[1])["plan"]; ops = json.loads(sys.argv[2])["ops"]
late = [o for o in ops if o["kind"] == "prefetch" and o["position"] == o["deadline"]]
assert r["prefetches_at_use"] == len(late) == 4, (r["prefetches_at_use"], len(late))
assert r["prefetch_bytes_at_use"] == sum(o["bytes"] for o in late)
assert r["late_prefetches"] == 8 and r["late_prefetch_bytes"] >= r["prefetch_bytes_at_use"]
f = r["capacity_floor"]
assert f["ns"] > f["kernel_ns"] > 0 and f["evict_bytes"] > 0 and f["ns"] <= r["predicted_iteration_ns"], f
w = f["windows"]
assert len(w) == 2 and w[0]["to"] <= w[1]["from"], w
excess = sum(x["evict_bytes"] * 1e9 / r["dtoh_bytes_per_s"] - x["kernel_ns"] for x in w)
assert abs(f["kernel_ns"] + excess - f["ns"]) < 2, (f, excess)' "$json" "$out"; then
	ok "--json's prefetches_at_use and their bytes are the plan's prefetches with position = deadline; late_prefetches counts 8; the floor's two windows add up to it"
else
	not_ok "--json's prefetches_at_use and their bytes are the plan's prefetches with position = deadline; late_prefetches counts 8; the floor's two windows add up to it"
fi
# The MLP's plan at 240M evicts tensors past their last use before their
# free (80 MiB of its 161): the report and the JSON say how much.
if python3 -c 'import json,sys
r = json.loads(sys.argv[1])["plan"]
assert 0 < r["tail_evict_bytes"] <= r["evict_bytes"], r' "$json" &&
	run "$UMPLAN" "$fixture" --report --capacity 240M &&
	grep -qE '^ +80\.00 MiB of it past a tensor.s last use, before the program frees it' <<<"$out"; then
	ok "--report and --json count the evictions past a tensor's last use, never read back"
else
	not_ok "--report and --json count the evictions past a tensor's last use, never read back"
fi
# A real trace with one value no recorder writes: a clear error naming the
# file and the row, never a plan made of nonsense.
bad_row() { # bad_row SQL MESSAGE DESC
	cp "$fixture" "$SCRATCH/bad.db"
	sqlite3 "$SCRATCH/bad.db" "$1"
	run "$UMPLAN" "$SCRATCH/bad.db" -o "$SCRATCH/bad.bin"
	if [ "$status" -eq 1 ] && grep -qF -- "$SCRATCH/bad.db: $2" <<<"$err" && [ ! -e "$SCRATCH/bad.bin" ]; then ok "$3"
	else not_ok "$3 (wanted '$2')"; fi
}
# What umrec leaves when CUPTI could not be set up: no rows, status failed.
bad_row "DELETE FROM kernel_arg; DELETE FROM kernel; UPDATE meta SET value = 'failed' WHERE key = 'status'" \
	"the trace has no kernels with a launch record (its recording failed to start: meta.error says why)" \
	"a recording that failed to start: says so"
bad_row "UPDATE meta SET value = '-1' WHERE key = 'device_memory'" "meta device_memory '-1' is not a size" \
	"device_memory -1: refused"
bad_row "UPDATE meta SET value = '80GB' WHERE key = 'device_memory'" "meta device_memory '80GB' is not a size" \
	"device_memory with a unit: refused"
bad_row "INSERT INTO meta VALUES ('framework_cache', 'yes')" "meta framework_cache 'yes' is neither 0 nor 1" \
	"framework_cache yes: refused"
bad_row "INSERT INTO meta VALUES ('runtime_allocs', 'three')" "meta runtime_allocs 'three' is not a count" \
	"runtime_allocs three: refused"
bad_row "INSERT INTO meta VALUES ('driver_alloc_bytes', '1e6')" "meta driver_alloc_bytes '1e6' is not a count" \
	"driver_alloc_bytes 1e6: refused"
# Padded past the loader's buffer, it would be read cut short: 429 bytes.
bad_row "INSERT INTO meta VALUES ('driver_alloc_bytes', printf('%.60d%d', 0, 4294967296))" \
	"meta driver_alloc_bytes '000000" "driver_alloc_bytes padded with zeros: refused"
bad_row "INSERT INTO meta VALUES ('driver_alloc_bytes', '4096'), ('driver_alloc_peak_bytes', '8192')" \
	"meta driver_alloc_peak_bytes 8192 is more than driver_alloc_bytes" "a peak above the bytes allocated: refused"
bad_row "INSERT INTO meta SELECT 'driver_alloc_bytes', value FROM meta WHERE key = 'device_memory';
	 INSERT INTO meta SELECT 'driver_alloc_peak_bytes', value FROM meta WHERE key = 'device_memory'" \
	"meta driver_alloc_peak_bytes $device leaves none of device_memory" "a peak as large as the device: refused"
bad_row "INSERT INTO meta VALUES ('driver_managed_allocs', 'two')" "meta driver_managed_allocs 'two' is not a count" \
	"driver_managed_allocs two: refused"
bad_row "INSERT INTO meta VALUES ('driver_managed_alloc_bytes', '4096'), ('driver_managed_alloc_peak_bytes', '8192')" \
	"meta driver_managed_alloc_peak_bytes 8192 is more than driver_managed_alloc_bytes" \
	"a managed peak above the managed bytes allocated: refused"
bad_row "UPDATE alloc SET size = -1 WHERE id = 3" "allocation 3 has a negative size" "negative size: refused"
bad_row "UPDATE alloc SET reserved = 1 << 62 WHERE id = 3" "allocation 3 has 2 MiB or more reserved" \
	"huge reservation: refused"
bad_row "UPDATE alloc SET address = -4096 WHERE id = 3" "allocation 3 has a range past the address space" \
	"negative address: refused"
bad_row "PRAGMA foreign_keys = OFF; UPDATE alloc SET id = 0 WHERE id = 1" "allocation 0 has an id below 1" \
	"allocation id 0: refused"
# Found by the trace fuzzer (tests/fuzz/): kernel times far apart overflowed
# the schedule's arithmetic.
bad_row "UPDATE kernel SET end_ns = start_ns + (1 << 50)" "the planned iteration's kernels span" \
	"kernels lasting days: refused"
# Found by a review: sizes this large overflowed the schedule's residency
# sums, and the plan made failed --check.
bad_row "UPDATE alloc SET address = 4096 * id, size = 3 << 60 >> 2, reserved = 3 << 60 >> 2 WHERE id <= 5" \
	"the allocations reserve more than 2^60 bytes in all (by allocation 2)" "allocations past 2^60 bytes: refused"
cp "$fixture" "$SCRATCH/times.db"
sqlite3 "$SCRATCH/times.db" "UPDATE kernel SET start_ns = -9223372036854775807 WHERE seq % 5 = 0"
run "$UMPLAN" "$SCRATCH/times.db" -q --check --json -o "$SCRATCH/times.bin"
if [ "$status" -eq 0 ] && python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1])["trace"]["untimed_kernels"] == 0)' "$out"; then
	ok "negative kernel times: those kernels count as untimed"
else not_ok "negative kernel times: those kernels count as untimed"; fi

# The link's busy time is the plan's transfers at the default speeds and
# call cost, the births' plain prefetches (BERT-large has them at 3G) too.
bert=$FIXTURES/h100_bert_large.db
"$UMPLAN" "$bert" --json --capacity 3G -o "$SCRATCH/bert3g.plan" >"$SCRATCH/bert3g.json" 2>/dev/null
"$UMPLAN" --dump "$SCRATCH/bert3g.plan" >"$SCRATCH/bert3g.dump" # too large for an argument
if python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["plan"]; ops = json.load(open(sys.argv[2]))["ops"]
ns = lambda kind, bps: sum(int(100000 + o["bytes"] * 1e9 / bps) for o in ops if o["kind"] == kind)
for key, kind, bps in (("htod_busy_ns", "prefetch", 48.8e9), ("dtoh_busy_ns", "evict", 8.6e9)):
    assert abs(int(r[key]) - ns(kind, bps)) <= len(ops), (key, r[key], ns(kind, bps))' \
	"$SCRATCH/bert3g.json" "$SCRATCH/bert3g.dump"; then
	ok "--json's busy times are the plan's own transfers, births' prefetches included"
else
	not_ok "--json's busy times are the plan's own transfers, births' prefetches included"
fi
# The first iteration makes tensors that live on (optimizer state made at
# the first step): the model ends them with the iteration, and --check
# must agree with the scheduler (it counted them resident into the next).
run "$UMPLAN" "$FIXTURES/h100_bert_large.db" --iteration 0 --capacity 1G --check -q
expect_status 0 "a plan of BERT-large's first iteration passes --check"
run "$UMPLAN" "$trace" --simulate --ratios 1,0.5
expect_status 2 "a ratio below 1 is a usage error"
expect_err_has "'0.5'" "the bad ratio is named"
run "$UMPLAN" "$trace" --simulate --ratios 2,1.5e6
expect_status 2 "a ratio past 1e6 is a usage error, as --help says"
expect_err_has "'1.5e6' is not a ratio from 1 to 1e6" "the ratio past 1e6 is named, with the limits"
run "$UMPLAN" "$trace" --simulate --ratios 2,abc
expect_status 2 "a non-numeric ratio is a usage error"
expect_err_has "'abc'" "the non-numeric ratio is named"
run "$UMPLAN" "$trace" --simulate --capacity 64M --ratios 2
expect_status 2 "--capacity with --ratios is a usage error, not --ratios ignored"
expect_err_has "give one" "it says to give one of them"
run "$UMPLAN" "$trace" --ratios 2 --report
expect_status 2 "--ratios without --simulate is a usage error"
expect_err_has "--ratios needs --simulate" "it names the option"

echo '{"htod_gbps": 39.92, "dtoh_gbps": 7.76}' >"$SCRATCH/constants.json"
mkdir -p "$SCRATCH/csv"
run "$UMPLAN" "$fixture" --simulate --ratios 2 --constants "$SCRATCH/constants.json" \
	--sim-csv "$SCRATCH/csv" --json -q
expect_status 0 "--simulate with --constants and --sim-csv exits 0"
expect_out_has '"htod_gbps":	39.92' "--constants sets the HtoD bandwidth"
# pressure.csv: a row per kernel of the MLP's iteration (71), the
# residency without the plan above the capacity somewhere, with it never;
# throughput.csv: a row per policy at W/B 2.
if python3 -c '
import csv, sys
p = list(csv.DictReader(open(sys.argv[1] + "/pressure.csv")))
t = list(csv.DictReader(open(sys.argv[1] + "/throughput.csv")))
assert [int(r["position"]) for r in p] == list(range(71)) and {r["ratio"] for r in p} == {"2"}, len(p)
assert any(int(r["before_plan"]) > int(r["capacity"]) for r in p)
assert all(int(r["after_plan"]) <= int(r["capacity"]) for r in p)
assert [(r["ratio"], r["policy"]) for r in t] == [("2", q) for q in ("ideal", "ondemand", "deepum", "plan")], t' "$SCRATCH/csv"; then
	ok "--sim-csv writes pressure.csv and throughput.csv"
else
	not_ok "--sim-csv writes pressure.csv and throughput.csv"
fi
# The same constants given as options or in a file are the same numbers,
# rounded: 8.2 GB/s was 8199999999 B/s either way, and 1.005 us 1005 ns
# from --call-cost but 1004 from the file.
echo '{"htod_gbps": 8.2, "call_cost_us": 1.005}' >"$SCRATCH/round.json"
run "$UMPLAN" "$fixture" --simulate --ratios 2 --constants "$SCRATCH/round.json" --json -q
expect_json 'c = d["constants"]; assert c["htod_gbps"] == 8.2 and c["call_cost_us"] == 1.005, c' \
	"--constants rounds its constants to bytes/s and ns"
run "$UMPLAN" "$fixture" --simulate --ratios 2 --htod-bw 8.2 --call-cost 1.005 --json -q
expect_json 'c = d["constants"]; assert c["htod_gbps"] == 8.2 and c["call_cost_us"] == 1.005, c' \
	"--htod-bw and --call-cost round as --constants does"
echo '{"htod_gbps": "fast"}' >"$SCRATCH/bad.json"
run "$UMPLAN" "$fixture" --simulate --constants "$SCRATCH/bad.json" -q
expect_status 1 "a bad constants file is bad input"
expect_err_has "htod_gbps" "the bad constant is named"
run "$UMPLAN" "$trace" --sim-csv "$SCRATCH/csv"
expect_status 2 "--sim-csv without --simulate is a usage error"
# A folder that is not there is found before the simulation runs: no
# table on stdout from a run that fails.
run "$UMPLAN" "$trace" --simulate --sim-csv "$SCRATCH/no-such-folder"
expect_status 1 "--sim-csv naming no folder: refused"
expect_err_has "--sim-csv $SCRATCH/no-such-folder: No such file or directory" "--sim-csv naming no folder: says so"
if [ -z "$out" ]; then ok "--sim-csv naming no folder: nothing simulated"
else not_ok "--sim-csv naming no folder: nothing simulated"; fi
# A CSV whose write fails part way is not left behind looking complete,
# and the pair is replaced together or not at all: under a file size limit
# of 1 KiB (ulimit -f counts KiB in bash; with SIGXFSZ ignored the write
# fails with EFBIG), throughput.csv's few lines could be written and
# pressure.csv's 2.5 KB cannot; an earlier run's pair stays as it was, and
# no temporary stays.
mkdir "$SCRATCH/csv-limited"
echo earlier >"$SCRATCH/csv-limited/throughput.csv"
echo earlier >"$SCRATCH/csv-limited/pressure.csv"
(
	trap '' XFSZ
	ulimit -f 1
	exec "$UMPLAN" "$fixture" --simulate --ratios 2 --sim-csv "$SCRATCH/csv-limited" -q \
		>/dev/null 2>"$SCRATCH/csv-limited.err"
)
status=$? out='' err=$(cat "$SCRATCH/csv-limited.err")
expect_status 1 "--sim-csv whose pressure.csv cannot be written: exit 1"
expect_err_has "$SCRATCH/csv-limited/pressure.csv: cannot write: File too large" \
	"--sim-csv whose pressure.csv cannot be written: names the file and the problem"
left=$(ls -A "$SCRATCH/csv-limited" | paste -sd " ")
kept=$(cat "$SCRATCH/csv-limited/pressure.csv" "$SCRATCH/csv-limited/throughput.csv" | paste -sd " ")
if [ "$left" = "pressure.csv throughput.csv" ] && [ "$kept" = "earlier earlier" ]; then
	ok "--sim-csv whose pressure.csv cannot be written: the earlier pair kept, no temporary"
else
	not_ok "--sim-csv whose pressure.csv cannot be written: the earlier pair kept, no temporary, not: $left ($kept)"
fi
# A folder where pressure.csv goes cannot be replaced by a file: found
# before the simulation runs, not at the rename after throughput.csv's,
# which left a new throughput.csv beside no pressure.csv of its run.
mkdir -p "$SCRATCH/csv-folder/pressure.csv"
echo earlier >"$SCRATCH/csv-folder/throughput.csv"
run "$UMPLAN" "$fixture" --simulate --ratios 2 --sim-csv "$SCRATCH/csv-folder"
expect_status 1 "--sim-csv with a folder named pressure.csv: refused"
expect_err_has "$SCRATCH/csv-folder/pressure.csv: Is a directory" \
	"--sim-csv with a folder named pressure.csv: names it and says why"
left=$(ls -A "$SCRATCH/csv-folder" | paste -sd " ")
if [ -z "$out" ] && [ "$left" = "pressure.csv throughput.csv" ] &&
	[ "$(cat "$SCRATCH/csv-folder/throughput.csv")" = earlier ]; then
	ok "--sim-csv with a folder named pressure.csv: nothing simulated, throughput.csv kept"
else
	not_ok "--sim-csv with a folder named pressure.csv: nothing simulated, throughput.csv kept, not: $left"
fi

# A folder whose path, with a file's name and the temporary's suffix, is
# past what the system takes (4096 bytes) is found before the simulation
# runs, named; it was found at the end, when the CSVs were written.
long=$SCRATCH
while [ ${#long} -lt 3800 ]; do long=$long/$(printf '%0200d' 0); done
long=$long/$(printf '%0*d' $((4079 - ${#long})) 0)
mkdir -p "$long"
run "$UMPLAN" "$fixture" --simulate --ratios 2 --sim-csv "$long"
expect_status 1 "--sim-csv with a 4 KiB path: refused"
expect_err_has "--sim-csv $long: File name too long" "--sim-csv with a 4 KiB path: names it and says why"
if [ -z "$out" ]; then ok "--sim-csv with a 4 KiB path: nothing simulated"
else not_ok "--sim-csv with a 4 KiB path: nothing simulated"; fi

# --perturb: the sensitivity study, as a table and in the JSON.
run "$UMPLAN" "$fixture" --simulate --ratios 1.5,2 --perturb 20 -q
expect_status 0 "--simulate --perturb exits 0"
expect_out_has "sensitivity: plan made from the recorded kernel durations" "--perturb prints the study"
expect_out_has "[0.80, 1.20]" "--perturb 20 scales durations within +-20 %"
# A row per ratio: W/B, recorded, min, median, max, the worst drop: the
# recorded % of ideal less the least one drawn, in points (so within the
# columns' rounding of recorded - min), not a percentage of it.
if python3 -c '
import sys
lines = sys.argv[1].split("\n")
rows = [l.split() for l in lines[lines.index(next(l for l in lines if "worst drop (points)" in l)) + 1:] if l.strip()]
assert [r[0] for r in rows] == ["1.50", "2.00"], rows
for r in rows:
    rec, lo, med, hi, drop = map(float, r[1:])
    assert lo <= med <= hi and drop >= 0 and abs(drop - max(rec - lo, 0)) <= 0.11, r' "$out"; then
	ok "the worst drop is in points of the percentage, not itself a percentage"
else not_ok "the worst drop is in points of the percentage, not itself a percentage (got: $out)"; fi
run "$UMPLAN" "$fixture" --simulate --ratios 2 --perturb 10 --json -q
expect_json 's=d["sensitivity"]; assert len(s) == 1 and s[0]["perturbation"] == 0.1 and s[0]["min_pct_ideal"] <= s[0]["median_pct_ideal"] <= s[0]["max_pct_ideal"]' "--perturb adds the study to --json"
# The draws do scale the durations: equal minimum and maximum were what an
# unperturbed run gives, whatever the percentage printed.
expect_json 's=d["sensitivity"][0]; assert s["min_pct_ideal"] < s["max_pct_ideal"], s' "--perturb 10: the draws differ"
for bad in 0 100 -5 abc; do
	run "$UMPLAN" "$fixture" --simulate --perturb "$bad"
	expect_status 2 "--perturb $bad is a usage error"
done
expect_err_has "'abc'" "the bad percentage is named"
run "$UMPLAN" "$trace" --perturb 20
expect_status 2 "--perturb without --simulate is a usage error"

# Output that cannot be written (a full disk: /dev/full) is an error, also
# when the write fails inside printf, past stdio's buffer, where the final
# flush has nothing left to fail on.
if [ -w /dev/full ]; then
	"$UMPLAN" "$fixture" --capacity 200M -q -o "$SCRATCH/full.plan"
	for args in "--dump $SCRATCH/full.plan" "$fixture --json -q" "$fixture --simulate --json -q --ratios 2" \
		--help --version; do
		# shellcheck disable=SC2086
		"$UMPLAN" $args >/dev/full 2>"$SCRATCH/full.err"
		status=$? err=$(cat "$SCRATCH/full.err")
		expect_status 1 "umplan ${args%% *} ... > /dev/full: exit 1"
		expect_err_has "writing to standard output failed: No space left on device" \
			"umplan ${args%% *} ... > /dev/full: says so"
	done
else
	not_ok "/dev/full is missing: the failed-write checks cannot run"
fi

finish
