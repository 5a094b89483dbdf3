/*
 * Unit tests for the replayer's residency sampler
 * (replay/cuda/rp_residency.c), linked with fakes of the driver calls it
 * makes: no GPU, no driver.
 *
 * A device reset stops the sampler on the thread that resets while the
 * exit may stop it on another (rp_callbacks.c's on_device_reset, past its
 * check before the exit's stop): the sampler thread must be joined once,
 * a second join of it being undefined, and both must get the peak.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <cuda.h>

#include "replay/cuda/rp.h"

#define GIB (1ULL << 30)

/* ---- the fake driver: 1 GiB in use at the start, 3 GiB after ---- */

static atomic_int samples;

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx)
{
	*ctx = (CUcontext)(uintptr_t)0xc000;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	(void)ctx;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetInfo(size_t *free_b, size_t *total_b)
{
	*total_b = 80 * GIB;
	*free_b = *total_b - (atomic_fetch_add(&samples, 1) ? 3 * GIB : GIB);
	return CUDA_SUCCESS;
}

/* ---- joins, counted (the test links with --wrap=pthread_join) ---- */

int __real_pthread_join(pthread_t t, void **ret);
int __wrap_pthread_join(pthread_t t, void **ret);

static atomic_int joins;

/* The first join is slow: the other stop comes while it is under way. */
int __wrap_pthread_join(pthread_t t, void **ret)
{
	if (atomic_fetch_add(&joins, 1) == 0)
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	return __real_pthread_join(t, ret);
}

static pthread_barrier_t both;

static void *stop(void *peak)
{
	pthread_barrier_wait(&both);
	*(uint64_t *)peak = rp_residency_stop();
	return NULL;
}

static void stopped_at_once_from_two_threads(void **state)
{
	(void)state;
	rp_residency_start();
	while (atomic_load(&samples) < 3)
		nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
	uint64_t peak[2];
	pthread_t t[2];
	pthread_barrier_init(&both, NULL, 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, stop, &peak[i]), 0);
	for (int i = 0; i < 2; i++)
		__real_pthread_join(t[i], NULL);
	pthread_barrier_destroy(&both);
	assert_int_equal(atomic_load(&joins), 1);
	assert_int_equal(peak[0], 2 * GIB);
	assert_int_equal(peak[1], 2 * GIB);
	/* Stopped for good: no sampler starts again. */
	rp_residency_start();
	assert_int_equal(rp_residency_stop(), 2 * GIB);
	assert_int_equal(atomic_load(&joins), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stopped_at_once_from_two_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
