#!/usr/bin/env bash
# test_exports.sh: what the injected libraries show the program they are
# preloaded into (common/cuda/exports.map): the entry point the driver
# calls and the CUDA runtime and CUPTI functions they stand in for, and
# nothing of umkit's own, which would take the place of a namesake
# anywhere in the program.
source "$(dirname "$0")/lib.sh"
LIB=${UMKIT_BUILD:-build}/lib

for so in libumrec.so libumreplay.so; do
	if ! run nm -D --defined-only "$LIB/$so"; then
		not_ok "$so: its dynamic symbols can be listed"
		continue
	fi
	names=$(awk 'NF == 3 { print $3 }' <<<"$out")
	for want in InitializeInjection cudaMalloc cudaFree cudaFreeAsync cudaMallocManaged cuptiSubscribe; do
		grep -qx -- "$want" <<<"$names" && ok "$so exports $want" || not_ok "$so exports $want"
	done
	others=$(grep -vxE 'InitializeInjection|cuda[A-Z][A-Za-z0-9_]*|cupti[A-Z][A-Za-z0-9_]*' <<<"$names" | tr '\n' ' ')
	[ -z "$others" ] && ok "$so exports nothing of umkit's own" || not_ok "$so exports nothing of umkit's own (got: $others)"
done
finish
