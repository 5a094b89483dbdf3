#!/usr/bin/env python3
"""Session 37, no GPU: how much of a plan's eviction could skip the copy
if the host kept a copy (read-mostly duplication, docs/replay.md, "What the
driver's calls cost"). Only an eviction of data already evicted once in
the iteration and not written since can; the trace does not say which
kernels write, so the upper bound counted here is every eviction of an
allocation after its first one in the planned iteration.
Usage, from the repository root, with build/ made:
  python3 bench/results/2026-11-26/s37/evict-census.py FIXTURE.db RATIO..."""
import json
import os
import subprocess
import sys
import tempfile

BIN = "build/bin/umplan"


def umplan(*args):
    return subprocess.run([BIN, *args], check=True, capture_output=True, text=True).stdout


trace, ratios = sys.argv[1], [float(r) for r in sys.argv[2:]]
peak = json.loads(umplan("--json", trace))["memory"]["live_peak"]
with tempfile.TemporaryDirectory() as tmp:
    plan_path = os.path.join(tmp, "plan.bin")
    for ratio in ratios:
        umplan(trace, "--capacity", str(int(peak / ratio)), "-o", plan_path, "-q")
        plan = json.loads(umplan("--dump", plan_path))
        seen, first, again = set(), 0, 0
        for op in sorted((o for o in plan["ops"] if o["kind"] == "evict"), key=lambda o: o["position"]):
            if op["alloc"] in seen:
                again += op["bytes"]
            else:
                first += op["bytes"]
                seen.add(op["alloc"])
        total = first + again
        share = 100 * again / total if total else 0
        print(f"{os.path.basename(trace)} W/B {ratio:g}: {total / 1e6:.0f} MB evicted, "
              f"{again / 1e6:.0f} MB ({share:.1f} %) by an allocation's second or later eviction")
