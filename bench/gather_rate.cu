/*
 * gather_rate: what a kernel that reads rows at random from a large table
 * (an embedding lookup: DLRM's) takes on the GPU when the table is device
 * memory and when it is managed memory resident on the GPU. The GPU maps
 * the two with pages of its own choosing, so their address translation may
 * differ where the host's part does not (bench/um_call_rate).
 *
 * Usage: gather_rate [TABLE_MB [TRIALS]]   (default 4096 and 9)
 *
 * Each trial times, with events, LAUNCHES launches of a kernel in which
 * every thread reads ROW_BYTES at a random row of the table and adds them
 * up. Prints per memory the fastest and median trial, in us per launch.
 *
 * Build: nvcc -O2 -cudart shared -arch=sm_90.
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trials.h"

#define ROW_BYTES 256
#define ROWS_READ (1 << 20)
#define LAUNCHES 20

/* Thread i reads the row a hash of i names: scattered over the whole
 * table as embedding lookups are (the same rows each launch, 256 MB of
 * them, far more than the L2 cache holds). */
__global__ void gather(const float4 *table, uint64_t rows, float *sum)
{
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	if (i >= ROWS_READ)
		return;
	uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
	h ^= h >> 29;
	const float4 *row = table + (h % rows) * (ROW_BYTES / sizeof(float4));
	float s = 0;
	for (int k = 0; k < ROW_BYTES / (int)sizeof(float4); k++)
		s += row[k].x + row[k].y + row[k].z + row[k].w;
	if (s == 12345.0f) /* never, but the reads cannot be left out */
		*sum = s;
}

static int check(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 0;
	fprintf(stderr, "gather_rate: %s: %s\n", what, cudaGetErrorString(e));
	return 1;
}

int main(int argc, char **argv)
{
	long table_mb = argc > 1 ? atol(argv[1]) : 4096;
	int trials = argc > 2 ? atoi(argv[2]) : 9;
	if (argc > 3 || table_mb < 1 || trials < 1 || trials > 1000) {
		fprintf(stderr, "usage: gather_rate [TABLE_MB [TRIALS]]\n");
		return 64;
	}
	size_t bytes = (size_t)table_mb << 20;
	uint64_t rows = bytes / ROW_BYTES;
	int device;
	float *sum;
	void *table[2];
	cudaEvent_t start, stop;
	if (check(cudaGetDevice(&device), "cudaGetDevice") || check(cudaMalloc(&sum, sizeof *sum), "cudaMalloc") ||
	    check(cudaMalloc(&table[0], bytes), "cudaMalloc") ||
	    check(cudaMallocManaged(&table[1], bytes, cudaMemAttachGlobal), "cudaMallocManaged") ||
	    check(cudaEventCreate(&start), "cudaEventCreate") || check(cudaEventCreate(&stop), "cudaEventCreate"))
		return 1;
	struct cudaMemLocation gpu = { cudaMemLocationTypeDevice, device };
	if (check(cudaMemset(table[0], 0, bytes), "cudaMemset") ||
	    check(cudaMemPrefetchAsync(table[1], bytes, gpu, 0, 0), "cudaMemPrefetchAsync") ||
	    check(cudaMemset(table[1], 0, bytes), "cudaMemset") || check(cudaDeviceSynchronize(), "prefetch"))
		return 1;
	double *us = (double *)malloc(trials * sizeof *us);
	const char *names[2] = { "device", "managed" };
	for (int m = 0; m < 2; m++) {
		gather<<<ROWS_READ / 256, 256>>>((const float4 *)table[m], rows, sum); /* warm up */
		for (int t = 0; t < trials; t++) {
			float ms;
			if (check(cudaEventRecord(start), "cudaEventRecord"))
				return 1;
			for (int l = 0; l < LAUNCHES; l++)
				gather<<<ROWS_READ / 256, 256>>>((const float4 *)table[m], rows, sum);
			if (check(cudaEventRecord(stop), "cudaEventRecord") ||
			    check(cudaEventSynchronize(stop), "gather") ||
			    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"))
				return 1;
			us[t] = ms * 1000.0 / LAUNCHES;
		}
		trials_sort(us, trials);
		printf("%-8s table %ld MB: fastest %.1f median %.1f us per launch\n", names[m], table_mb, us[0],
		       us[trials / 2]);
	}
	free(us);
	return check(cudaFree(table[1]), "cudaFree") || check(cudaFree(table[0]), "cudaFree") ||
	       check(cudaFree(sum), "cudaFree");
}
