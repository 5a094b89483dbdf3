/* cupti_um.c: enable CUPTI's Unified Memory counters once CUPTI accepts
 * them (see cupti_um.h). */
#include "cupti_um.h"

#include <pthread.h>
#include <stdatomic.h>

#include <cupti.h>

#include "cupti_guard.h"
#include "log.h"

/* NOT_READY answers before giving up: the first launch normally succeeds. */
#define ENABLE_ATTEMPTS 1000

static atomic_int state;
static atomic_int attempts;
static const char *failure; /* set before state turns FAILED */
static pthread_mutex_t trying = PTHREAD_MUTEX_INITIALIZER;

static CUptiResult configure(int with_faults)
{
	CUpti_ActivityUnifiedMemoryCounterConfig um[3] = {
		{ CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE,
		  CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 0, 1 },
		{ CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE,
		  CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH, 0, 1 },
		{ CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE,
		  CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 0, 1 },
	};
	return cupti_real()->ActivityConfigureUnifiedMemoryCounter(um, with_faults ? 3 : 2);
}

static const char *text(CUptiResult r)
{
	const char *msg = "?";
	cuptiGetResultString(r, &msg);
	return msg;
}

enum cupti_um_state cupti_um_enable(const char **why)
{
	int s = atomic_load_explicit(&state, memory_order_acquire); /* and failure with it */
	if (s != CUPTI_UM_TRYING)
		goto out;
	/* One attempt at a time: another thread's configure must not undo an
	 * enable, nor its failure be published over a success. A thread that
	 * finds an attempt under way goes on as if it had tried. */
	if (pthread_mutex_trylock(&trying) != 0)
		goto out;
	if ((s = atomic_load(&state)) != CUPTI_UM_TRYING) {
		pthread_mutex_unlock(&trying);
		goto out;
	}
	int n = atomic_fetch_add(&attempts, 1);
	CUptiResult r = CUPTI_ERROR_UNKNOWN;
	int with_faults;
	for (with_faults = 1; with_faults >= 0; with_faults--) {
		CUptiResult c = configure(with_faults);
		r = c == CUPTI_SUCCESS ? cupti_real()->ActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) : c;
		if (n < 3)
			um_debug("UM counters (faults %s): configure %s, enable %s", with_faults ? "on" : "off",
				 text(c), text(r));
		if (r == CUPTI_SUCCESS)
			break;
	}
	int next = r == CUPTI_SUCCESS ? (with_faults ? CUPTI_UM_ENABLED_WITH_FAULTS : CUPTI_UM_ENABLED_MIGRATIONS_ONLY)
		 : (r == CUPTI_ERROR_NOT_READY && n < ENABLE_ATTEMPTS) ? CUPTI_UM_TRYING
		 : CUPTI_UM_FAILED;
	if (next == CUPTI_UM_FAILED) {
		failure = text(r); /* before the state, whose store publishes it */
		um_warn("cannot enable Unified Memory records (%s): no migrations or faults will be seen", failure);
	} else if (next != CUPTI_UM_TRYING) {
		um_debug("Unified Memory records enabled at attempt %d", n + 1);
	}
	if (next != CUPTI_UM_TRYING)
		atomic_store_explicit(&state, next, memory_order_release);
	pthread_mutex_unlock(&trying);
	s = next;
out:
	if (why)
		*why = s == CUPTI_UM_FAILED ? failure : NULL;
	return (enum cupti_um_state)s;
}
