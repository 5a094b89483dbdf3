# Session 48: PyTorch on its cudaMallocAsync allocator under umrec (as the
# GPU check "graphs: PyTorch on cudaMallocAsync" runs it): how many of the
# trace's cudaMallocAsync rows name their stream, on the build carried as
# build/ and on the session's starting build (build/old/):
#   bash bench/results/2026-11-29/s48/async_stream.sh
export LD_LIBRARY_PATH=$PWD/build/lib
W=$(mktemp -d)
echo "build $(cat build/COMMIT)"
for b in old new; do
	bin=build/bin
	[ $b = old ] && bin=build/old/bin
	env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync $bin/umrec -q -o $W/$b.db --max-managed 8G -- \
		python3 examples/pytorch/mlp.py --steps 6 --cuda-graph >$W/$b.out 2>&1
	echo "$b: exit $?, $(grep -c '^step' $W/$b.out) steps; cudaMallocAsync rows, with a stream: $(python3 -c 'import sqlite3, sys; print(*sqlite3.connect(sys.argv[1]).execute("SELECT count(*), count(stream_id) FROM alloc WHERE api = ?", ("cudaMallocAsync",)).fetchone())' $W/$b.db); stream ids $(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT group_concat(DISTINCT stream_id) FROM alloc").fetchone()[0])' $W/$b.db)"
done
