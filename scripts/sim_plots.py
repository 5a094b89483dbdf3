#!/usr/bin/env python3
"""sim_plots.py: turns umplan --simulate --sim-csv DIR output into PNGs.

Usage: scripts/sim_plots.py DIR [OUTDIR]

Reads DIR/pressure.csv and DIR/throughput.csv and writes to OUTDIR (default
DIR):
  pressure.png    resident bytes per kernel over one iteration, before and
                  after the plan, against the capacity (one panel per ratio);
  throughput.png  % of ideal throughput against the ratio W/B, per policy.
Needs matplotlib (Agg backend: no display).
"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def pressure(rows, out):
    by_ratio = defaultdict(list)
    for r in rows:
        by_ratio[float(r["ratio"])].append(r)
    ratios = sorted(by_ratio)
    fig, axes = plt.subplots(len(ratios), 1, figsize=(9, 2.6 * len(ratios)), squeeze=False,
                             sharex=True)
    for ax, ratio in zip(axes[:, 0], ratios):
        rs = sorted(by_ratio[ratio], key=lambda r: int(r["position"]))
        pos = [int(r["position"]) for r in rs]
        mb = lambda key: [int(r[key]) / 1e6 for r in rs]  # noqa: E731
        ax.plot(pos, mb("before_plan"), label="without plan", color="tab:red")
        ax.plot(pos, mb("after_plan"), label="with plan", color="tab:blue")
        ax.plot(pos, mb("capacity"), label="capacity", color="black", linestyle="--")
        ax.set_ylabel("MB resident")
        ax.set_title(f"W/B = {ratio:g}")
        ax.legend(loc="upper right", fontsize="small")
    axes[-1, 0].set_xlabel("kernel position in the iteration")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def throughput(rows, out):
    by_policy = defaultdict(list)
    for r in rows:
        by_policy[r["policy"]].append((float(r["ratio"]), float(r["pct_ideal"])))
    fig, ax = plt.subplots(figsize=(6, 4))
    for policy, pts in by_policy.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=policy)
    ax.set_xlabel("oversubscription W/B")
    ax.set_ylabel("% of ideal throughput")
    ax.set_ylim(0, 105)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    src = argv[1]
    dst = argv[2] if len(argv) == 3 else src
    os.makedirs(dst, exist_ok=True)
    try:
        p_rows = read(os.path.join(src, "pressure.csv"))
        t_rows = read(os.path.join(src, "throughput.csv"))
    except OSError as e:
        sys.stderr.write(f"sim_plots.py: {e}\n")
        return 1
    pressure(p_rows, os.path.join(dst, "pressure.png"))
    throughput(t_rows, os.path.join(dst, "throughput.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
