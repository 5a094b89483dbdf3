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

int main(int argc, char **argv)
{
	long table_mb;
	int trials;
	if (!trials_args(argc, argv, 4096, &table_mb, &trials) || argc > 3)
		return trials_usage("gather_rate [TABLE_MB [TRIALS]]");
	size_t bytes = (size_t)table_mb << 20;
	uint64_t rows = bytes / ROW_BYTES;
	int device;
	float *sum;
	void *table[2];
	cudaEvent_t start, stop;
	if (trials_check(cudaGetDevice(&device), "cudaGetDevice") || trials_check(cudaMalloc(&sum, sizeof *sum), "cudaMalloc") ||
	    trials_check(cudaMalloc(&table[0], bytes), "cudaMalloc") ||
	    trials_check(cudaMallocManaged(&table[1], bytes, cudaMemAttachGlobal), "cudaMallocManaged") ||
	    trials_check(cudaEventCreate(&start), "cudaEventCreate") || trials_check(cudaEventCreate(&stop), "cudaEventCreate"))
		return 1;
	struct cudaMemLocation gpu = { cudaMemLocationTypeDevice, device };
	if (trials_check(cudaMemset(table[0], 0, bytes), "cudaMemset") ||
	    trials_check(cudaMemPrefetchAsync(table[1], bytes, gpu, 0, 0), "cudaMemPrefetchAsync") ||
	    trials_check(cudaMemset(table[1], 0, bytes), "cudaMemset") || trials_check(cudaDeviceSynchronize(), "prefetch"))
		return 1;
	double *us = (double *)malloc(trials * sizeof *us);
	const char *names[2] = { "device", "managed" };
	for (int m = 0; m < 2; m++) {
		gather<<<ROWS_READ / 256, 256>>>((const float4 *)table[m], rows, sum); /* warm up */
		for (int t = 0; t < trials; t++) {
			float ms;
			if (trials_check(cudaEventRecord(start), "cudaEventRecord"))
				return 1;
			for (int l = 0; l < LAUNCHES; l++)
				gather<<<ROWS_READ / 256, 256>>>((const float4 *)table[m], rows, sum);
			if (trials_check(cudaEventRecord(stop), "cudaEventRecord") ||
			    trials_check(cudaEventSynchronize(stop), "gather") ||
			    trials_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"))
				return 1;
			us[t] = ms * 1000.0 / LAUNCHES;
		}
		trials_sort(us, trials);
		printf("%-8s table %ld MB: fastest %.1f median %.1f us per launch\n", names[m], table_mb, us[0],
		       us[trials / 2]);
	}
	free(us);
	return trials_check(cudaFree(table[1]), "cudaFree") || trials_check(cudaFree(table[0]), "cudaFree") ||
	       trials_check(cudaFree(sum), "cudaFree");
}
