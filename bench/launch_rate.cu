/*
 * launch_rate: what one kernel launch costs the launching thread, measured
 * the way a launch-bound program (DLRM) pays it.
 *
 * Usage: launch_rate [LAUNCHES [TRIALS]]   (default 100000 and 9)
 *
 * Each trial launches LAUNCHES empty kernels on the default stream, one
 * argument a pointer into a cudaMalloc'd buffer (what a framework's kernels
 * take), in batches of BATCH with a synchronize after each: the launch
 * queue never fills, so the time is the host's and not the GPU's. Only the
 * launch calls are timed. Prints, per trial, the host time per launch in
 * ns, then the fastest and the median trial. Run it plain and under a
 * tool: the difference is the tool's cost per launch.
 *
 * Build: nvcc -O2 -cudart shared -arch=sm_90 (shared cudart, so that an
 * LD_PRELOAD library can interpose cudaMalloc).
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "trials.h"

#define BATCH 256

__global__ void touch_nothing(float *p)
{
	(void)p;
}

int main(int argc, char **argv)
{
	long launches;
	int trials;
	if (!trials_args(argc, argv, 100000, &launches, &trials) || argc > 3)
		return trials_usage("launch_rate [LAUNCHES [TRIALS]]");
	float *buf;
	if (trials_check(cudaMalloc(&buf, 1 << 20), "cudaMalloc"))
		return 1;
	double *ns = (double *)malloc(trials * sizeof *ns);
	for (int t = 0; t < trials; t++) {
		double launching = 0;
		for (long done = 0; done < launches; done += BATCH) {
			long n = launches - done < BATCH ? launches - done : BATCH;
			double t0 = trials_now_ns();
			for (long i = 0; i < n; i++)
				touch_nothing<<<1, 32>>>(buf);
			launching += trials_now_ns() - t0;
			if (trials_check(cudaDeviceSynchronize(), "kernel"))
				return 1;
		}
		ns[t] = launching / launches;
		printf("trial %d: %.1f ns per launch\n", t + 1, ns[t]);
	}
	trials_sort(ns, trials);
	printf("fastest %.1f median %.1f ns per launch\n", ns[0], ns[trials / 2]);
	free(ns);
	return trials_check(cudaFree(buf), "cudaFree");
}
