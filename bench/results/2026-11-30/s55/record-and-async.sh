# Session 55: the record section of tests/gpu/run.sh, then PyTorch on its
# cudaMallocAsync allocator (the graphs section's row "graphs: PyTorch on
# cudaMallocAsync", by hand: the whole section did not fit the device time
# left) plain and under umrec, with the trace's cudaMallocAsync rows and
# how many name their stream.
#   bash bench/results/2026-11-30/s55/record-and-async.sh
SECTIONS=record bash tests/gpu/run.sh $OUT/rec > $OUT/rec.log 2>&1
echo "record section rc=$?"
grep -E '^gpu: ' $OUT/rec.log
A=(env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python3 examples/pytorch/mlp.py --steps 6 --cuda-graph)
"${A[@]}" > $OUT/async.plain 2>&1
build/bin/umrec -o /tmp/async.db --framework-cache --max-managed 8G -- "${A[@]}" > $OUT/async.umrec 2> $OUT/async.umrec.err
echo "umrec rc=$?"
if diff <(grep -E '^(checksum|step) ' $OUT/async.plain) <(grep -E '^(checksum|step) ' $OUT/async.umrec) > /dev/null; then
	echo "async: same losses and checksum"
else
	echo "async: outputs differ"
fi
python3 -c 'import sqlite3, sys; print("cudaMallocAsync rows, with their stream:", *sqlite3.connect(sys.argv[1]).execute("SELECT count(*), count(stream_id) FROM alloc WHERE api = ?", ("cudaMallocAsync",)).fetchone())' /tmp/async.db
