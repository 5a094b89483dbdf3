#!/usr/bin/env bash
# test_exports.sh: what the injected libraries show the program they are
# preloaded into (common/cuda/exports.map): the entry point the driver
# calls and the CUDA runtime and CUPTI functions they stand in for, and
# nothing of umkit's own, which would take the place of a namesake
# anywhere in the program.
source "$(dirname "$0")/lib.sh"
LIB=${UMKIT_BUILD:-build}/lib

# Exactly these: a new stand-in is added here on purpose, and nothing
# else of the libraries' (a helper named cuda... included) gets out.
WANT="InitializeInjection
cudaDeviceReset cudaFree cudaFreeAsync cudaFreeAsync_ptsz cudaMalloc cudaMalloc3D cudaMallocAsync
cudaMallocAsync_ptsz cudaMallocFromPoolAsync cudaMallocFromPoolAsync_ptsz cudaMallocManaged
cudaMallocPitch cudaMemPoolCreate cudaMemPoolDestroy cudaMemPoolSetAccess cudaStreamAttachMemAsync
cudaStreamAttachMemAsync_ptsz
cuptiActivityConfigureUnifiedMemoryCounter cuptiActivityDisable cuptiActivityDisableContext
cuptiActivityEnable cuptiActivityEnableContext cuptiActivityEnableHWTrace cuptiActivityFlushPeriod
cuptiActivityRegisterCallbacks cuptiActivityRegisterTimestampCallback cuptiFinalize cuptiSubscribe
cuptiUnsubscribe"
want=$(tr ' ' '\n' <<<"$WANT" | sort)
for so in libumrec.so libumreplay.so; do
	# run keeps nm's status in $status (its own is always 0).
	run nm -D --defined-only "$LIB/$so"
	if [ "$status" -ne 0 ]; then
		not_ok "$so: its dynamic symbols can be listed"
		continue
	fi
	got=$(awk 'NF == 3 { print $3 }' <<<"$out" | sort)
	if [ "$got" = "$want" ]; then
		ok "$so exports the entry point and its stand-ins, nothing else"
	else
		not_ok "$so exports the entry point and its stand-ins, nothing else ($(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' '))"
	fi
done
finish
