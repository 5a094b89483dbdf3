#!/usr/bin/env python3
"""Runs that take their steps in turn, compared step by step.

Usage: python3 bench/lockstep.py OUTDIR NAME=COMMAND [NAME=COMMAND ...]
                                 [--skip N] [--block N] [--timeout S]

Each COMMAND (split as a shell would, not run by one) is a program of
examples/pytorch, directly or under umreplay; `--turn-fds R,W` is added to
its end. The runs start together and pass one turn around a ring of pipes:
the first run's step 0, the second's step 0, ..., the first's step 1, and
so on, each waiting while the others step (examples/pytorch/turns.py).

Why: on a shared host the speed drifts by more than the overheads to be
measured, over seconds (DLRM's 200-step runs differed by up to 40 % from
one run to the next, docs/benchmarks.md). Runs in turn see the same
drift, step by step, so step N of a variant is paired with step N of the
first run, taken milliseconds before it.

Writes OUTDIR/NAME.out and OUTDIR/NAME.err, then prints a Markdown table,
every run against the first, over the steps after the first N (--skip,
default 5: warm-up) that both ran:
  median ms          the run's median step
  per step: median   the median of step N's time over the first run's
  mean, 95 %         their geometric mean, and its 95 % interval by a
                     bootstrap over blocks of --block (25) consecutive
                     steps (neighbouring steps share drift, so steps are
                     not resampled one by one): what the pairs can tell
                     apart; a target inside it is neither shown met nor
                     missed
  same output        the step and loss lines and the checksum as the
                     first run's
Exit status 1 when a run failed (its status is in the table) or printed no
step times.
"""
import argparse
import math
import os
import shlex
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pooled_steps import mean_ratio_interval  # noqa: E402


def parse_run(text):
    name, sep, command = text.partition("=")
    if not sep or not name or not command.strip():
        raise argparse.ArgumentTypeError("not NAME=COMMAND: %r" % text)
    if "/" in name or name.startswith("."):
        raise argparse.ArgumentTypeError("a run's name is a file name in OUTDIR: %r" % name)
    return name, shlex.split(command)


def run_in_turn(outdir, runs, timeout):
    """Starts every run on the ring and waits for all; returns their exit
    statuses (124 for one still running `timeout` seconds after the start,
    killed then)."""
    pipes = [os.pipe() for _ in runs]   # pipes[i] hands the turn to run i
    procs = []
    for i, (name, cmd) in enumerate(runs):
        r, w = pipes[i][0], pipes[(i + 1) % len(runs)][1]
        with open(os.path.join(outdir, name + ".out"), "w") as out, \
                open(os.path.join(outdir, name + ".err"), "w") as err:
            procs.append(subprocess.Popen(cmd + ["--turn-fds", "%d,%d" % (r, w)],
                                          stdout=out, stderr=err, pass_fds=(r, w)))
    os.write(pipes[0][1], b"t")
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


def compare(ref, steps, block):
    """(per-step median ratio, geometric mean, interval or None) of steps
    over ref, paired by index."""
    logs = [math.log(s / r) for r, s in zip(ref, steps)]
    blocks = [logs[i:i + block] for i in range(0, len(logs) - block + 1, block)]
    interval = (mean_ratio_interval([math.exp(sum(b) / len(b)) for b in blocks])
                if len(blocks) >= 3 else None)
    return (math.exp(statistics.median(logs)), math.exp(sum(logs) / len(logs)), interval)


def pct(x):
    return f"{x - 1:+.1%}"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("runs", nargs="+", type=parse_run, metavar="NAME=COMMAND")
    ap.add_argument("--skip", type=int, default=5, help="steps left out at the start of each run")
    ap.add_argument("--block", type=int, default=25, help="consecutive steps resampled together")
    ap.add_argument("--timeout", type=float, default=600, help="seconds the runs may take, all together")
    a = ap.parse_args(argv)
    names = [name for name, _ in a.runs]
    if len(set(names)) != len(names):
        ap.error("two runs named alike")
    if a.skip < 0 or a.block < 1:
        ap.error("--skip must be at least 0 and --block at least 1")
    os.makedirs(a.outdir, exist_ok=True)

    statuses = run_in_turn(a.outdir, a.runs, a.timeout)
    outputs = [read_output(os.path.join(a.outdir, name + ".out")) for name in names]
    ref_steps, ref_result = outputs[0][0][a.skip:], outputs[0][1]
    print(f"Steps after the first {a.skip}, each paired with the same step of {names[0]}.\n")
    print(f"| run | status | steps | median ms | per step vs {names[0]}: median | mean, 95 % interval "
          f"| same output |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
    failed = False
    for i, (name, status) in enumerate(zip(names, statuses)):
        steps, result = outputs[i][0][a.skip:], outputs[i][1]
        failed |= status != 0 or not steps
        n = min(len(steps), len(ref_steps))
        median = f"{statistics.median(steps):.2f}" if steps else "–"
        per_step = mean = "–"
        if i and n:
            mid, gmean, interval = compare(ref_steps[:n], steps[:n], a.block)
            per_step = pct(mid)
            mean = pct(gmean) + (f" ({pct(interval[0])} – {pct(interval[1])})" if interval else "")
        same = "–" if not i else ("yes" if result and result == ref_result else "no")
        print(f"| {name} | {status} | {n if i else len(steps)} | {median} | {per_step} | {mean} | {same} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
