#!/usr/bin/env python3
"""Session 36, no GPU: how large the contiguous ranges of a plan's
evictions would be if the evictions due within WINDOW kernels of the first
of a group were issued together (their 2 MB blocks merged where adjacent in
the recording's address space). Usage, from the repository root:
  python3 bench/results/2026-11-26/s36/evict-ranges.py TRACE PLAN_JSON FIRST_KERNEL
with PLAN_JSON from `umplan --dump` and FIRST_KERNEL the planned
iteration's first kernel (`umplan --json`: iterations.first_kernel)."""
import json
import sqlite3
import sys

BLOCK = 2 << 20
trace, plan_json, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect(trace)
plan = json.load(open(plan_json))
t0 = db.execute("select launch_ns from kernel where seq = ?", (first,)).fetchone()[0]
allocs = db.execute("select id, address, alloc_ns from alloc order by id").fetchall()
by_id = {a[0]: a[1] for a in allocs}
iteration = [a[1] for a in allocs if a[2] >= t0]   # plan-format.md: iteration ordinals


def address(a):
    return by_id[a["ordinal"]] if a["origin"] == "persistent" else iteration[a["ordinal"] - 1]


def blocks(op):
    start = address(plan["allocs"][op["alloc"]]) + op["offset"]
    return start // BLOCK, (start + op["bytes"] + BLOCK - 1) // BLOCK


evictions = sorted((o for o in plan["ops"] if o["kind"] == "evict"), key=lambda o: o["position"])
print(f"{len(evictions)} evict ops, {sum(o['bytes'] for o in evictions) / 1e6:.0f} MB")
for window in (0, 1, 5, 20, 50):
    groups, start = [], None
    for o in evictions:
        if not groups or o["position"] - start > window:
            groups.append([])
            start = o["position"]
        groups[-1].append(o)
    sizes = []
    for g in groups:
        merged = []
        for s, e in sorted(blocks(o) for o in g):
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        sizes += [(e - s) * BLOCK >> 20 for s, e in merged]
    total = sum(sizes)
    print(f"window {window:3}: {len(groups)} groups, {len(sizes)} ranges, mean {total / len(sizes):.1f} MB, "
          f"bytes in ranges of 64 MB or more: {sum(x for x in sizes if x >= 64) / total:.0%}")
