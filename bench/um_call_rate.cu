/*
 * um_call_rate: what a copy or memset call costs the calling thread when
 * its device side is device memory and when it is managed memory already
 * resident on the GPU, with and without advice. A training step makes
 * many such calls (a batch copied in, a value read back, a buffer zeroed),
 * and an idle umreplay serves from managed memory where the program alone
 * has cudaMalloc's.
 *
 * Usage: um_call_rate [CALLS [TRIALS]]   (default 20000 and 9)
 *
 * For each call and memory, each trial makes CALLS calls on one stream, in
 * batches of BATCH with a synchronize after each, and times the calls
 * alone (the host's part). Prints one line per call and memory: the
 * fastest and median trial, in ns per call. The calls:
 *   htod 64K   cudaMemcpyAsync from pinned host memory (a batch)
 *   dtoh 8     cudaMemcpyAsync into pageable host memory (a value read
 *              back: the call returns when the copy is done)
 *   memset 64K cudaMemsetAsync
 *   dtod 64K   cudaMemcpyAsync within the memory
 * The memories: device (cudaMalloc); managed (cudaMallocManaged, prefetched
 * to the GPU); managed with the GPU as its preferred location; managed
 * with the GPU named as accessing it.
 *
 * Build: nvcc -O2 -cudart shared -arch=sm_90.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "trials.h"

#define BATCH 64
#define BYTES (64 << 10)

enum call { HTOD, DTOH, MEMSET, DTOD, CALLS };
static const char *const call_names[CALLS] = { "htod 64K", "dtoh 8", "memset 64K", "dtod 64K" };

enum memory { DEVICE, MANAGED, PREFERRED, ACCESSED, MEMORIES };
static const char *const memory_names[MEMORIES] = { "device", "managed", "managed, preferred GPU",
						    "managed, accessed by GPU" };

static cudaError_t make_call(enum call c, char *mem, void *pinned, void *pageable, cudaStream_t s)
{
	switch (c) {
	case HTOD:
		return cudaMemcpyAsync(mem, pinned, BYTES, cudaMemcpyHostToDevice, s);
	case DTOH:
		return cudaMemcpyAsync(pageable, mem, 8, cudaMemcpyDeviceToHost, s);
	case MEMSET:
		return cudaMemsetAsync(mem, 0, BYTES, s);
	default:
		return cudaMemcpyAsync(mem + BYTES, mem, BYTES, cudaMemcpyDeviceToDevice, s);
	}
}

/* 2 * BYTES of memory of kind m, resident on the GPU. */
static int make_memory(enum memory m, int device, cudaStream_t s, char **mem)
{
	if (m == DEVICE)
		return trials_check(cudaMalloc((void **)mem, 2 * BYTES), "cudaMalloc");
	struct cudaMemLocation gpu = { cudaMemLocationTypeDevice, device };
	if (trials_check(cudaMallocManaged((void **)mem, 2 * BYTES, cudaMemAttachGlobal), "cudaMallocManaged"))
		return 1;
	if (m == PREFERRED &&
	    trials_check(cudaMemAdvise(*mem, 2 * BYTES, cudaMemAdviseSetPreferredLocation, gpu), "cudaMemAdvise"))
		return 1;
	if (m == ACCESSED && trials_check(cudaMemAdvise(*mem, 2 * BYTES, cudaMemAdviseSetAccessedBy, gpu), "cudaMemAdvise"))
		return 1;
	return trials_check(cudaMemsetAsync(*mem, 0, 2 * BYTES, s), "cudaMemsetAsync") ||
	       trials_check(cudaMemPrefetchAsync(*mem, 2 * BYTES, gpu, 0, s), "cudaMemPrefetchAsync") ||
	       trials_check(cudaStreamSynchronize(s), "prefetch");
}

int main(int argc, char **argv)
{
	long calls;
	int trials;
	if (!trials_args(argc, argv, 20000, &calls, &trials) || argc > 3)
		return trials_usage("um_call_rate [CALLS [TRIALS]]");
	int device;
	void *pinned, *pageable = malloc(8);
	char *mem[MEMORIES];
	cudaStream_t s;
	if (!pageable) {
		fprintf(stderr, "um_call_rate: out of memory\n");
		return 1;
	}
	if (trials_check(cudaGetDevice(&device), "cudaGetDevice") || trials_check(cudaMallocHost(&pinned, BYTES), "cudaMallocHost") ||
	    trials_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"))
		return 1;
	for (int m = 0; m < MEMORIES; m++)
		if (make_memory((enum memory)m, device, s, &mem[m]))
			return 1;
	double *ns = (double *)malloc(trials * sizeof *ns);
	printf("%-11s %-25s %9s %9s\n", "call", "memory", "fastest", "median");
	for (int c = 0; c < CALLS; c++) {
		for (int m = 0; m < MEMORIES; m++) {
			for (int t = 0; t < trials; t++) {
				double calling = 0;
				for (long done = 0; done < calls; done += BATCH) {
					long n = calls - done < BATCH ? calls - done : BATCH;
					double t0 = trials_now_ns();
					for (long i = 0; i < n; i++)
						if (trials_check(make_call((enum call)c, mem[m], pinned, pageable, s), call_names[c]))
							return 1;
					calling += trials_now_ns() - t0;
					if (trials_check(cudaStreamSynchronize(s), call_names[c]))
						return 1;
				}
				ns[t] = calling / calls;
			}
			trials_sort(ns, trials);
			printf("%-11s %-25s %9.1f %9.1f\n", call_names[c], memory_names[m], ns[0], ns[trials / 2]);
		}
	}
	free(ns);
	for (int m = 0; m < MEMORIES; m++)
		if (trials_check(cudaFree(mem[m]), "cudaFree"))
			return 1;
	free(pageable);
	return trials_check(cudaFreeHost(pinned), "cudaFreeHost");
}
