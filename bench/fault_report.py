#!/usr/bin/env python3
"""Where a replay's remaining faults and lost launches came from.

Usage: bench/fault_report.py STATS.json [--plan PLAN] [--trace TRACE.db] [--umplan BIN]

Reads umreplay --stats' measured.fault_sources and measured.lost_kernels
(docs/replay.md). With --plan, each source also shows whether the plan keeps
it in host memory and the ops that name it (from umplan --dump); with
--trace, each lost execution ID shows how often the recording launched it
and the kernel's name (an ID the recording never saw is one whose launch
hashed differently in this run: docs/replay.md, "Stats JSON").
"""
import argparse
import collections
import json
import signal
import sqlite3
import subprocess
import sys


def plan_index(plan_path, umplan):
    try:
        r = subprocess.run([umplan, "--dump", plan_path], capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"{umplan}: cannot run it: {e.strerror} (--umplan names umplan)")
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        sys.exit(f"{plan_path}: umplan --dump failed (exit {r.returncode}): {last}")
    dump = json.loads(r.stdout)
    ops = collections.defaultdict(collections.Counter)
    for op in dump["ops"]:
        ops[op["alloc"]][op["kind"]] += 1
    return set(dump["host"]), ops


def kernel_of(db, exec_id):
    signed = exec_id - (1 << 64) if exec_id >= 1 << 63 else exec_id
    return db.execute("SELECT count(*), (SELECT value FROM string WHERE id = name_id) "
                      "FROM kernel WHERE exec_id = ?", (signed,)).fetchone()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("stats")
    p.add_argument("--plan")
    p.add_argument("--trace")
    p.add_argument("--umplan", default="build/bin/umplan")
    a = p.parse_args()
    try:
        with open(a.stats) as f:
            stats = json.load(f)
    except OSError as e:
        sys.exit(f"{a.stats}: {e.strerror}")
    except ValueError as e:
        sys.exit(f"{a.stats}: not JSON ({e})")
    if not isinstance(stats, dict) or stats.get("format") != "umkit-replay-stats" \
            or "measured" not in stats:
        sys.exit(f"{a.stats}: not umreplay --stats output")
    measured = stats["measured"]
    if measured is None:
        sys.exit(f"{a.stats}: no measured figures (the stats of a dry run): no faults to report")
    if "fault_sources" not in measured or "lost_kernels" not in measured:
        sys.exit(f"{a.stats}: no fault_sources or lost_kernels (the stats of an older umreplay)")
    host, ops = plan_index(a.plan, a.umplan) if a.plan else (set(), {})
    db = None
    if a.trace:
        try:
            db = sqlite3.connect(f"file:{a.trace}?mode=ro", uri=True)
            db.execute("SELECT 1 FROM kernel, string LIMIT 1").fetchall()
        except sqlite3.Error as e:
            sys.exit(f"{a.trace}: not a trace umrec wrote ({e})")

    fs = measured["fault_sources"]
    print(f"on-demand migrations in the steady iterations: {fs['migrations']} "
          f"({fs['unattributed']} unattributed) from {fs['sources']} allocations")
    if fs.get("by_launch") or (measured.get("kernel_times") and "by_launch" in fs):
        print(f"charged as of their kernel's launch: {fs['by_launch']} "
              f"({fs['owner_changed']} whose range had a new owner by the migration)")
    else:
        why = "run without --kernel-times" if "by_launch" in fs else "stats of a build before by_launch"
        print(f"charged as of each migration's start ({why}): "
              "a one-stream program's early reuse goes to the next owner")
    print("origin      ordinal  size MB  migrations  MB moved  plan_alloc" +
          ("  host  plan ops" if a.plan else ""))
    for s in fs["top"]:
        line = (f"{s['origin']:<10} {s['ordinal']:>8} {s['size'] / 1e6:>8.1f} {s['migrations']:>11} "
                f"{s['bytes'] / 1e6:>9.1f}  {str(s['plan_alloc']):>10}")
        if a.plan:
            named = dict(ops.get(s["plan_alloc"], {}))
            line += f"  {'yes' if s['plan_alloc'] in host else 'no':>4}  {named or 'none'}"
        print(line)

    lk = measured["lost_kernels"]
    print(f"\nlaunches lost in the steady iterations: {lk['launches']} ({lk['distinct']} execution IDs)")
    for k in lk["top"]:
        line = f"{k['exec_id']}  {k['launches']:>6}"
        if db:
            n, name = kernel_of(db, int(k["exec_id"], 16))
            line += f"  recorded {n:>5}  {(name or '(never recorded)')[:100]}"
        print(line)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under | head
    main()
