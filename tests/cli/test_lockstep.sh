#!/usr/bin/env bash
# Command-line tests for bench/lockstep.py, with a stand-in for the
# examples that takes its turns through examples/pytorch/turns.py (the
# module the examples use): a run alone and a bad --turn-fds (not two
# numbers, a descriptor not open or open the wrong way); the runs
# step strictly in turn, each round's ring one place further on; a step's
# time is paired with the same step of the first run; the rounds' range
# and interval, and the output check; --report on rounds already run, of
# one folder or several pooled, or packed in an archive; a run that fails or hangs ends without the
# others hanging; a program that cannot run; usage errors.
source "$(dirname "$0")/lib.sh"
ROOT=$(realpath "$(dirname "$0")/../..")
LOCKSTEP=$ROOT/bench/lockstep.py
export PYTHONDONTWRITEBYTECODE=1

# fake.py NAME LOG MS [--loss X] [--fail-at N] [--hang-at N] --turn-fds R,W:
# 12 steps of MS milliseconds each (a sleep), each logged to LOG as
# "NAME STEP" when it starts; prints what the examples print, then logs
# "NAME end" 50 ms later (a checksum and teardown).
fake=$SCRATCH/fake.py
cat >"$fake" <<PY
import argparse, sys, time
sys.path.insert(0, "$ROOT/examples/pytorch")
import turns
ap = argparse.ArgumentParser()
ap.add_argument("name"); ap.add_argument("log"); ap.add_argument("ms", type=float)
ap.add_argument("--loss", default="0.5"); ap.add_argument("--fail-at", type=int, default=-1)
ap.add_argument("--hang-at", type=int, default=-1)
ap.add_argument("--turn-fds", type=turns.parse_fds)
a = ap.parse_args()
turn = turns.Turns(a.turn_fds)
times = []
for step in turn.steps(12):
    with open(a.log, "a") as f:
        f.write("%s %d\n" % (a.name, step))
    if step == a.fail_at:
        sys.exit(3)
    if step == a.hang_at:
        time.sleep(60)
    t0 = time.perf_counter()
    time.sleep(a.ms / 1e3)
    times.append(time.perf_counter() - t0)
    print("step %d loss %s" % (step, a.loss))
print("per_step_ms " + ",".join("%.3f" % (1e3 * t) for t in times))
print("checksum 00ff")
time.sleep(0.05)  # the checksum's and the teardown's time
with open(a.log, "a") as f:
    f.write("%s end\n" % a.name)
PY
log=$SCRATCH/log
row() { grep -F "| $1 |" <<<"$out"; }

run python3 "$fake" solo "$SCRATCH/solo.log" 1
[ "$status" = 0 ] && [ "$(wc -l <"$SCRATCH/solo.log")" = 13 ] && ok "turns.py: without --turn-fds a run takes every step alone" \
	|| not_ok "turns.py: without --turn-fds a run takes every step alone"
run python3 "$fake" solo "$SCRATCH/solo.log" 1 --turn-fds 3
expect_status 2 "turns.py: --turn-fds without two descriptors is a usage error"
# (argparse's usage line names --turn-fds in any error.)
expect_err_has "argument --turn-fds: '3' is not two file descriptors R,W" "which names the option and says what it wants"
expect_err_lacks "Traceback" "without a traceback"
run python3 "$fake" solo "$SCRATCH/solo.log" 1 --turn-fds 3,9 3</dev/null 9>&-
expect_status 2 "turns.py: a descriptor that is not open is a usage error"
expect_err_has "file descriptor 9 (for writing) is not open" "which names the descriptor"
run python3 "$fake" solo "$SCRATCH/solo.log" 1 --turn-fds=-1,4 4>/dev/null
expect_status 2 "turns.py: a negative descriptor is a usage error"
expect_err_has "file descriptor -1 (for reading) is not open" "which names it"
run python3 "$fake" solo "$SCRATCH/solo.log" 1 --turn-fds 4,3 3</dev/null 4>/dev/null
expect_status 2 "turns.py: descriptors open the wrong way round are a usage error"
expect_err_has "file descriptor 4 is not open for reading" "which says which way"
[ "$(wc -l <"$SCRATCH/solo.log")" = 13 ] && ok "turns.py: a refused --turn-fds takes no step" \
	|| not_ok "turns.py: a refused --turn-fds takes no step"

run python3 "$LOCKSTEP" "$SCRATCH/o" --skip 2 --rounds 3 \
	"a=python3 $fake a $log 10" "b=python3 $fake b $log 20" "c=python3 $fake c $log 10 --loss 0.25"
expect_status 0 "three runs, three rounds: exit 0"
python3 - "$log" <<'PY' && ok "the runs step strictly in turn, each round's ring one place on, a run's last step after the one before it ended" \
	|| not_ok "the runs step strictly in turn, each round's ring one place on, a run's last step after the one before it ended (log: $(tr '\n' ' ' <"$log"))"
import sys
got = open(sys.argv[1]).read().split("\n")[:-1]
want = []
for ring in ("abc", "bca", "cab"):
    want += [f"{n} {s}" for s in range(11) for n in ring]
    want += [line for n in ring for line in (f"{n} 11", f"{n} end")]
sys.exit(got != want)
PY
expect_out_has "3 rounds; steps after the first 2, each paired with the same step of a in its round." \
	"the rounds, the skip and the reference are said"
grep -qF "| a | 0 | 30 |" <<<"$(row a)" && ok "the first run: status and steps after the skip, over the rounds" \
	|| not_ok "the first run: status and steps after the skip, over the rounds (got: $(row a))"
python3 - "$(row b)" <<'PY' && ok "twice as slow: per-step median, mean, range and interval near +100 %" \
	|| not_ok "twice as slow: per-step median, mean, range and interval near +100 % (got: $(row b))"
import re, sys
cells = [c.strip() for c in sys.argv[1].split("|")[1:-1]]
nums = [float(x) for x in re.findall(r"[+-][\d.]+(?=%)", cells[4] + " " + cells[5])]
sys.exit(not (cells[1:3] == ["0", "30"] and cells[6] == "yes" and len(nums) == 6
              and all(50 < x < 150 for x in nums) and nums[2] <= nums[1] <= nums[3]
              and nums[4] <= nums[1] <= nums[5]))
PY
grep -qE "\| c \| 0 \| 30 \| .* \| no \|$" <<<"$(row c)" && ok "another loss: not the same output" \
	|| not_ok "another loss: not the same output (got: $(row c))"
[ -s "$SCRATCH/o/round-3/b.out" ] && [ -e "$SCRATCH/o/round-3/b.err" ] \
	&& ok "each run's stdout and stderr kept in OUTDIR, a folder per round" \
	|| not_ok "each run's stdout and stderr kept in OUTDIR, a folder per round"

table=$out
run python3 "$LOCKSTEP" --report a,b,c --skip 2 "$SCRATCH/o"
[ "$status" = 0 ] && [ "$out" = "$table" ] && ok "--report: the rounds already run, the same table" \
	|| not_ok "--report: the rounds already run, the same table (got: $out)"
mkdir "$SCRATCH/packed" && cp -r "$SCRATCH/o" "$SCRATCH/packed/runs"
tar -C "$SCRATCH/packed" -czf "$SCRATCH/o.tar.gz" runs
run python3 "$LOCKSTEP" --report a,b,c --skip 2 "$SCRATCH/o.tar.gz"
[ "$status" = 0 ] && [ "$out" = "$table" ] \
	&& ok "--report: an archive as overhead_lockstep.sh packs the rounds, the same table" \
	|| not_ok "--report: an archive as overhead_lockstep.sh packs the rounds, the same table (got: $out)"
echo junk >"$SCRATCH/junk.tar.gz"
run python3 "$LOCKSTEP" --report a,b "$SCRATCH/junk.tar.gz"
expect_status 1 "--report: a file that is no archive: exit 1"
expect_err_has "junk.tar.gz: not a .tar.gz archive" "which names the file"
run python3 "$LOCKSTEP" "$SCRATCH/o2" --skip 2 --rounds 2 "a=python3 $fake a $log 1" "b=python3 $fake b $log 1"
grep -qE "^\| b \| 0 \| 20 \| [0-9.]+ \| [+-][0-9.]+% \| [+-][0-9.]+%, [+-][0-9.]+% – [+-][0-9.]+% \| yes \|$" <<<"$(row b)" \
	&& ok "two rounds: a range, no interval" || not_ok "two rounds: a range, no interval (got: $(row b))"
run python3 "$LOCKSTEP" --report a,b --skip 2 "$SCRATCH/o" "$SCRATCH/o2"
expect_out_has "5 rounds; steps after the first 2" "--report: the rounds of several folders pooled"
grep -qE "^\| b \| 0 \| 50 \| .*; 95 %: .* \| yes \|$" <<<"$(row b)" \
	&& ok "--report: each round paired within itself, the interval over all" \
	|| not_ok "--report: each round paired within itself, the interval over all (got: $(row b))"
rm "$SCRATCH/o2/round-1/status"
run python3 "$LOCKSTEP" --report a,b --skip 2 "$SCRATCH/o2"
grep -qF "| b | ? |" <<<"$(row b)" && [ "$status" = 0 ] && ok "--report: a status not kept reads ?, not a failure" \
	|| not_ok "--report: a status not kept reads ?, not a failure (got: $(row b))"
echo "b 3" >"$SCRATCH/o2/round-2/status"
run python3 "$LOCKSTEP" --report a,b --skip 2 "$SCRATCH/o2"
grep -qF "| b | 3,? |" <<<"$(row b)" && [ "$status" = 1 ] \
	&& ok "--report: a failed round beside one whose status was not kept: both statuses, exit 1" \
	|| not_ok "--report: a failed round beside one whose status was not kept: both statuses, exit 1 (status $status, got: $(row b); $err)"
run python3 "$LOCKSTEP" --report a,b "$SCRATCH/no-such-dir"
expect_status 1 "--report: a folder that is not there: exit 1"
expect_err_has "no-such-dir: No such file or directory" "which names it, no traceback"
run python3 "$LOCKSTEP" --report a,x "$SCRATCH/o2"
expect_status 1 "--report: a run that is not there: exit 1"
expect_err_has "o2/round-1: no output of x" "which names the folder and the run"
run python3 "$LOCKSTEP" --report a,b "$SCRATCH"
expect_status 1 "--report: a folder without rounds: exit 1"
expect_err_has "no round-K folders" "which says so"
run python3 "$LOCKSTEP" "$SCRATCH/o1" --skip 2 "a=python3 $fake a $log 1" "b=python3 $fake b $log 1"
grep -qE "^\| b \| 0 \| 10 \| [0-9.]+ \| [+-][0-9.]+% \| [+-][0-9.]+% \| yes \|$" <<<"$(row b)" \
	&& ok "one round: its mean alone" || not_ok "one round: its mean alone (got: $(row b))"

rm -f "$log"
start=$SECONDS
run python3 "$LOCKSTEP" "$SCRATCH/o-fail" "a=python3 $fake a $log 1" "b=python3 $fake b $log 1 --fail-at 4"
expect_status 1 "a run that fails: exit 1"
grep -qF "| b | 3 |" <<<"$(row b)" && grep -qF "| a | 0 | 7 |" <<<"$(row a)" \
	&& ok "its status in the table; the other ran every step (7 after the skip)" || not_ok "its status in the table; the other ran every step (7 after the skip)"
run python3 "$LOCKSTEP" "$SCRATCH/o-hang" --timeout 3 "a=python3 $fake a $log 1 --hang-at 3" "b=python3 $fake b $log 1"
expect_status 1 "a run that hangs: exit 1"
grep -qF "| a | 124 |" <<<"$(row a)" && ok "killed at the timeout, status 124" \
	|| not_ok "killed at the timeout, status 124 (got: $(row a))"
[ $((SECONDS - start)) -lt 30 ] && ok "neither case waits for more than the timeout" \
	|| not_ok "neither case waits for more than the timeout ($((SECONDS - start)) s)"

# a, with 1 s steps, would outlive the check unless stopped.
run python3 "$LOCKSTEP" "$SCRATCH/o-norun" "a=python3 $fake a $log 1000" "b=$SCRATCH/no-such-program"
expect_status 1 "a program that cannot run: exit 1"
expect_err_has "lockstep: b: cannot run $SCRATCH/no-such-program: No such file or directory" \
	"the run and the program named, and why"
[ -z "$(pgrep -f "$fake a $log 1000")" ] && ok "the runs already started are stopped" \
	|| not_ok "the runs already started are stopped"
run python3 "$LOCKSTEP" "$SCRATCH/o1" --skip 2 "a=python3 $fake a $log 1" "b=python3 $fake b $log 1"
expect_status 2 "an OUTDIR with rounds already run: usage error (--report would pool them with the new)"
expect_err_has "holds rounds already run" "which says so"
run python3 "$LOCKSTEP" "$SCRATCH/o" "python3 $fake a $log 1"
expect_status 2 "a run without a name: usage error"
expect_err_has "not NAME=COMMAND" "which says what a run is"
run python3 "$LOCKSTEP" "$SCRATCH/o" "a=python3 $fake a $log 1" "a=python3 $fake b $log 1"
expect_status 2 "two runs named alike: usage error"
run python3 "$LOCKSTEP" "$SCRATCH/o" "../a=python3 $fake a $log 1"
expect_status 2 "a name that is not a file name in OUTDIR: usage error"
# The round's status file holds "NAME STATUS" lines: a name with a space
# would be read back as three words, after every round had run.
run python3 "$LOCKSTEP" "$SCRATCH/o-space" --skip 2 "a b=python3 $fake a $log 1"
expect_status 2 "a name with a space: usage error, before any round runs"
[ ! -e "$SCRATCH/o-space/round-1" ] && ! grep -q Traceback <<<"$err" && ok "no round run, no traceback" \
	|| not_ok "no round run, no traceback"
finish
