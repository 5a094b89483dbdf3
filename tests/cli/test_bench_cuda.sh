#!/usr/bin/env bash
# Command-line tests for the CUDA benchmark programs (bench/*.cu, built by
# make bench with nvcc) without a GPU: their arguments (bench/trials.h's
# COUNT and TRIALS, async_alloc_rate's SIZE) and a failed CUDA call, which
# each names with the program (CUDA_VISIBLE_DEVICES hides any GPU).
source "$(dirname "$0")/lib.sh"
BENCH=$(realpath "$BIN/../bench")
export CUDA_VISIBLE_DEVICES=

for p in launch_rate async_alloc_rate capture_cost um_call_rate gather_rate; do
	prog=$BENCH/$p
	if [ ! -x "$prog" ]; then
		status=-; out=; err=; not_ok "$p is built (make bench needs nvcc)"
		continue
	fi
	run "$prog" 0
	expect_status 64 "$p: a COUNT of 0 is a usage error"
	expect_err_has "usage: $p [" "$p: its usage is printed"
	run "$prog" 10 1001
	expect_status 64 "$p: more than 1000 trials are a usage error"
	run "$prog" 10 0
	expect_status 64 "$p: no trials are a usage error"
	run "$prog" 10 1 1 1
	expect_status 64 "$p: too many arguments are a usage error"
	run "$prog" 10 1
	expect_status 1 "$p: no GPU fails"
	expect_err_has "$p: " "$p: the failure names the program"
done
run "$BENCH/async_alloc_rate" 10 1 0
expect_status 64 "async_alloc_rate: a SIZE of 0 is a usage error"
run "$BENCH/um_call_rate" 10 1
expect_err_has "um_call_rate: cudaGetDevice: " "um_call_rate: the failed call is named"
finish
