/*
 * probe_check.h: what the GPU checks' CUDA probes (tests/gpu's .cu files) share:
 * CHECK(call), which prints the failed call and its error and exits 2, so
 * that a probe's own set-up failing is never read as the case it tests
 * (CHECK_CU for the driver's calls);
 * and sleep_200ms, a host function that holds a stream up, so that work
 * queued behind it is still pending when the probe frees its memory.
 */
#ifndef UMKIT_PROBE_CHECK_H
#define UMKIT_PROBE_CHECK_H

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                  \
	do {                                                                         \
		cudaError_t e_ = (call);                                             \
		if (e_ != cudaSuccess) {                                             \
			printf("%s failed: %s\n", #call, cudaGetErrorName(e_));       \
			exit(2);                                                     \
		}                                                                    \
	} while (0)

#define CHECK_CU(call)                                                               \
	do {                                                                         \
		CUresult r_ = (call);                                                \
		if (r_ != CUDA_SUCCESS) {                                            \
			const char *name_ = "?";                                     \
			cuGetErrorName(r_, &name_);                                  \
			printf("%s failed: %s\n", #call, name_);                     \
			exit(2);                                                     \
		}                                                                    \
	} while (0)

static inline void CUDART_CB sleep_200ms(void *)
{
	usleep(200000);
}

#endif
