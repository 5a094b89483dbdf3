# Session 48: fence_probe relaxed-churn (a thread in relaxed capture mode
# that never captures: 160 rounds of 64 MiB allocated, read on a
# non-blocking stream and freed) under an 8G cap, plain and under each
# tool, on the build carried as build/ and, under an idle replay, on the
# session's starting build (dba0786) carried as build/old/:
#   bash bench/results/2026-11-29/s48/relaxed_churn.sh
export LD_LIBRARY_PATH=$PWD/build/lib
P=build/gpu-probes/fence_probe
W=$(mktemp -d)
timeout 60 build/bin/umrec -q -o $W/rec.db --max-managed 8G -- $P two-threads >/dev/null 2>&1
build/bin/umplan -q $W/rec.db --capacity 64G -o $W/idle.plan
echo "build $(cat build/COMMIT); idle plan $(stat -c %s $W/idle.plan) bytes"
echo "plain: $(timeout 120 $P relaxed-churn | tail -1)"
echo "umrec: $(timeout 120 build/bin/umrec -q -o $W/t.db --max-managed 8G -- $P relaxed-churn | tail -1)"
echo "attached ondemand: $(timeout 120 build/bin/umreplay -q --policy ondemand --max-managed 8G -- $P relaxed-churn | tail -1)"
for b in old new; do
	bin=build/bin
	[ $b = old ] && bin=build/old/bin
	UMKIT_LOG=debug timeout 120 $bin/umreplay --plan $W/idle.plan --max-managed 8G --stats $W/$b.json -- \
		$P relaxed-churn >$W/$b.out 2>$W/$b.err
	echo "idle replay, $b build: exit $?; $(tail -1 $W/$b.out)"
	echo "  last-resort debug lines: $(grep -c 'last resort' $W/$b.err); idle: $(grep -c 'following its kernel launches' $W/$b.err) wakes"
	python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["measured"]["host"]["allocator"]; print("  allocator:", {k: a.get(k) for k in ("allocs", "frees", "fence_waits", "fence_refusals", "last_resort_waits")})' $W/$b.json
	grep -m3 -E 'umkit|umreplay' $W/$b.err | grep -v debug | sed 's/^/  /'
done
