# Session 47: capture_free_probe's new case realloc-busy (the freed
# buffer's last reader still waiting on another stream when a capture's
# free and reallocation come), plain and under the three tools, on each
# kind of stream; with this build and with a mutant one whose fences never
# wait (event_done always true, event_wait a no-op: build/mutant), which
# the case must catch under umrec and an attached replay.
#   bash bench/results/2026-11-29/s47/realloc_busy.sh
export LD_LIBRARY_PATH=$PWD/build/lib
CF=build/gpu-probes/capture_free_probe
W=$OUT/realloc-busy; mkdir -p $W
timeout 60 build/bin/umrec -q -o $W/cf.db --max-managed 8G -- $CF free >/dev/null 2>&1
build/bin/umplan -q $W/cf.db --capacity 64G -o $W/cf.idle.plan
for b in build build/mutant; do
	for stream in non-blocking blocking per-thread; do
		PROBE_STREAM=$stream timeout 60 $CF realloc-busy >$W/plain.out 2>&1
		line="$b $stream: plain $(tail -1 $W/plain.out)"
		for tool in umrec attached idle; do
			case $tool in
			umrec) run=($b/bin/umrec -q -o $W/t.db --max-managed 8G --) ;;
			attached) run=($b/bin/umreplay -q --policy ideal --max-managed 8G --stats $W/st.json --) ;;
			idle) run=($b/bin/umreplay -q --plan $W/cf.idle.plan --max-managed 8G --stats $W/st.json --) ;;
			esac
			rm -f $W/st.json
			PROBE_STREAM=$stream timeout 60 "${run[@]}" $CF realloc-busy >$W/t.out 2>&1
			same=$(cmp -s <(grep -E 'sum|^capture' $W/plain.out) <(grep -E 'sum|^capture' $W/t.out) && echo same || echo DIFF)
			st=$(grep -o -E '"fence_(waits|refusals)": *[0-9]+' $W/st.json 2>/dev/null | tr -d '" ' | tr '\n' ' ')
			line+="; $tool $same $(tail -1 $W/t.out) $st"
		done
		echo "$line"
	done
done
rm -f $W/*.db
