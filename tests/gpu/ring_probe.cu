// ring_probe: a loop over a ring of same-sized persistent input buffers,
// as a program that keeps several batches of input in flight does. Launch
// i reads buffer i % RING into one accumulator, each word `reads` times
// from as many places (a GEMM re-reads its operands; an elementwise
// kernel reads them once). The execution IDs of the launches are all
// alike (one kernel, same-sized buffers); only the buffers tell the ring.
//
// Usage: ring_probe [READS]   (default 1)
// Prints the loop's time, the accumulator's sum and "ring: ok" or
// "ring: FAILED"; exits 0, 1 when the sum is wrong, 2 when a CUDA call
// failed.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "probe_buffers.h"

static const int RING = 4, ROUNDS = 20;

__global__ void fill(unsigned *p, size_t n, unsigned v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = v;
}

__global__ void gather(const unsigned *in, unsigned *acc, size_t n, int reads)
{
	size_t stride = n / reads;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		unsigned s = 0;
		for (int r = 0; r < reads; r++)
			s += in[(i + r * stride) % n];
		acc[i] += s;
	}
}

int main(int argc, char **argv)
{
	int reads = argc > 1 ? atoi(argv[1]) : 1;
	if (reads < 1 || reads > 64) {
		fprintf(stderr, "usage: ring_probe [READS, 1..64]\n");
		return 2;
	}
	const size_t n = PROBE_BUFFER_WORDS;
	const unsigned blocks = (unsigned)(n / 256);
	unsigned *in[RING], *acc;
	for (int b = 0; b < RING; b++) {
		CHECK(cudaMalloc(&in[b], PROBE_BUFFER_BYTES));
		fill<<<blocks, 256>>>(in[b], n, (unsigned)b + 1);
	}
	CHECK(cudaMalloc(&acc, PROBE_BUFFER_BYTES));
	CHECK(cudaMemset(acc, 0, PROBE_BUFFER_BYTES));
	cudaEvent_t t0, t1;
	CHECK(cudaEventCreate(&t0));
	CHECK(cudaEventCreate(&t1));
	CHECK(cudaEventRecord(t0));
	for (int i = 0; i < ROUNDS * RING; i++)
		gather<<<blocks, 256>>>(in[i % RING], acc, n, reads);
	CHECK(cudaEventRecord(t1));
	CHECK(cudaEventSynchronize(t1));
	CHECK(cudaGetLastError());
	float ms;
	CHECK(cudaEventElapsedTime(&ms, t0, t1));
	printf("ring: %d launches in %.1f ms\n", ROUNDS * RING, ms);
	// Each word gets, every round, reads times each buffer's value b + 1.
	unsigned long long want = (unsigned long long)n * ROUNDS * reads * (RING * (RING + 1) / 2);
	unsigned long long sum = buffer_sum(acc);
	printf("ring sum %llu\n", sum);
	for (int b = 0; b < RING; b++)
		CHECK(cudaFree(in[b]));
	CHECK(cudaFree(acc));
	if (sum != want) {
		printf("ring: FAILED, sum %llu expected\n", want);
		return 1;
	}
	printf("ring: ok\n");
	return 0;
}
