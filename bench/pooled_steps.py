#!/usr/bin/env python3
"""Step times of a bench/suite.sh command, pooled over its repetitions.

Usage: python3 bench/pooled_steps.py OUTPUTS [--skip N] [--experiment E] [--ref POLICY]

OUTPUTS is a MODEL-outputs.tar.gz that bench/suite.sh wrote, or a folder of
the runs' .out files. Every run prints `per_step_ms` (examples/pytorch); the
first N steps of each run (default 5: warm-up) are dropped and the rest
pooled per variant (experiment, batch, ratio, policy, build). Against the
reference (--ref: plain by default; ideal for the grid, where a policy's
throughput is judged against ideal's) of the variant's own experiment and
batch (the overhead-* variants: overhead's; one without: the grid's), two
views:
  pooled: the variant's pooled median over the reference's;
  paired: per repetition, the variant's median over the reference run of
          the same repetition (run next to it), then the median of those
          ratios and their range. Pairing cancels drift between
          repetitions, which on a shared host is larger than the
          overheads measured.
  interval: with 3 or more pairs, the 95 % interval of the pairs' mean
          ratio (geometric), by a bootstrap over the pairs (10,000
          resamples, a fixed seed): what the pairs can tell apart. A
          target inside it is neither shown met nor missed.
Prints a Markdown table.
"""
import argparse
import math
import os
import random
import re
import statistics
import sys
import tarfile

RUN = re.compile(r"(?P<exp>[\w-]+)\.b(?P<batch>\d+)\.r(?P<ratio>[\d.]+)\."
                 r"(?P<policy>[\w-]+)\.(?P<rep>\d+)(?:\.(?P<build>[\w-]+))?\.out$")


def read_runs(path):
    """{(exp, batch, ratio, policy, build): {rep: [ms, ...]}} from the .out
    files. The batch keeps maxbatch's batches apart: each is run once, as
    rep 1, so without it one batch's runs replace another's."""
    texts = {}
    if os.path.isdir(path):
        for name in os.listdir(path):
            if os.path.isfile(os.path.join(path, name)):
                with open(os.path.join(path, name), errors="replace") as f:
                    texts[name] = f.read()
    else:
        with tarfile.open(path) as tar:
            for m in tar.getmembers():
                if m.isfile():
                    texts[os.path.basename(m.name)] = tar.extractfile(m).read().decode(errors="replace")
    runs = {}
    for name, text in texts.items():
        m = RUN.match(name)
        steps = [line.split()[1] for line in text.splitlines() if line.startswith("per_step_ms ")]
        if not m or not steps:
            continue
        key = (m["exp"], int(m["batch"]), float(m["ratio"]), m["policy"], m["build"] or "")
        runs.setdefault(key, {})[int(m["rep"])] = [float(x) for x in steps[-1].split(",")]
    return runs


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def mean_ratio_interval(ratios, resamples=10000, seed=0):
    """The 95 % bootstrap interval of the geometric mean of ratios."""
    logs = [math.log(r) for r in ratios]
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(logs, k=len(logs))) / len(logs) for _ in range(resamples))
    return math.exp(quantile(means, 0.025)), math.exp(quantile(means, 0.975))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outputs")
    ap.add_argument("--skip", type=int, default=5, help="steps dropped at the start of each run")
    ap.add_argument("--experiment", help="only this experiment (and the reference's runs)")
    ap.add_argument("--ref", default="plain",
                    help="the policy compared against: plain, or ideal (this build's, without a budget)")
    a = ap.parse_args(argv)
    if a.skip < 0:
        ap.error(f"--skip {a.skip}: the steps dropped are 0 or more")
    try:
        runs = read_runs(a.outputs)
    except OSError as e:
        ap.error(f"{e.filename or a.outputs}: {e.strerror or e}")
    except (tarfile.TarError, EOFError):
        ap.error(f"{a.outputs}: neither a folder nor a readable tar archive "
                 "(bench/suite.sh's MODEL-outputs.tar.gz)")
    if a.experiment:
        runs = {k: v for k, v in runs.items() if k[0] in (a.experiment, "overhead", "grid")
                and (k[0] == a.experiment or k[3] == a.ref)}
    if not runs:
        sys.exit(f"{a.outputs}: no run with per_step_ms")
    # One reference per experiment and batch: a variant is compared with its
    # own experiment's at its batch (the overhead-* variants with
    # overhead's), else at another batch, else the grid's, else the first:
    # a command's parts differ in steps and order.
    refs = {}
    for k in sorted(runs):
        if k[3] == a.ref and k[2] == 0 and k[4] == "":
            refs.setdefault(k[:2], k)
            refs.setdefault(k[0], k)
    if not refs:
        sys.exit(f"{a.outputs}: no {a.ref} run to compare with")

    def ref_of(key):
        exp = key[0]
        if exp not in refs and exp.startswith("overhead-"):
            exp = "overhead"
        return (refs.get((exp, key[1])) or refs.get(exp) or refs.get("grid")
                or next(iter(refs.values())))
    print(f"Steps after the first {a.skip} of each run, pooled over the repetitions.\n")
    print(f"| variant | runs | steps | p10 ms | median ms | pooled vs {a.ref} | paired vs {a.ref}: median (min–max) "
          f"| paired: 95 % interval of the mean |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for key in sorted(runs, key=lambda k: (k not in refs.values(), k)):
        reps = runs[key]
        pool = [x for steps in reps.values() for x in steps[a.skip:]]
        if not pool:
            continue
        name = " ".join([key[0], f"b{key[1]}"] + [str(p) for p in key[2:] if p != ""])
        pooled = paired = interval = "–"
        ref_key = ref_of(key)
        ref = runs[ref_key]
        ref_pool = [x for steps in ref.values() for x in steps[a.skip:]]
        if ref_pool and key != ref_key:
            pooled = f"{statistics.median(pool) / statistics.median(ref_pool) - 1:+.1%}"
            ratios = [statistics.median(reps[r][a.skip:]) / statistics.median(ref[r][a.skip:])
                      for r in sorted(reps) if r in ref and reps[r][a.skip:] and ref[r][a.skip:]]
            if ratios:
                paired = (f"{statistics.median(ratios) - 1:+.1%} "
                          f"({min(ratios) - 1:+.1%} – {max(ratios) - 1:+.1%}), {len(ratios)} pairs")
            if len(ratios) >= 3:
                lo, hi = mean_ratio_interval(ratios)
                interval = f"{lo - 1:+.1%} – {hi - 1:+.1%}"
        print(f"| {name} | {len(reps)} | {len(pool)} | {quantile(pool, 0.1):.2f} | "
              f"{statistics.median(pool):.2f} | {pooled} | {paired} | {interval} |")


if __name__ == "__main__":
    main(sys.argv[1:])
