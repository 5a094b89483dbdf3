/*
 * async_alloc_rate: what one stream-ordered allocation and its free cost
 * the calling thread, as a framework on cudaMallocAsync pays them.
 *
 * Usage: async_alloc_rate [PAIRS [TRIALS [SIZE]]]   (default 100000, 9, 4096)
 *
 * Each trial makes PAIRS allocations of SIZE bytes on a stream of its own,
 * each freed on that stream right after (the pool's memory is reused at
 * once, as a framework's is within a step), in batches of BATCH with a
 * synchronize after each. Only the two calls are timed. It does this first
 * through cudaMallocAsync (the device's current pool), then through
 * cudaMallocFromPoolAsync naming the default pool. Prints, per trial and
 * call, the host time per pair in ns, then the fastest and the median
 * trial of each. Run it plain and under a tool: the difference is the
 * tool's cost per pair.
 *
 * Build: nvcc -O2 -cudart shared -arch=sm_90 (shared cudart, so that an
 * LD_PRELOAD library can interpose the calls).
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "trials.h"

#define BATCH 256

/* One pair on stream: from pool, or the current pool where pool is NULL. */
static cudaError_t pair(cudaMemPool_t pool, size_t size, cudaStream_t stream)
{
	void *p;
	cudaError_t e = pool ? cudaMallocFromPoolAsync(&p, size, pool, stream) : cudaMallocAsync(&p, size, stream);
	return e == cudaSuccess ? cudaFreeAsync(p, stream) : e;
}

/* Runs the trials of one call into ns[0 .. trials), sorted; 0 or 1. */
static int time_pairs(const char *name, cudaMemPool_t pool, long pairs, int trials, size_t size,
		      cudaStream_t stream, double *ns)
{
	for (int t = 0; t < trials; t++) {
		double calling = 0;
		for (long done = 0; done < pairs; done += BATCH) {
			long n = pairs - done < BATCH ? pairs - done : BATCH;
			double t0 = trials_now_ns();
			for (long i = 0; i < n; i++)
				if (trials_check(pair(pool, size, stream), name))
					return 1;
			calling += trials_now_ns() - t0;
			if (trials_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize"))
				return 1;
		}
		ns[t] = calling / pairs;
		printf("%s trial %d: %.1f ns per pair\n", name, t + 1, ns[t]);
	}
	trials_sort(ns, trials);
	printf("%s fastest %.1f median %.1f ns per pair\n", name, ns[0], ns[trials / 2]);
	return 0;
}

int main(int argc, char **argv)
{
	long pairs;
	int trials;
	long size = argc > 3 ? atol(argv[3]) : 4096;
	if (!trials_args(argc, argv, 100000, &pairs, &trials) || argc > 4 || size < 1)
		return trials_usage("async_alloc_rate [PAIRS [TRIALS [SIZE]]]");
	int device;
	cudaStream_t stream;
	cudaMemPool_t pool;
	if (trials_check(cudaGetDevice(&device), "cudaGetDevice") ||
	    trials_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate") ||
	    trials_check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool"))
		return 1;
	double *ns = (double *)malloc(trials * sizeof *ns);
	int failed = !ns || time_pairs("cudaMallocAsync", NULL, pairs, trials, (size_t)size, stream, ns) ||
		     time_pairs("cudaMallocFromPoolAsync", pool, pairs, trials, (size_t)size, stream, ns);
	free(ns);
	return failed || trials_check(cudaStreamDestroy(stream), "cudaStreamDestroy");
}
