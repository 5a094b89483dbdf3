#!/usr/bin/env python3
"""Session 88: where the GPU idles in one replay's steady iterations, from
run-timeline.sh's CSV (timeline.patch). Each idle gap between kernels is
charged to the kernel that ends it: launched after the gap began (the
program's thread was late: 'host') or before it (the kernel waited on the
GPU for something it was ordered after: 'waited'); and shows whether an
eviction or a prefetch was copying during the gap.

Usage: gaps.py TIMELINE.csv [FIRST_ITER]   (iterations from FIRST_ITER, default 3, to the last)"""
import sys
from collections import defaultdict


def merged(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def overlap(iv, s, e):
    return sum(max(0, min(e, b) - max(s, a)) for a, b in iv)


def main():
    path = sys.argv[1]
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    ev = defaultdict(list)
    launch = {}
    kernels = []
    for line in open(path):
        k, s, e, b, x = line.strip().split(",")
        s, e, b, x = int(s), int(e), int(b), int(x)
        if k == "launch":
            launch[x] = s
        elif k == "kernel":
            kernels.append((s, e, x))
        else:
            ev[k].append((s, e, b))
    calls = defaultdict(list)
    try:
        for line in open(path + ".calls"):
            k, s, e, b, n = line.strip().split(",")
            calls[k].append((int(s), int(e), int(b)))
    except FileNotFoundError:
        pass
    ends = sorted(s for s, _, _ in ev["iter_end"])
    kernels.sort()
    dtoh = merged([(s, e) for s, e, _ in ev["dtoh"]])
    htod = merged([(s, e) for s, e, _ in ev["htod"]])
    wev = merged([(s, e) for s, e, _ in calls["call_worker_evict"]])
    tot = defaultdict(float)
    n_it = 0
    for i in range(first, len(ends)):
        lo, hi = ends[i - 1], ends[i]
        ks = [k for k in kernels if lo <= k[0] < hi]
        if not ks:
            continue
        n_it += 1
        tot["iter"] += hi - lo
        busy = merged([(s, e) for s, e, _ in ks])
        tot["kernel"] += sum(e - s for s, e in busy)
        prev_end = lo
        for s, e, corr in ks:
            gap = s - prev_end
            if gap > 0:
                l = launch.get(corr)
                kind = "host" if l is not None and l > prev_end else "waited"
                tot["gap_" + kind] += gap
                tot["gap_%s_dtoh" % kind] += overlap(dtoh, prev_end, s)
                tot["gap_%s_htod" % kind] += overlap(htod, prev_end, s)
                tot["gap_%s_evictcall" % kind] += overlap(wev, prev_end, s)
            prev_end = max(prev_end, e)
        tot["tail"] += max(0, hi - prev_end)
        tot["dtoh_busy"] += overlap(dtoh, lo, hi)
        tot["htod_busy"] += overlap(htod, lo, hi)
        tot["dtoh_under_kernels"] += sum(overlap(dtoh, a, b) for a, b in busy)
        tot["evictcall"] += overlap(wev, lo, hi)
        tot["evictcall_under_kernels"] += sum(overlap(wev, a, b) for a, b in busy)
    print("%s: %d iterations, ms per iteration:" % (path, n_it))
    for k in ("iter", "kernel", "gap_host", "gap_host_dtoh", "gap_host_htod", "gap_host_evictcall",
              "gap_waited", "gap_waited_dtoh", "gap_waited_htod", "gap_waited_evictcall", "tail",
              "dtoh_busy", "dtoh_under_kernels", "htod_busy", "evictcall", "evictcall_under_kernels"):
        print("  %-24s %8.2f" % (k, tot[k] / max(n_it, 1) / 1e6))


main()
