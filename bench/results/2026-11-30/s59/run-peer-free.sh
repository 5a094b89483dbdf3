#!/usr/bin/env bash
# Session 59, two H200s: the devices section on this build, then
# tests/gpu/streams_probe under both tools of this build (build/) and of
# the session's starting build, 5cce6da (carry/old: bin and libraries),
# three rounds, to show the peer free case before and after 1a5b31f.
OUT=${1:?usage: run-peer-free.sh OUT}
mkdir -p "$OUT"
SECTIONS=devices bash tests/gpu/run.sh "$OUT/dev" >"$OUT/dev.log" 2>&1
for round in 1 2 3; do
	for b in old new; do
		bin=build/bin
		[ $b = old ] && bin=carry/old/bin
		timeout 60 $bin/umrec -q -o "$OUT/$b.$round.db" --max-managed 8G -- build/gpu-probes/streams_probe \
			>"$OUT/$b.$round.umrec" 2>"$OUT/$b.$round.umrec.err"
		timeout 60 $bin/umreplay -q --policy ondemand --max-managed 8G -- build/gpu-probes/streams_probe \
			>"$OUT/$b.$round.umreplay" 2>"$OUT/$b.$round.umreplay.err"
		rm -f "$OUT/$b.$round.db"
	done
done
for f in "$OUT"/*.umrec "$OUT"/*.umreplay; do
	printf '%-22s %s | %s\n' "$(basename "$f")" "$(grep '^peer free' "$f")" "$(grep '^peer free' "$f.err")"
done
tail -n 25 "$OUT/dev.log"
