/*
 * probe_buffers.h: the buffers the capture probes (tests/gpu/capture_*.cu)
 * work over: a kernel that changes every word of a buffer, so that a step
 * run twice, skipped or run on the wrong memory shows in the buffer's sum,
 * and that sum, read back to the host.
 */
#ifndef UMKIT_PROBE_BUFFERS_H
#define UMKIT_PROBE_BUFFERS_H

#include "probe_check.h"

static const size_t PROBE_BUFFER_BYTES = 64 << 20;
static const size_t PROBE_BUFFER_WORDS = PROBE_BUFFER_BYTES / sizeof(unsigned);

__global__ void bump(unsigned *p, size_t n, unsigned by)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = p[i] * 3 + by;
}

static inline void bump_on(cudaStream_t s, unsigned *p, unsigned by)
{
	bump<<<256, 256, 0, s>>>(p, PROBE_BUFFER_WORDS, by);
}

static unsigned long long buffer_sum(const unsigned *d)
{
	static unsigned h[PROBE_BUFFER_WORDS];
	CHECK(cudaMemcpy(h, d, PROBE_BUFFER_BYTES, cudaMemcpyDeviceToHost));
	unsigned long long s = 0;
	for (size_t i = 0; i < PROBE_BUFFER_WORDS; i++)
		s += h[i];
	return s;
}

#endif
