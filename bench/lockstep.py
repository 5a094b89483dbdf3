#!/usr/bin/env python3
"""Runs that take their steps in turn, compared step by step.

Usage: python3 bench/lockstep.py OUTDIR NAME=COMMAND [NAME=COMMAND ...]
                                 [--rounds R] [--skip N] [--timeout S]
       python3 bench/lockstep.py --report NAME,NAME[,...] DIR|ARCHIVE ... [--skip N]

Each COMMAND (split as a shell would, not run by one) is a program of
examples/pytorch, directly or under umreplay; `--turn-fds R,W` is added to
its end. The runs of a round start together and pass one turn around a
ring of pipes: the first run's step 0, the second's step 0, ..., the
first's step 1, and so on, each waiting while the others step
(examples/pytorch/turns.py). R rounds (default 1) start fresh processes,
each round's ring one place further on, so no run always steps first.

Why: on a shared host the speed drifts by more than the overheads to be
measured, over seconds (DLRM's 200-step runs differed by up to 40 % from
one run to the next, docs/benchmarks.md). Runs in turn see the same
drift, step by step, so step N of a run is paired with step N of the
first run, taken milliseconds apart. What turns do not remove is an offset
of each process of its own (its memory layout, its cores): on the H200 one
plain run against another read +2.5 % over 295 steps of GPT-2 small, so a
round is the unit the interval resamples, never a step.

Writes OUTDIR/round-K/NAME.out and .err (and the runs' exit statuses in
OUTDIR/round-K/status), then prints a Markdown table, every run against
the first, over the steps after the first N (--skip, default 5: warm-up)
that both ran in a round. --report prints that table again for the runs
NAME... of the rounds already run under each DIR (an OUTDIR), pooled: the
rounds of several commands, each a comparison within itself. An ARCHIVE
(a .tar.gz that bench/overhead_lockstep.sh writes, its rounds under runs/)
is read as the OUTDIR it holds, unpacked into a temporary folder.
  status            the runs' exit statuses, 0 when all were (? where a
                    round's status file is missing)
  steps             steps compared, over all rounds
  median ms         the median step, over all rounds
  per step: median  the median of step N's time over the first run's
  per round         the geometric mean of the rounds' ratios (each the
                    geometric mean of its steps'), their range, and with
                    3 rounds or more its 95 % interval by a bootstrap over
                    the rounds (bench/pooled_steps.py): what the rounds can
                    tell apart; a target inside it is neither shown met
                    nor missed
  same output       the step and loss lines and the checksum as the first
                    run's, in every round
Exit status 1 when a run failed or printed no step times.
"""
import argparse
import math
import os
import shlex
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pooled_steps import mean_ratio_interval  # noqa: E402


def parse_run(text):
    name, sep, command = text.partition("=")
    if not sep or not name or not command.strip():
        raise argparse.ArgumentTypeError("not NAME=COMMAND: %r" % text)
    # A word, too: each round's status file holds "NAME STATUS" lines.
    if "/" in name or name.startswith(".") or any(c.isspace() for c in name):
        raise argparse.ArgumentTypeError("a run's name is one word, a file name in OUTDIR: %r" % name)
    return name, shlex.split(command)


def run_in_turn(outdir, runs, timeout):
    """Starts every run on the ring and waits for all; returns their exit
    statuses (124 for one still running `timeout` seconds after the start,
    killed then)."""
    pipes = [os.pipe() for _ in runs]   # pipes[i] hands the turn to run i
    procs = []
    try:
        for i, (name, cmd) in enumerate(runs):
            r, w = pipes[i][0], pipes[(i + 1) % len(runs)][1]
            with open(os.path.join(outdir, name + ".out"), "w") as out, \
                    open(os.path.join(outdir, name + ".err"), "w") as err:
                procs.append(subprocess.Popen(cmd + ["--turn-fds", "%d,%d" % (r, w)],
                                              stdout=out, stderr=err, pass_fds=(r, w)))
    except OSError as e:
        for p in procs:
            p.kill()
            p.wait()
        sys.exit(f"lockstep: {name}: cannot run {cmd[0]}: {e.strerror}")
    else:
        os.write(pipes[0][1], b"t")
    finally:
        for r, w in pipes:   # the ring is the runs' now: an exit ends its pipes
            os.close(r)
            os.close(w)
    deadline = time.monotonic() + timeout
    statuses = []
    for p in procs:
        try:
            statuses.append(p.wait(timeout=max(0.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            statuses.append(124)
    return statuses


def read_output(path):
    """(step times in ms, the lines that must match the first run's)."""
    steps, result = [], []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("per_step_ms "):
                steps = [float(x) for x in line.split()[1].split(",")]
            elif line.startswith(("step ", "checksum ")):
                result.append(line)
    return steps, result


def step_logs(ref, steps):
    """log(step N / the reference's step N), for the steps both ran."""
    return [math.log(s / r) for r, s in zip(ref, steps)]


def pct(x):
    return f"{x - 1:+.1%}"


def row(i, name, rounds):
    """The table's row of run i over the rounds, each a list (per run) of
    (status, steps, result)."""
    statuses = sorted({r[i][0] for r in rounds if r[i][0] != 0}, key=str) or [0]   # ints and "?"
    pooled = [x for r in rounds for x in r[i][1]]
    median = f"{statistics.median(pooled):.2f}" if pooled else "–"
    if not i:
        return f"| {name} | {','.join(map(str, statuses))} | {len(pooled)} | {median} | – | – | – |"
    per_round = [step_logs(r[0][1], r[i][1]) for r in rounds]
    per_round = [logs for logs in per_round if logs]
    logs = [x for lr in per_round for x in lr]
    per_step = mean = "–"
    if logs:
        per_step = pct(math.exp(statistics.median(logs)))
        ratios = [math.exp(sum(lr) / len(lr)) for lr in per_round]
        mean = pct(math.exp(sum(map(math.log, ratios)) / len(ratios)))
        if len(ratios) > 1:
            mean += f", {pct(min(ratios))} – {pct(max(ratios))}"
        if len(ratios) >= 3:
            lo, hi = mean_ratio_interval(ratios)
            mean += f"; 95 %: {pct(lo)} – {pct(hi)}"
    same = "yes" if all(r[i][2] and r[i][2] == r[0][2] for r in rounds) else "no"
    return (f"| {name} | {','.join(map(str, statuses))} | {len(logs)} | {median} | {per_step} | {mean} "
            f"| {same} |")


def read_round(outdir, names, skip):
    """Per run of names: (status, steps after skip, result) in the round
    folder outdir."""
    statuses = {}
    try:
        with open(os.path.join(outdir, "status")) as f:
            statuses = dict(line.split() for line in f if line.strip())
    except OSError:
        pass
    results = []
    for name in names:
        try:
            steps, result = read_output(os.path.join(outdir, name + ".out"))
        except OSError as e:
            sys.exit(f"lockstep: {outdir}: no output of {name}: {e.strerror}")
        status = statuses.get(name, "?")
        results.append((int(status) if status.lstrip("-").isdigit() else status, steps[skip:], result))
    return results


def run_rounds(outdir, runs, rounds, skip, timeout):
    """Runs the rounds; returns each one's read_round."""
    names = [name for name, _ in runs]
    read = []
    for k in range(rounds):
        round_dir = os.path.join(outdir, "round-%d" % (k + 1))
        os.makedirs(round_dir, exist_ok=True)
        order = list(range(k % len(runs), len(runs))) + list(range(k % len(runs)))
        statuses = run_in_turn(round_dir, [runs[i] for i in order], timeout)
        with open(os.path.join(round_dir, "status"), "w") as f:
            f.writelines(f"{names[i]} {st}\n" for i, st in zip(order, statuses))
        read.append(read_round(round_dir, names, skip))
    return read


def round_dirs(outdir):
    """OUTDIR's round-K folders, by K."""
    try:
        listed = os.listdir(outdir)
    except OSError as e:
        sys.exit(f"lockstep: {outdir}: {e.strerror}")
    found = [(int(d[6:]), d) for d in listed if d.startswith("round-") and d[6:].isdigit()]
    if not found:
        sys.exit(f"lockstep: {outdir}: no round-K folders")
    return [os.path.join(outdir, d) for _, d in sorted(found)]


def report_dirs(args, scratch):
    """The OUTDIRs --report reads: each DIR itself, each ARCHIVE unpacked
    under scratch (its runs/ folder)."""
    dirs = []
    for i, arg in enumerate(args):
        if not arg.endswith(".tar.gz"):
            dirs.append(arg)
            continue
        into = os.path.join(scratch, str(i))
        try:
            with tarfile.open(arg) as t:
                t.extractall(into, filter="data")
        except OSError as e:
            sys.exit(f"lockstep: {arg}: {e.strerror}")
        except tarfile.TarError:
            sys.exit(f"lockstep: {arg}: not a .tar.gz archive")
        dirs.append(os.path.join(into, "runs"))
    return dirs


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("args", nargs="+", metavar="ARG",
                    help="OUTDIR NAME=COMMAND...; with --report, DIR or ARCHIVE...")
    ap.add_argument("--report", metavar="NAME,NAME", help="report the rounds already run under each DIR")
    ap.add_argument("--rounds", type=int, default=1, help="rings of fresh processes, each rotated one place")
    ap.add_argument("--skip", type=int, default=5, help="steps left out at the start of each run")
    ap.add_argument("--timeout", type=float, default=600, help="seconds a round's runs may take, together")
    a = ap.parse_intermixed_args(argv)   # options may come between the runs
    if a.skip < 0 or a.rounds < 1:
        ap.error("--skip must be at least 0 and --rounds at least 1")
    if a.report:
        names = a.report.split(",")
    else:
        if len(a.args) < 2:
            ap.error("OUTDIR and at least one NAME=COMMAND")
        try:
            runs = [parse_run(x) for x in a.args[1:]]
        except argparse.ArgumentTypeError as e:
            ap.error(str(e))
        names = [name for name, _ in runs]
    if len(set(names)) != len(names) or not all(names):
        ap.error("two runs named alike, or a name empty")

    if not a.report and os.path.isdir(a.args[0]) and any(
            d.startswith("round-") for d in os.listdir(a.args[0])):
        # --report would pool the old rounds with the new ones.
        ap.error(f"{a.args[0]} holds rounds already run: give a new OUTDIR")
    if a.report:
        with tempfile.TemporaryDirectory() as scratch:
            rounds = [read_round(d, names, a.skip) for outdir in report_dirs(a.args, scratch)
                      for d in round_dirs(outdir)]
    else:
        rounds = run_rounds(a.args[0], runs, a.rounds, a.skip, a.timeout)
    n = len(rounds)
    print(f"{n} round{'s' if n > 1 else ''}; steps after the first {a.skip}, "
          f"each paired with the same step of {names[0]} in its round.\n")
    print(f"| run | status | steps | median ms | per step vs {names[0]}: median "
          f"| per round: mean, range; 95 % interval | same output |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
    for i, name in enumerate(names):
        print(row(i, name, rounds))
    failed = any(r[i][0] not in (0, "?") or not r[i][1] for r in rounds for i in range(len(names)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
