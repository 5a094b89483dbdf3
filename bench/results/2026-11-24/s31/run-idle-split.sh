# Session 31: where an idle replay's remaining cost per launch goes once its launch callbacks are off.
# bench/launch_rate (host ns per kernel launch, 100,000 launches x 9 trials per run) plain; under this build's
# idle replay (the DLRM fixture's plan made for 80G, budget 8G); under a diagnostic build (diag.patch:
# build-lead/diag) without the residency sampler, without the UM counters, without those and the activity
# API, and without all three and with the CUPTI subscription ended instead of its callbacks disabled; and
# with libumreplay.so injected and preloaded but not started (no UMKIT_POLICY: it does nothing).
# ROUNDS (6) rounds, each starting one variant later.
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
B=build-lead/bin D=build-lead/diag/bin LR=build-lead/bench/launch_rate
$B/umplan tests/fixtures/h100_dlrm.db --capacity 80G -q -o $OUT/s/fixture.plan || exit 1
idle() { # BIN [ENV...]
	local bin=$1; shift
	env "$@" timeout 120 $bin/umreplay -q --plan $OUT/s/fixture.plan --gpu-budget 8G --max-managed 8G -- $LR
}
lr() { # VARIANT
	case $1 in
	plain) timeout 120 $LR ;;
	off) idle $B ;;
	nosampler) idle $D DIAG_NO_SAMPLER=1 ;;
	noum) idle $D DIAG_NO_UM=1 ;;
	noum-noact) idle $D DIAG_NO_UM=1 DIAG_NO_ACTIVITY=1 ;;
	nothing) idle $D DIAG_NO_UM=1 DIAG_NO_ACTIVITY=1 DIAG_NO_SAMPLER=1 DIAG_UNSUBSCRIBE=1 ;;
	loaded) env LD_PRELOAD=$PWD/build-lead/lib/libumreplay.so CUDA_INJECTION64_PATH=$PWD/build-lead/lib/libumreplay.so \
		timeout 120 $LR ;;
	esac
}
variants=(plain off nosampler noum noum-noact nothing loaded)
for r in $(seq ${ROUNDS:-6}); do
	for i in "${!variants[@]}"; do
		v=${variants[$(( (i + r - 1) % ${#variants[@]} ))]}
		echo "lr round $r $v $(lr $v 2>&1 | grep -E 'fastest|rror')"
	done
done | tee $OUT/s/launch_rate.txt
python3 - $OUT/s/launch_rate.txt <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"lr round (\d+) (\S+) fastest ([\d.]+) median ([\d.]+)", line)
    if m:
        runs.setdefault(m[2], []).append(float(m[4]))
plain = statistics.median(runs["plain"])
print("| variant | runs | median of run medians, ns per launch | min-max | over plain |\n| --- | ---: | ---: | --- | ---: |")
for v, xs in runs.items():
    med = statistics.median(xs)
    print(f"| {v} | {len(xs)} | {med:.0f} | {min(xs):.0f}-{max(xs):.0f} | {med - plain:+.0f} |")
PY
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
