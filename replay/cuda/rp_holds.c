/*
 * rp_holds.c: holding a launch on the GPU until a prefetch the worker has
 * not issued yet has landed.
 *
 * The gate (rp_exec.c) orders a kernel after the prefetch of its blocks
 * when the worker has already issued it. When it has not, the kernel used
 * to run ahead and fault on the blocks page by page: most of the steady
 * faults left under plan (docs/replay.md, "Markers"). A hold makes the
 * launching stream wait until a word in pinned host memory reaches the
 * prefetch's ticket; the worker queues a write of that ticket on the
 * replayer's stream right after the prefetch, so the GPU sets it when the
 * copy is done. Neither thread waits.
 *
 * Such a wait names work not queued yet, and a build where the program's
 * streams waited so for the worker's discards hung (2646697): the program's
 * thread sat in a synchronising call, waiting for its stream, while the
 * worker's next driver call waited for the program's thread. A hold only
 * orders for speed (a kernel that runs early faults its bytes in, the
 * data is right either way), so the host may end it at any time by
 * writing the ticket itself. It does:
 *  - before each synchronising driver call of the program's threads
 *    (rp_callbacks.c): nothing the program waits for can wait on a hold;
 *  - from a watchdog thread, for a hold open longer than HOLD_MAX_NS,
 *    whatever else a wait might depend on.
 * The watchdog and the releases make no driver call: a store to the word.
 *
 * One word per gate slot (ticket % GATES), compared as the driver compares
 * (cyclic, 32 bits). A slot's word only rises except when the GPU writes a
 * ticket older than one the host wrote; a hold on that slot then waits for
 * its own prefetch or its release, no longer.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "clock.h"
#include "rp.h"

#define HOLD_MAX_NS (20 * 1000000ull) /* the watchdog's limit on one hold */
#define WATCH_NS (500 * 1000)         /* how often it looks while holds are open */

static uint32_t *word;       /* pinned host memory, RP_GATES words */
static CUdeviceptr word_dev; /* the same words, as the GPU addresses them */
/* Per slot: the ticket an open hold waits for (0: none), and since when. */
static _Atomic uint64_t held[RP_GATES], held_since[RP_GATES];
static atomic_uint open_holds;
static atomic_uint_fast64_t n_holds, n_released_sync, n_released_late;
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cond = PTHREAD_COND_INITIALIZER;

static bool reached(uint32_t value, uint64_t ticket)
{
	return (int32_t)(value - (uint32_t)ticket) >= 0;
}

static uint32_t read_word(size_t slot)
{
	return __atomic_load_n(&word[slot], __ATOMIC_ACQUIRE);
}

/* Closes the slot's hold on ticket if it is still the open one. */
static bool close_hold(size_t slot, uint64_t ticket)
{
	uint64_t t = ticket;
	if (!atomic_compare_exchange_strong(&held[slot], &t, 0))
		return false;
	atomic_fetch_sub(&open_holds, 1);
	return true;
}

/* Ends the slot's hold: the prefetch landed, or the host writes its
 * ticket. Returns whether the host had to. */
static bool release(size_t slot, uint64_t ticket)
{
	bool landed = reached(read_word(slot), ticket);
	if (!landed)
		__atomic_store_n(&word[slot], (uint32_t)ticket, __ATOMIC_RELEASE);
	return close_hold(slot, ticket) && !landed;
}

static void *watchdog(void *unused)
{
	struct timespec pause = { 0, WATCH_NS };
	for (;;) {
		pthread_mutex_lock(&watch_lock);
		while (!atomic_load(&open_holds))
			pthread_cond_wait(&watch_cond, &watch_lock);
		pthread_mutex_unlock(&watch_lock);
		nanosleep(&pause, NULL);
		uint64_t now = um_now_ns();
		for (size_t s = 0; s < RP_GATES; s++) {
			uint64_t t = atomic_load(&held[s]);
			if (!t)
				continue;
			if (reached(read_word(s), t))
				close_hold(s, t);
			else if ((int64_t)(now - atomic_load(&held_since[s])) > (int64_t)HOLD_MAX_NS && release(s, t))
				atomic_fetch_add(&n_released_late, 1);
		}
	}
	return NULL;
}

bool rp_holds_init(void)
{
	void *host;
	if (cuMemHostAlloc(&host, RP_GATES * sizeof *word, CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS)
		return false;
	if (cuMemHostGetDevicePointer(&word_dev, host, 0) != CUDA_SUCCESS) {
		cuMemFreeHost(host);
		return false;
	}
	for (size_t s = 0; s < RP_GATES; s++)
		((uint32_t *)host)[s] = 0;
	pthread_t t;
	if (pthread_create(&t, NULL, watchdog, NULL) != 0) {
		cuMemFreeHost(host);
		return false;
	}
	pthread_detach(t);
	word = host;
	return true;
}

CUresult rp_holds_landed(CUstream mig_stream, uint64_t ticket)
{
	if (!word)
		return CUDA_SUCCESS;
	CUdeviceptr at = word_dev + ticket % RP_GATES * sizeof *word;
	return cuStreamWriteValue32(mig_stream, at, (uint32_t)ticket, CU_STREAM_WRITE_VALUE_DEFAULT);
}

bool rp_holds_hold(CUstream s, uint64_t ticket)
{
	if (!word)
		return false;
	size_t slot = ticket % RP_GATES;
	if (reached(read_word(slot), ticket))
		return true;
	/* A slot has one open hold: the newest ticket, which an older one's
	 * prefetch precedes. */
	atomic_store(&held_since[slot], um_now_ns());
	uint64_t t = atomic_load(&held[slot]);
	while (t < ticket && !atomic_compare_exchange_weak(&held[slot], &t, ticket))
		;
	if (!t) {
		pthread_mutex_lock(&watch_lock);
		if (atomic_fetch_add(&open_holds, 1) == 0)
			pthread_cond_signal(&watch_cond);
		pthread_mutex_unlock(&watch_lock);
	}
	CUdeviceptr at = word_dev + slot * sizeof *word;
	if (cuStreamWaitValue32(s, at, (uint32_t)ticket, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
		release(slot, atomic_load(&held[slot]));
		return false;
	}
	atomic_fetch_add(&n_holds, 1);
	return true;
}

void rp_holds_release_all(void)
{
	if (!atomic_load_explicit(&open_holds, memory_order_relaxed))
		return;
	for (size_t s = 0; s < RP_GATES; s++) {
		uint64_t t = atomic_load(&held[s]);
		if (t && release(s, t))
			atomic_fetch_add(&n_released_sync, 1);
	}
}

void rp_holds_get_stats(uint64_t *holds, uint64_t *released_sync, uint64_t *released_late)
{
	*holds = atomic_load(&n_holds);
	*released_sync = atomic_load(&n_released_sync);
	*released_late = atomic_load(&n_released_late);
}
