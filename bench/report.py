#!/usr/bin/env python3
"""Markdown tables for docs/benchmarks.md from one GPU run's outputs:
replay.txt and calib.json (tests/gpu/run.sh) and overhead.csv
(bench/record_overhead.sh). Nothing is computed that the files do not say.

Usage: python3 bench/report.py DIR   (DIR holds the three files)"""
import csv
import json
import os
import sys


def replay_table(path, calib):
    rows = []
    for line in open(path):
        tag, *kv = line.split()
        d = dict(x.split("=", 1) for x in kv)
        name, *ratio, policy = tag.split(".")
        rows.append((name, ".".join(ratio), policy, d))
    # A replay that failed (rc not 0) has no figures, or none to trust.
    ok = lambda d: d.get("rc", "0") == "0" and "iter_ms" in d
    ideal = {(n, r): float(d["iter_ms"]) for n, r, p, d in rows if p == "ideal" and ok(d)}
    out = ["| workload | W/B | policy | iteration ms | % of ideal | faults / iter | HtoD MB / iter "
           "| DtoH MB / iter | lower bound ms | x bound | modelled peak MB | budget MB |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, ratio, policy, d in rows:
        if not ok(d) or (name, ratio) not in ideal:
            # rc 0 without a time: it completed no iteration.
            why = ("ideal failed" if ok(d) else "no steady iteration" if d.get("rc", "0") == "0"
                   else f"failed (rc {d.get('rc', '?')})")
            out.append(f"| {name} | {ratio} | {policy} | {why} |" + " – |" * 8)
            continue
        it, h, dd = float(d["iter_ms"]), float(d["htod_mb_per_iter"]), float(d["dtoh_mb_per_iter"])
        base = ideal[(name, ratio)]
        # MB / (GB/s) = ms
        bound = max(base, dd / calib["dtoh_gbps"], h / calib["htod_gbps"])
        # ideal keeps no budget, so no modelled peak under one; its faults
        # and bound are read as every policy's.
        peak, budget = (("–", "none") if policy == "ideal" else
                        (f"{float(d['modelled_peak_mb']):.0f}", f"{float(d['budget_mb']):.0f}"))
        out.append(f"| {name} | {ratio} | {policy} | {it:.1f} | {100 * base / it:.1f} | "
                   f"{float(d['faults_per_iter']):.0f} | {h:.0f} | {dd:.0f} | {bound:.1f} | "
                   f"{it / bound:.2f} | {peak} | {budget} |")
    return "\n".join(out)


def overhead_table(path):
    out = ["| model | steps | plain ms | plain, cache off ms | umrec ms | umrec --framework-cache ms "
           "| umrec / plain |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in csv.DictReader(open(path)):
        out.append(f"| {r['model']} | {r['steps']} | {float(r['plain_ms']):.2f} | "
                   f"{float(r['plain_uncached_ms']):.2f} | {float(r['umrec_ms']):.2f} | "
                   f"{float(r['umrec_cache_ms']):.2f} | {float(r['umrec_over_plain']):.2f}x |")
    return "\n".join(out)


def main(d):
    calib = json.load(open(os.path.join(d, "calib.json")))
    print(f"Measured link bandwidths (tests/gpu/calibrate.py, 1 GiB): HtoD prefetch "
          f"{calib['htod_gbps']} GB/s, DtoH eviction {calib['dtoh_gbps']} GB/s; device memory "
          f"in use dropped by {calib['used_drop_after_evict_bytes']} bytes after evicting 1 GiB.\n")
    print(replay_table(os.path.join(d, "replay.txt"), calib))
    if os.path.exists(os.path.join(d, "overhead.csv")):
        print()
        print(overhead_table(os.path.join(d, "overhead.csv")))


if __name__ == "__main__":
    main(sys.argv[1])
