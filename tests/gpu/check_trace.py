#!/usr/bin/env python3
"""Measure a recorded trace for tests/gpu/run.sh: prints one JSON object.

Runs on the GPU machine, where the sqlite3 CLI is not assumed but Python's
sqlite3 module is. Every figure is computed from the trace alone.
"""
import json
import sqlite3
import sys


def one(db, sql):
    return db.execute(sql).fetchone()[0]


def recall(db):
    """Share of the 2 MB blocks that migrated on demand (HtoD, cause 'fault')
    which lie in the argument-based access set of the kernel that was running
    when the migration started (the kernel that faulted)."""
    rows = db.execute("""
        SELECT m.address >> 21 AS block,
               (SELECT k.correlation_id FROM kernel k
                 WHERE k.start_ns <= m.start_ns ORDER BY k.start_ns DESC LIMIT 1) AS cid
        FROM migration m WHERE m.cause = 'fault' AND m.direction = 'htod'""").fetchall()
    blocks, covered = set(), set()
    for block, cid in rows:
        blocks.add(block)
        hit = cid is not None and db.execute(
            "SELECT 1 FROM kernel_access WHERE correlation_id = ? AND ? BETWEEN first_block AND last_block",
            (cid, block)).fetchone()
        if hit:
            covered.add(block)
    return len(blocks), len(covered)


def main(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    fault_blocks, covered = recall(db)
    graphs = one(db, "SELECT count(*) FROM sqlite_master WHERE name = 'graph_kernel'")  # version 2 on
    dsts = one(db, "SELECT count(*) FROM sqlite_master WHERE name = 'write_dst'")  # version 3 on
    writes = ("SELECT correlation_id FROM memcpy WHERE kind NOT IN ('dtoh', 'htoh') "
              "UNION ALL SELECT correlation_id FROM memset")
    out = {
        "integrity": one(db, "PRAGMA integrity_check"),
        "status": one(db, "SELECT value FROM meta WHERE key = 'status'"),
        "kernels": one(db, "SELECT count(*) FROM kernel"),
        "launches": one(db, "SELECT count(*) FROM kernel WHERE seq IS NOT NULL"),
        # Launches numbered but with no row: each takes the next seq, so a
        # launch whose callback row and kernel record were both lost shows
        # only here.
        "seq_gaps": one(db, "SELECT coalesce(max(seq) + 1 - count(DISTINCT seq), 0) FROM kernel"),
        "executed": one(db, "SELECT count(*) FROM kernel WHERE start_ns IS NOT NULL"),
        "threads": one(db, "SELECT count(DISTINCT thread_id) FROM kernel"),
        "kernel_args": one(db, "SELECT count(*) FROM kernel_arg"),
        "max_launch_args": one(db, "SELECT coalesce(max(n), 0) FROM "
                                   "(SELECT count(*) AS n FROM kernel_arg GROUP BY correlation_id)"),
        "allocs": one(db, "SELECT count(*) FROM alloc"),
        "allocs_unaccounted": one(db, "SELECT count(*) FROM alloc WHERE free_ns IS NULL AND live_at_exit = 0"),
        "migrations": one(db, "SELECT count(*) FROM migration"),
        "fault_migrations": one(db, "SELECT count(*) FROM migration WHERE cause = 'fault'"),
        "fault_records": one(db, "SELECT count(*) FROM fault"),
        "nvtx_ranges": one(db, "SELECT count(*) FROM nvtx_range"),
        "fault_blocks": fault_blocks,
        "fault_blocks_covered": covered,
        "recall": (covered / fault_blocks) if fault_blocks else None,
        "device": one(db, "SELECT value FROM meta WHERE key = 'device_name'"),
        "framework_cache": one(db, "SELECT coalesce((SELECT value FROM meta "
                                   "WHERE key = 'framework_cache'), 'absent')"),
        "graph_kernels": one(db, "SELECT count(*) FROM graph_kernel") if graphs else None,
        "graph_launches": one(db, "SELECT count(DISTINCT correlation_id) FROM graph_kernel") if graphs else None,
        "captured_launches": int(one(db, "SELECT coalesce((SELECT value FROM meta "
                                         "WHERE key = 'captured_launches'), 0)")),
        # Copies into device memory and memsets, and those whose
        # destination the trace gives (write_dst), in an allocation or not.
        "writes": one(db, f"SELECT count(*) FROM ({writes})"),
        "writes_with_dst": one(db, f"SELECT count(*) FROM ({writes}) w JOIN write_dst d "
                                   "ON d.correlation_id = w.correlation_id") if dsts else None,
        "writes_into_allocs": one(db, f"SELECT count(*) FROM ({writes}) w JOIN write_dst d "
                                      "ON d.correlation_id = w.correlation_id "
                                      "WHERE d.alloc_id IS NOT NULL") if dsts else None,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
