#!/usr/bin/env bash
# Session 61: the GPU checks on the build carried as build/, on one H200, in
# device commands (the devices section, which needs a machine with two GPUs,
# not run this session), through session 46's script:
#   bash bench/results/2026-11-30/s61/run-checks.sh "record graphs demo"
#   bash bench/results/2026-11-30/s61/run-checks.sh "reset replay"
# With AB=1, first the two probes of the session's recorder and arena
# fixes under the build before them (build-old, f767c63) and this one:
# a forked child's CUDA calls (tests/gpu/fork_probe.cu) and NVTX ranges
# named by wide strings (tests/gpu/nvtx_probe.cu). The first command, on
# 31a4127, ran them with "record" (no AB); the second with AB=1 (the
# NVTX probe changed between them). 3162fb6 removed the NVTX probe
# (nvtx-wide-diag.log says why): the last command ran "record graphs
# demo" on the session's last build, the fork probe beside f767c63 again.
sections=$1
export LD_LIBRARY_PATH=$PWD/build/lib
if [[ " $sections " == *" record "* || ${AB:-} = 1 ]]; then
	P=build/gpu-probes W=$(mktemp -d)
	{
		echo "plain: $(timeout 60 $P/fork_probe | grep '^child')"
		for b in build-old build; do
			echo "$b umrec:    $(timeout 60 $b/bin/umrec -q -o $W/f.db --max-managed 8G -- $P/fork_probe | grep '^child')"
			echo "$b umreplay: $(timeout 60 $b/bin/umreplay -q --policy ondemand --max-managed 8G -- $P/fork_probe | grep '^child')"
			[ -x $P/nvtx_probe ] || continue
			timeout 60 $b/bin/umrec -q -o $W/n.db --max-managed 8G -- $P/nvtx_probe >/dev/null
			echo "$b nvtx ranges: $(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT group_concat(s.value || \" \" || (r.end_ns - r.start_ns), \"; \") FROM nvtx_range r JOIN string s ON s.id = r.name_id").fetchone()[0])' $W/n.db)"
		done
	} > $OUT/ab-probes.log 2>&1
	cat $OUT/ab-probes.log
	rm -rf "$W"
fi
bash bench/results/2026-11-29/s46/run-gpu-checks.sh "$sections"
