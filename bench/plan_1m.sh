#!/usr/bin/env bash
# Planner scaling benchmark: generates a synthetic trace of about 1,000,000
# kernel executions (plan/synth.h: 250 layers, 1000 iterations, ~1001 kernels
# each) and times `umplan` on it with /usr/bin/time -v (wall time and max
# RSS). The target is at most 10 s (issue 3). Prints one summary line for
# docs/benchmarks.md and exits 1 when the target is missed.
#
# usage: bench/plan_1m.sh [BUILD]   (default build folder: build)
#   KEEP=1 keeps the scratch folder; LAYERS / ITERATIONS change the shape;
#   CAPACITY (default 12G, half the trace's unplanned peak) makes the
#   scheduler evict, so the benchmark covers the whole pipeline.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
layers=${LAYERS:-250}
iterations=${ITERATIONS:-1000}
capacity=${CAPACITY:-12G}
limit_s=10
cd "$root"
make -s BUILD="$build" "$build/bin/umplan" "$build/lib/libumkit_plan.a" "$build/lib/libumkit_common.a"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/umkit-bench-XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$scratch"' EXIT

# The generator: a few lines over plan/synth.h, built against the libraries.
cat >"$scratch/gen.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include "plan/synth.h"
int main(int argc, char **argv)
{
	struct synth_params p;
	char err[512];
	synth_defaults(&p);
	p.layers = (uint32_t)atoi(argv[2]);
	p.iterations = (uint32_t)atoi(argv[3]);
	p.device_memory = 80ULL << 30;
	if (synth_write(argv[1], &p, err, sizeof err)) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("%llu\n", (unsigned long long)synth_kernel_count(&p));
	return 0;
}
EOF
cc -std=c11 -O2 -Icommon -I. -o "$scratch/gen" "$scratch/gen.c" \
	"$build/lib/libumkit_plan.a" "$build/lib/libumkit_common.a" -lsqlite3 -lzstd -lm -ldl -pthread

trace=$scratch/trace-1m.db
gen_start=$(date +%s.%N)
kernels=$("$scratch/gen" "$trace" "$layers" "$iterations")
gen_s=$(awk -v a="$gen_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
size=$(du -h "$trace" | cut -f1)
echo "generated $trace: $kernels kernels, $size, in ${gen_s}s"

/usr/bin/time -v "$build/bin/umplan" "$trace" -o "$scratch/plan.bin" --capacity "$capacity" \
	2>"$scratch/time.txt"
grep -E "wrote" "$scratch/time.txt" || true
wall=$(grep -F "Elapsed (wall clock)" "$scratch/time.txt" | awk '{print $NF}')
rss_kb=$(grep -F "Maximum resident set size" "$scratch/time.txt" | awk '{print $NF}')
user=$(grep -F "User time" "$scratch/time.txt" | awk '{print $NF}')
sys=$(grep -F "System time" "$scratch/time.txt" | awk '{print $NF}')
# m:ss.ss or h:mm:ss to seconds.
secs=$(awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }' <<<"$wall")
plan_size=$(stat -c %s "$scratch/plan.bin")
printf '%s | %s kernels, capacity %s | umplan %.2f s wall (user %s s, sys %s s) | max RSS %d MiB | plan %d KiB | %s, %s cores\n' \
	"$(date -u +%Y-%m-%d)" "$kernels" "$capacity" "$secs" "$user" "$sys" $((rss_kb / 1024)) $((plan_size / 1024)) \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" "$(nproc)"
if awk -v s="$secs" -v l="$limit_s" 'BEGIN { exit !(s > l) }'; then
	echo "FAILED: ${secs}s is above the ${limit_s}s target" >&2
	exit 1
fi
