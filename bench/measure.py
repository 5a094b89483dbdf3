#!/usr/bin/env python3
"""Append one run of the benchmark suite to its CSV (bench/suite.sh).

Usage: python3 bench/measure.py CSV --out OUT [--stats STATS] [--ref REF]
                                [--rc RC] KEY=VALUE...

KEY=VALUE pairs name the run (build: the umkit build's $BUILD/COMMIT; model,
experiment, batch, ratio, policy, ...);
the measurements come from the files:
  OUT    the example's stdout: step_ms is the median of its per_step_ms
         after the first step (the first holds the one-time work)
  STATS  umreplay --stats JSON: faults and traffic per iteration (steady
         medians, tests/gpu/replay_table.py), peaks, plan positions; the
         replayer's launch callbacks in ms per iteration, averaged over the
         whole run (callback_ms_per_iter) and in a steady iteration
         (steady_callback_ms), and the launches it could not place in one
         (steady_lost); how long the kernels (with --kernel-times) and the
         migrations of each direction kept the GPU busy in a steady
         iteration (steady_kernel_busy_ms, steady_htod_busy_ms,
         steady_dtoh_busy_ms); the blocks the replayer's model expects to
         fault back in, and those of launches that ran ahead of their
         prefetch, in a steady iteration (steady_refault_blocks,
         steady_unissued_blocks; empty in stats that lack them)
  REF    another run's stdout: same_output is 1 when every loss line and the
         checksum equal REF's, else 0
A run that failed (RC not 0) or left no file gets empty measurements."""
import csv
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
from replay_table import summarise  # noqa: E402

COLUMNS = ["date", "gpu", "build", "model", "experiment", "batch", "w_bytes", "ratio", "budget_bytes",
           "policy", "rep", "rc", "same_output", "step_ms", "faults_per_iter",
           "htod_mb_per_iter", "dtoh_mb_per_iter", "peak_mb", "modelled_peak_mb",
           "matched", "resynced", "lost", "mismatch", "callback_ms_per_iter",
           "steady_callback_ms", "steady_lost", "steady_kernel_busy_ms", "steady_htod_busy_ms",
           "steady_dtoh_busy_ms", "steady_refault_blocks", "steady_unissued_blocks"]
FROM_STATS = ["faults_per_iter", "htod_mb_per_iter", "dtoh_mb_per_iter", "peak_mb",
              "modelled_peak_mb", "matched", "resynced", "lost", "mismatch",
              "callback_ms_per_iter", "steady_callback_ms", "steady_lost", "steady_kernel_busy_ms",
              "steady_htod_busy_ms", "steady_dtoh_busy_ms", "steady_refault_blocks",
              "steady_unissued_blocks"]


def read_lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError:
        return []


def step_ms(lines):
    for line in lines:
        if line.startswith("per_step_ms "):
            times = [float(t) for t in line.split()[1].split(",")]
            rest = times[1:] or times
            return "%.3f" % statistics.median(rest)
    return ""


def outputs(lines):
    """What must not change under umkit: the loss lines and the checksum."""
    return [x for x in lines if x.startswith("checksum ") or
            (x.startswith("step ") and " loss " in x)]


def measure(out, stats, ref, rc):
    row = {"rc": rc}
    lines = read_lines(out)
    if rc == "0":
        row["step_ms"] = step_ms(lines)
    if ref is not None:
        mine, theirs = outputs(lines), outputs(read_lines(ref))
        row["same_output"] = int(bool(mine) and mine == theirs)
    if stats and rc == "0" and os.path.exists(stats):
        with open(stats) as f:
            s = summarise(json.load(f))
        for k in FROM_STATS:
            v = s[k]
            row[k] = "%.3f" % v if isinstance(v, float) else ("" if v is None else v)
    return row


def main(argv):
    import argparse
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("--out", required=True)
    p.add_argument("--stats")
    p.add_argument("--ref")
    p.add_argument("--rc", default="0")
    p.add_argument("fields", nargs="*", metavar="KEY=VALUE")
    a = p.parse_intermixed_args(argv)
    row = {}
    for kv in a.fields:
        k, sep, v = kv.partition("=")
        if not sep or k not in COLUMNS:
            p.error("not a KEY=VALUE of a known column: %r" % kv)
        row[k] = v
    row.update(measure(a.out, a.stats, a.ref, a.rc))
    new = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
    with open(a.csv, "a", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        if new:
            w.writeheader()
        w.writerow(row)


if __name__ == "__main__":
    main(sys.argv[1:])
