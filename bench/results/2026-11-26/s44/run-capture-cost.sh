# Session 44: what the replayer's capture questions cost a thread
# (bench/capture_cost.cu), plain and under umreplay, which attaches to
# CUPTI; three rounds, the order alternating. On the device machine:
#   bash bench/results/2026-11-26/s44/run-capture-cost.sh
mkdir -p $OUT/capture-cost
export LD_LIBRARY_PATH=$PWD/build/lib
for round in 1 2 3; do
	for how in plain umreplay; do
		[ $round = 2 ] && how=$([ $how = plain ] && echo umreplay || echo plain)
		if [ $how = plain ]; then
			build/bench/capture_cost
		else
			build/bin/umreplay --policy ondemand --max-managed 1G -- build/bench/capture_cost
		fi > $OUT/capture-cost/$round-$how.txt 2>&1
		echo "== round $round, $how"; cat $OUT/capture-cost/$round-$how.txt
	done
done
