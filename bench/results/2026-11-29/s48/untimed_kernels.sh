# Session 48: kernels umrec recorded without GPU times, on the session's
# starting build (dba0786, carried as build/old/: a forced CUPTI flush
# every 500 ms) and on the build carried as build/ (a default flush, 1 MiB
# buffers, a synchronize before the forced flush at exit), in one command,
# the builds alternating:
#   bash bench/results/2026-11-29/s48/untimed_kernels.sh
export LD_LIBRARY_PATH=$PWD/build/lib
W=$(mktemp -d)
untimed() { python3 -c 'import sqlite3, sys; print("%d kernels, %d NULL, %d at 0" % sqlite3.connect(sys.argv[1]).execute("SELECT count(*), sum(start_ns IS NULL), sum(start_ns = 0) FROM kernel").fetchone())' "$1"; }
echo "build $(cat build/COMMIT)"
for round in 1; do
	for b in old new; do
		bin=build/bin
		[ $b = old ] && bin=build/old/bin
		for m in "bert.py --seq-len 128 --steps 5 --nvtx --batch-size 8" "dlrm.py --rows 200000 --steps 5 --nvtx --batch-size 4096"; do
			name=${m%%.py*}
			t0=$(date +%s.%N)
			timeout 300 $bin/umrec -q -o $W/$name.$b.db --max-managed 32G -- python3 examples/pytorch/$m >$W/out 2>&1
			rc=$?
			echo "round $round $b $name: exit $rc, $(untimed $W/$name.$b.db), $(python3 -c "import time; print(round(time.time() - $t0, 1))") s; $(grep -c '^step' $W/out) steps"
		done
	done
done
# A recording killed mid-run still has the kernels' times up to near the kill.
timeout 300 build/bin/umrec -q -o $W/kill.db --max-managed 32G -- python3 examples/pytorch/bert.py --seq-len 128 --steps 40 --batch-size 8 >$W/kill.out 2>&1 &
sleep 25
pkill -KILL -f '^python3 examples/pytorch/bert.py'
wait
echo "killed bert: $(untimed $W/kill.db); steps printed $(grep -c '^step' $W/kill.out); status $(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT value FROM meta WHERE key = ?", ("status",)).fetchone())' $W/kill.db)"
