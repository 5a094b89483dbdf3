#!/usr/bin/env python3
"""Where a replay's steady on-demand migrations came from, from a
diag.patch log (run-diag.sh, with --kernel-times).

Usage: fault-kinds.py LOG [--trace TRACE.db]

A fault is an HtoD record whose cause is coherence that started between the
first and the last iteration end. Each is classed by the state of its 2 MB
block then, from the replayer's copies the driver reported (which ran in
the replayer's stream order): on the host (evicted), being prefetched,
prefetched (and faulted anyway), or never copied; and by when the last
prefetch of the block before the fault was asked for (the CPU time its call
returned) against the faulting kernel's launch: after it, the launch could
not be ordered after that prefetch (the worker was behind the program).
Each fault is also charged to the kernel running on the GPU then (kernel
records carry the launch's correlation ID) and to the allocation that held
its address when that kernel was launched.
With --trace (the recording the plan was made from, whose allocations and
launches the run repeats in order, bar some execution IDs: checked), each
fault's kernel is also looked up in the recording: was its allocation among
the kernel's recorded pointer arguments?
"""
import argparse
import bisect
import collections
import sqlite3

BLOCK = 21  # 2 MB


def load(path):
    d = collections.defaultdict(list)
    d["calls"] = collections.defaultdict(list)   # block -> [(call's start, op, its return)]
    d["copies"] = collections.defaultdict(list)  # block -> [(start, end, kind, cause)]
    with open(path) as f:
        for line in f:
            p = line.split()
            if p[0] == "C":  # a driver call: t0 t1 op address bytes
                t0, t1, op, a, n = int(p[1]), int(p[2]), int(p[3]), int(p[4], 16), int(p[5])
                for b in range(a >> BLOCK, ((a + n - 1) >> BLOCK) + 1):
                    d["calls"][b].append((t0, op, t1))
            elif p[0] == "E":  # a CUPTI record: kind start end address bytes cause correlation
                kind, s, e, a, n, cause, corr = (int(p[1]), int(p[2]), int(p[3]), int(p[4], 16),
                                                 int(p[5]), int(p[6]), int(p[7]))
                if kind == 2:
                    d["kernels"].append((s, e, corr))
                elif kind in (0, 1):
                    for b in range(a >> BLOCK, ((a + max(n, 1) - 1) >> BLOCK) + 1):
                        d["copies"][b].append((s, e, kind, cause))
                    if kind == 0 and cause == 2:
                        d["faults"].append((s, a, n))
            elif p[0] == "L":  # a launch: t correlation exec_id matched lost iterations
                d["launches"].append((int(p[2]), int(p[3], 16), int(p[1])))
            elif p[0] == "A":  # an allocation: t address size id
                d["allocs"].append((int(p[1]), int(p[2], 16), int(p[3]), int(p[4])))
            elif p[0] == "I":
                d["ends"].append(int(p[1]))
    for v in list(d["calls"].values()) + list(d["copies"].values()):
        v.sort()
    d["kernels"].sort()
    return d


def classify(t, b, d, launched):
    """The block's state at the fault, from the copies the driver reported
    (they ran in the replayer's stream order), and when the last prefetch
    of it asked for before the fault was asked for, against the faulting
    kernel's launch (both CPU times)."""
    copies = [c for c in d["copies"].get(b, []) if c[3] == 1 and c[0] < t]
    if not copies:
        state = "no copy by the replayer before"
    elif copies[-1][2] == 1:
        state = "on the host (evicted)"
    elif copies[-1][1] > t:
        state = "being prefetched"
    else:
        state = "prefetched, faulted anyway"
    v = d["calls"].get(b, [])
    asked = [t1 for t0, op, t1 in v[:bisect.bisect_right(v, (t, 99))] if op in (0, 3)]
    if not asked:
        when = "never asked for before the fault"
    elif launched is None:
        when = "asked for (launch unknown)"
    else:
        when = "asked for " + ("after" if asked[-1] > launched else "before") + " the launch"
    return f"{state}; {when}"


def recorded(trace, d):
    """seq -> (name, set of alloc ids) from the recording, after checking
    that the run repeated its allocations and launches."""
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    sizes = dict(db.execute("SELECT id, size FROM alloc"))
    if any(sizes.get(aid) != size for _, _, size, aid in d["allocs"]):
        raise SystemExit(f"{trace}: its allocations differ from the run's")
    ids = [x & ((1 << 64) - 1) for (x,) in db.execute("SELECT exec_id FROM kernel ORDER BY seq")]
    run = [e for _, e, _ in d["launches"]]
    same = {seq for seq, (x, y) in enumerate(zip(ids, run)) if x == y}
    if len(ids) != len(run) or len(same) < 0.9 * len(ids):
        raise SystemExit(f"{trace}: its launches differ from the run's")
    print(f"{trace}: the run's {len(run)} launches, {len(run) - len(same)} with another execution ID "
          "(faults in those: not looked up)")
    args = collections.defaultdict(set)
    for seq, aid in db.execute("SELECT k.seq, a.alloc_id FROM kernel k JOIN kernel_arg a USING (correlation_id)"):
        args[seq].add(aid)
    names = dict(db.execute("SELECT k.seq, s.value FROM kernel k JOIN string s ON s.id = k.name_id"))
    return {seq: (names[seq], args[seq]) for seq in same}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--trace")
    a = ap.parse_args()
    d = load(a.log)
    lo, hi = d["ends"][0], d["ends"][-1]
    steady = [f for f in d["faults"] if lo <= f[0] < hi]
    seq_of = {corr: i for i, (corr, _, _) in enumerate(d["launches"])}
    starts = [k[0] for k in d["kernels"]]
    rec = recorded(a.trace, d) if a.trace else None
    classes = collections.Counter()
    owners = collections.defaultdict(collections.Counter)
    in_args = collections.Counter()
    by_kernel = collections.defaultdict(collections.Counter)
    for t, addr, n in steady:
        j = bisect.bisect_right(starts, t) - 1
        seq = seq_of.get(d["kernels"][j][2]) if j >= 0 else None
        launched = d["launches"][seq][2] if seq is not None else None
        c = classify(t, addr >> BLOCK, d, launched)
        classes[c] += 1
        # The program's thread runs ahead of the GPU and, on one stream,
        # gets a freed range back at once: what the kernel touches is what
        # the range held when it was launched.
        made = d["allocs"][:bisect.bisect_right(d["allocs"], (t if launched is None else launched, 1 << 64))]
        owner = next(((aid, size) for _, base, size, aid in reversed(made) if base <= addr < base + size), None)
        owners[c][owner] += 1
        if rec is not None and seq in rec:
            name, args = rec[seq]
            known = "in" if owner and owner[0] in args else "NOT in"
            in_args[known] += 1
            by_kernel[known][name[:72]] += 1
    print(f"steady on-demand migrations: {len(steady)} in {(hi - lo) / 1e6:.0f} ms "
          f"({len(d['ends']) - 1} iterations)")
    for c, k in classes.most_common():
        print(f"  {c:62} {k:6} ({100 * k / len(steady):4.1f} %), {len(owners[c])} allocations; most:")
        for owner, m in owners[c].most_common(3):
            print(f"      allocation {owner[0]} ({owner[1] / 1e6:.1f} MB): {m}" if owner else f"      none: {m}")
    for known, k in in_args.most_common():
        print(f"faults whose allocation is {known} the kernel's recorded arguments: {k}; kernels:")
        for name, m in by_kernel[known].most_common(4):
            print(f"  {m:6}  {name}")


if __name__ == "__main__":
    main()
