#!/usr/bin/env bash
# Session 62: tests/gpu/green_probe.cu plain and under the tools of two
# builds (build-old: the session's start, 713e39b; build: with green
# contexts as their device's). Usage: green-diag.sh OUTDIR
out=$1
mkdir -p "$out"
probe=build/gpu-probes/green_probe
timeout 60 $probe >"$out/plain.out" 2>&1; echo "plain rc $?" >>"$out/plain.out"
for b in build-old build; do
	timeout 60 $b/bin/umrec -q -o "$out/$b.db" --max-managed 2G -- $probe >"$out/$b.umrec.out" 2>&1
	echo "rc $?" >>"$out/$b.umrec.out"
	timeout 60 $b/bin/umreplay -q --policy ondemand --stats "$out/$b.json" --max-managed 2G -- $probe \
		>"$out/$b.umreplay.out" 2>&1
	echo "rc $?" >>"$out/$b.umreplay.out"
	python3 - "$out/$b.db" <<'PY' >>"$out/$b.umrec.out" 2>&1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("meta", dict(db.execute("SELECT key, value FROM meta WHERE key IN ('arena_context_id', 'status')").fetchall()))
print("allocs", db.execute("SELECT api, size FROM alloc").fetchall())
print("kernels", db.execute("SELECT n.value, s.context_id, k.exec_id FROM kernel k LEFT JOIN stream s ON s.id = k.stream_id "
                            "JOIN string n ON n.id = k.name_id").fetchall())
PY
	python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["measured"]; print("other_context_launches", m["other_context_launches"], "failed", m["failed_driver_calls"], "allocs", m["host"]["allocator"])' "$out/$b.json" >>"$out/$b.umreplay.out" 2>&1
done
for f in "$out"/*.out; do echo "== $f"; cat "$f"; done
