#!/usr/bin/env bash
# Recording overhead: each PyTorch example's time per step, plain and under
# umrec, in one run on one machine. Four variants per model, each the median
# of REPS runs (time_per_step_ms is the script's own mean over the steps
# after the first):
#   plain          the script alone (PyTorch's caching allocator on)
#   plain-uncached the script with PYTORCH_NO_CUDA_MEMORY_CACHING=1, what
#                  umrec runs by default so every tensor is seen
#   umrec          umrec with its defaults
#   umrec-cache    umrec --framework-cache (allocator cache kept)
# Usage, on the GPU machine from the repo root with the build present:
#   BUILD=build [MODELS="mlp gpt2 resnet"] bash bench/record_overhead.sh [STEPS] [REPS] > overhead.csv
set -uo pipefail
BUILD=${BUILD:-build}
STEPS=${1:-30}
REPS=${2:-3}
MAXM=16G
work=$(mktemp -d)

step_ms() { grep -m1 '^time_per_step_ms ' "$1" | awk '{print $2}'; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : "nan")}'; }

run_variant() { # model variant -> prints the median step time
	local model=$1 variant=$2 t
	for r in $(seq "$REPS"); do
		local cmd=(python3 examples/pytorch/$model.py --steps "$STEPS")
		case $variant in
		plain) "${cmd[@]}" >"$work/out" 2>/dev/null ;;
		plain-uncached) PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${cmd[@]}" >"$work/out" 2>/dev/null ;;
		umrec) "$BUILD/bin/umrec" -q -o "$work/t.db" --max-managed $MAXM -- "${cmd[@]}" >"$work/out" 2>/dev/null ;;
		umrec-cache) "$BUILD/bin/umrec" -q -o "$work/t.db" --max-managed $MAXM --framework-cache -- "${cmd[@]}" >"$work/out" 2>/dev/null ;;
		esac
		step_ms "$work/out"
	done | median
}

echo "model,steps,plain_ms,plain_uncached_ms,umrec_ms,umrec_cache_ms,umrec_over_plain,umrec_over_uncached"
for model in ${MODELS:-mlp gpt2 resnet}; do
	p=$(run_variant $model plain)
	u=$(run_variant $model plain-uncached)
	r=$(run_variant $model umrec)
	c=$(run_variant $model umrec-cache)
	awk -v m=$model -v s=$STEPS -v p=$p -v u=$u -v r=$r -v c=$c \
		'BEGIN {printf "%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", m, s, p, u, r, c, r/p, r/u}'
done
rm -rf "$work"
