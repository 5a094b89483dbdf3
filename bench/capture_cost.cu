/*
 * capture_cost: what the replayer's two capture questions cost the calling
 * thread, per call.
 *
 * Usage: capture_cost [CALLS [TRIALS]]   (default 1000000 and 9)
 *
 * A replay that follows launches asks the driver, at every launch from the
 * first capture on, whether the launch's stream is capturing
 * (cuStreamIsCapturing, common/cuda/capture.c); an idle replay asks, at an
 * allocation that would wake it, for the thread's capture mode (one
 * cuThreadExchangeStreamCaptureMode to read it, one to put it back). Each
 * trial times CALLS of each question, outside any capture, on the legacy
 * default stream and on a created stream; the driver entry points come from
 * the runtime (cudaGetDriverEntryPointByVersion), so the program links no
 * libcuda. Prints, per trial, ns per call, then the fastest and the median
 * trial. Run it plain and under umreplay (which attaches to CUPTI): the
 * calls the replayer makes inside its callbacks pass the same hooks.
 *
 * Build: nvcc -O2 -cudart shared -arch=sm_90 (make bench).
 */
#include <cuda.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "trials.h"

typedef CUresult (*is_capturing_fn)(CUstream, CUstreamCaptureStatus *);
typedef CUresult (*exchange_mode_fn)(CUstreamCaptureMode *);

static void *driver_entry(const char *name)
{
	void *fn = NULL;
	cudaDriverEntryPointQueryResult found;
	if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
	    found != cudaDriverEntryPointSuccess) {
		fprintf(stderr, "capture_cost: the driver has no %s\n", name);
		return NULL;
	}
	return fn;
}

/* ns per call of cuStreamIsCapturing(s), over calls; -1 on a failed call. */
static double time_is_capturing(is_capturing_fn is_capturing, CUstream s, long calls)
{
	CUstreamCaptureStatus status;
	double t0 = trials_now_ns();
	for (long i = 0; i < calls; i++)
		if (is_capturing(s, &status) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE)
			return -1;
	return (trials_now_ns() - t0) / calls;
}

/* ns per read-and-restore of the thread's capture mode (two calls). */
static double time_mode_query(exchange_mode_fn exchange, long calls)
{
	double t0 = trials_now_ns();
	for (long i = 0; i < calls; i++) {
		CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
		if (exchange(&mode) != CUDA_SUCCESS)
			return -1;
		CUstreamCaptureMode back = mode;
		if (exchange(&back) != CUDA_SUCCESS)
			return -1;
	}
	return (trials_now_ns() - t0) / calls;
}

static void report(const char *what, double *ns, int trials)
{
	printf("%-28s", what);
	for (int t = 0; t < trials; t++)
		printf(" %.1f", ns[t]);
	trials_sort(ns, trials);
	printf("  fastest %.1f median %.1f ns\n", ns[0], ns[trials / 2]);
}

int main(int argc, char **argv)
{
	long calls;
	int trials;
	if (!trials_args(argc, argv, 1000000, &calls, &trials) || argc > 3)
		return trials_usage("capture_cost [CALLS [TRIALS]]");
	cudaStream_t stream;
	if (cudaFree(0) != cudaSuccess || cudaStreamCreate(&stream) != cudaSuccess) {
		fprintf(stderr, "capture_cost: no CUDA context\n");
		return 1;
	}
	is_capturing_fn is_capturing = (is_capturing_fn)driver_entry("cuStreamIsCapturing");
	exchange_mode_fn exchange = (exchange_mode_fn)driver_entry("cuThreadExchangeStreamCaptureMode");
	double *legacy = (double *)calloc(trials, sizeof(double));
	double *created = (double *)calloc(trials, sizeof(double));
	double *mode = (double *)calloc(trials, sizeof(double));
	if (!is_capturing || !exchange || !legacy || !created || !mode)
		return 1;
	for (int t = 0; t < trials; t++) {
		legacy[t] = time_is_capturing(is_capturing, NULL, calls);
		created[t] = time_is_capturing(is_capturing, (CUstream)stream, calls);
		mode[t] = time_mode_query(exchange, calls);
		if (legacy[t] < 0 || created[t] < 0 || mode[t] < 0) {
			fprintf(stderr, "capture_cost: a driver call failed\n");
			return 1;
		}
	}
	printf("capture_cost: %ld calls per trial, %d trials\n", calls, trials);
	report("cuStreamIsCapturing legacy", legacy, trials);
	report("cuStreamIsCapturing stream", created, trials);
	report("capture mode read+restore", mode, trials);
	return 0;
}
