# Session 48: a recording whose program is killed (SIGKILL, after 20 s of
# BERT-large steps): how many of its kernels have no GPU times, on the
# session's starting build (build/old/, a forced flush every 500 ms) and on
# the build carried as build/ (a default flush, 1 MiB buffers):
#   bash bench/results/2026-11-29/s48/killed_times.sh
export LD_LIBRARY_PATH=$PWD/build/lib
W=$(mktemp -d)
untimed() { python3 -c 'import sqlite3, sys; print("%d kernels, %d NULL, %d at 0" % sqlite3.connect(sys.argv[1]).execute("SELECT count(*), sum(start_ns IS NULL), sum(start_ns = 0) FROM kernel").fetchone())' "$1"; }
echo "build $(cat build/COMMIT)"
for b in old new old new; do
	bin=build/bin
	[ $b = old ] && bin=build/old/bin
	rm -f $W/kill.db
	timeout 120 $bin/umrec -q -o $W/kill.db --max-managed 32G -- python3 examples/pytorch/bert.py --seq-len 128 --steps 400 --batch-size 8 >$W/kill.out 2>&1 &
	sleep 20
	pkill -KILL -f '^python3 examples/pytorch/bert.py'
	wait
	echo "$b: $(untimed $W/kill.db); steps printed $(grep -c '^step' $W/kill.out)"
done
