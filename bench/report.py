#!/usr/bin/env python3
"""Markdown tables for docs/benchmarks.md from one GPU run's outputs:
replay.txt and calib.json (tests/gpu/run.sh) and overhead.csv
(bench/record_overhead.sh). Nothing is computed that the files do not say.

Usage: python3 bench/report.py DIR
DIR holds replay.txt and calib.json (the replay table), overhead.csv (the
overhead table), or all three; with replay.txt, the plans' umplan --json
as NAME.RATIO.plan.json where tests/gpu/run.sh kept them (their capacity
floors). A file missing or not as these programs write it is named, with
what is wrong, on one line (exit 1)."""
import argparse
import csv
import json
import os
import sys

sys.dont_write_bytecode = True   # importing capacity_floor.py leaves no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capacity_floor import bad_field, floor_ms, least_ms  # noqa: E402

CALIB_KEYS = ("htod_gbps", "dtoh_gbps", "used_drop_after_evict_bytes")
REPLAY_KEYS = ("iter_ms", "htod_mb_per_iter", "dtoh_mb_per_iter", "faults_per_iter",
               "modelled_peak_mb", "budget_mb")
OVERHEAD_KEYS = ("model", "steps", "plain_ms", "plain_uncached_ms", "umrec_ms", "umrec_cache_ms",
                 "umrec_over_plain")


class BadFile(Exception):
    """A file that is not as tests/gpu/run.sh or record_overhead.sh writes it."""


def read_calib(path):
    try:
        with open(path) as f:
            calib = json.load(f)
    except json.JSONDecodeError as e:
        raise BadFile(f"{path}: not JSON ({e})") from None
    missing = [k for k in CALIB_KEYS if not isinstance(calib, dict)
               or not isinstance(calib.get(k), (int, float))]
    if missing:
        raise BadFile(f"{path}: no number {', '.join(missing)}")
    # The lower bound divides by them.
    stalled = [k for k in ("htod_gbps", "dtoh_gbps") if calib[k] <= 0]
    if stalled:
        raise BadFile(f"{path}: {', '.join(stalled)} is not above 0")
    return calib


def read_replay(path):
    """[(name, ratio, policy, {key: value})] from replay.txt's lines, each
    NAME.RATIO.POLICY key=value ..."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            tag, *kv = line.split()
            if "." not in tag or any("=" not in x for x in kv):
                raise BadFile(f"{path}:{n}: not NAME.RATIO.POLICY key=value ...")
            d = dict(x.split("=", 1) for x in kv)
            # Figures only where the replay completed (rc 0, an iter_ms).
            missing = [k for k in REPLAY_KEYS if "iter_ms" in d and k not in d]
            if missing:
                raise BadFile(f"{path}:{n}: no {', '.join(missing)}")
            # Divided by (% of ideal, x bound).
            if "iter_ms" in d and not float(d["iter_ms"]) > 0:
                raise BadFile(f"{path}:{n}: iter_ms is not above 0")
            name, *ratio, policy = tag.split(".")
            rows.append((name, ".".join(ratio), policy, d))
    return rows


def read_floor(folder, name, ratio):
    """The capacity floor of the plan run at NAME.RATIO, from
    folder/NAME.RATIO.plan.json, or None where run.sh kept none."""
    path = os.path.join(folder, f"{name}.{ratio}.plan.json")
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            floor = json.load(f)["plan"]["capacity_floor"]
    except (ValueError, KeyError, TypeError) as e:
        raise BadFile(f"{path}: not umplan --json's output with plan.capacity_floor ({e!r})") from None
    bad = bad_field(floor)
    if bad:
        raise BadFile(f"{path}: plan.capacity_floor.{bad}")
    return floor


def replay_table(rows, calib, folder):
    # A replay that failed (rc not 0) has no figures, or none to trust.
    ok = lambda d: d.get("rc", "0") == "0" and "iter_ms" in d
    ideal = {(n, r): float(d["iter_ms"]) for n, r, p, d in rows if p == "ideal" and ok(d)}
    out = ["| workload | W/B | policy | iteration ms | % of ideal | faults / iter | HtoD MB / iter "
           "| DtoH MB / iter | lower bound ms | x bound | modelled peak MB | budget MB | floor ms | x floor "
           "| least x bound |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
           "| ---: |"]
    for name, ratio, policy, d in rows:
        if not ok(d) or (name, ratio) not in ideal:
            # rc 0 without a time: it completed no iteration.
            why = ("ideal failed" if ok(d) else "no steady iteration" if d.get("rc", "0") == "0"
                   else f"failed (rc {d.get('rc', '?')})")
            out.append(f"| {name} | {ratio} | {policy} | {why} |" + " – |" * 11)
            continue
        it, h, dd = float(d["iter_ms"]), float(d["htod_mb_per_iter"]), float(d["dtoh_mb_per_iter"])
        base = ideal[(name, ratio)]
        # MB / (GB/s) = ms
        bound = max(base, dd / calib["dtoh_gbps"], h / calib["htod_gbps"])
        # The plan's floor at the measured eviction bandwidth.
        kept = read_floor(folder, name, ratio) if policy == "plan" else None
        floor = floor_ms(kept, calib["dtoh_gbps"]) if kept else None
        least = least_ms(base, floor, dd, h, calib)
        floor_text, x_floor = (("–", "–") if floor is None else
                               (f"{floor:.1f}", f"{it / floor:.2f}" if floor else "–"))
        # ideal keeps no budget, so no modelled peak under one; its faults
        # and bound are read as every policy's.
        peak, budget = (("–", "none") if policy == "ideal" else
                        (f"{float(d['modelled_peak_mb']):.0f}", f"{float(d['budget_mb']):.0f}"))
        out.append(f"| {name} | {ratio} | {policy} | {it:.1f} | {100 * base / it:.1f} | "
                   f"{float(d['faults_per_iter']):.0f} | {h:.0f} | {dd:.0f} | {bound:.1f} | "
                   f"{it / bound:.2f} | {peak} | {budget} | {floor_text} | {x_floor} | {least / bound:.2f} |")
    return "\n".join(out)


def overhead_table(path):
    out = ["| model | steps | plain ms | plain, cache off ms | umrec ms | umrec --framework-cache ms "
           "| umrec / plain |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [k for k in OVERHEAD_KEYS if k not in (reader.fieldnames or ())]
        if missing:
            raise BadFile(f"{path}: no {', '.join(missing)} column")
        rows = list(reader)
    for n, r in enumerate(rows, 2):
        if None in r.values():
            raise BadFile(f"{path}:{n}: fewer fields than the header's")
        out.append(f"| {r['model']} | {r['steps']} | {float(r['plain_ms']):.2f} | "
                   f"{float(r['plain_uncached_ms']):.2f} | {float(r['umrec_ms']):.2f} | "
                   f"{float(r['umrec_cache_ms']):.2f} | {float(r['umrec_over_plain']):.2f}x |")
    return "\n".join(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", metavar="DIR",
                    help="holds replay.txt and calib.json (tests/gpu/run.sh), overhead.csv "
                         "(bench/record_overhead.sh), or all three")
    d = ap.parse_args(argv).dir
    replay, calib, overhead = (os.path.join(d, f) for f in ("replay.txt", "calib.json", "overhead.csv"))
    if not os.path.isdir(d):
        sys.exit(f"report.py: {d}: {'not a folder' if os.path.exists(d) else 'No such folder'}")
    if not os.path.exists(replay) and not os.path.exists(overhead):
        sys.exit(f"report.py: {d}: neither replay.txt nor overhead.csv")
    # Both tables made before either is printed: a bad file prints nothing
    # but its error.
    tables = []
    try:
        if os.path.exists(replay):
            where = replay
            rows = read_replay(replay)
            where = calib
            c = read_calib(calib)
            where = replay
            tables.append(
                f"Measured link bandwidths (tests/gpu/calibrate.py, 1 GiB): HtoD prefetch "
                f"{c['htod_gbps']} GB/s, DtoH eviction {c['dtoh_gbps']} GB/s; device memory in "
                f"use dropped by {c['used_drop_after_evict_bytes']} bytes after evicting 1 GiB."
                f"\n\n{replay_table(rows, c, d)}")
        if os.path.exists(overhead):
            where = overhead
            tables.append(overhead_table(overhead))
    except OSError as e:
        sys.exit(f"report.py: {e.filename}: {e.strerror}")
    except BadFile as e:
        sys.exit(f"report.py: {e}")
    except ValueError as e:  # a figure that is not a number
        sys.exit(f"report.py: {where}: {e}")
    print("\n\n".join(tables))


if __name__ == "__main__":
    main(sys.argv[1:])
