/*
 * rp_residency.c: the device memory the program occupies, measured.
 *
 * cuMemGetInfo is a call into the driver that costs microseconds; made on
 * the program's launch path it slowed launch-bound programs, so a thread of
 * its own samples it every RESIDENCY_PERIOD_NS, from the program's first
 * kernel launch or allocation (the baseline: what was in use before the
 * replay could move anything) to the exit. A peak shorter than the period can be missed; the
 * replayer's own bookkeeping (the budget) does not depend on these samples.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <cuda.h>

#include "rp.h"
#include "thread.h"

#define RESIDENCY_PERIOD_NS 1000000L

static pthread_once_t started = PTHREAD_ONCE_INIT;
/* Held to start the sampler and to stop it: a device reset on one thread
 * (rp_callbacks.c) may stop it while the exit on another does, and only
 * one may join it; the other waits for that, and for the peak. */
static pthread_mutex_t sampler_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t sampler;
static bool sampler_running;
static atomic_bool stopping;
static CUcontext ctx;
/* Written by the sampler only; read at exit after the sampler has stopped. */
static uint64_t baseline_used, peak_used;

static bool used_now(uint64_t *used)
{
	size_t free_b, total_b;
	if (cuMemGetInfo(&free_b, &total_b) != CUDA_SUCCESS)
		return false;
	*used = total_b - free_b;
	return true;
}

static void *sample_loop(void *unused)
{
	struct timespec period = { 0, RESIDENCY_PERIOD_NS };
	uint64_t used;
	if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		return NULL;
	while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
		if (used_now(&used) && used > peak_used)
			peak_used = used;
		nanosleep(&period, NULL);
	}
	return NULL;
}

/* On the thread of the first launch or allocation, whose context the
 * program uses. */
static void start_sampler(void)
{
	pthread_mutex_lock(&sampler_lock);
	if (!atomic_load(&stopping) && cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx && used_now(&baseline_used)) {
		peak_used = baseline_used;
		sampler_running = thread_start_unsignalled(&sampler, sample_loop, NULL) == 0;
	}
	pthread_mutex_unlock(&sampler_lock);
}

void rp_residency_start(void)
{
	pthread_once(&started, start_sampler);
}

uint64_t rp_residency_stop(void)
{
	pthread_mutex_lock(&sampler_lock);
	atomic_store(&stopping, true);
	if (sampler_running) {
		pthread_join(sampler, NULL);
		sampler_running = false;
	}
	uint64_t peak = peak_used > baseline_used ? peak_used - baseline_used : 0;
	pthread_mutex_unlock(&sampler_lock);
	return peak;
}
