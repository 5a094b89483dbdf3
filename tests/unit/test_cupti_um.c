/*
 * Unit tests for turning on CUPTI's Unified Memory counters
 * (common/cuda/cupti_um.c), linked with fakes of the CUPTI calls it makes:
 * no GPU, no CUPTI.
 *
 * Two threads launch their first kernels at once. CUPTI refuses the
 * counters to the first (NOT_SUPPORTED: given up) and answers the second
 * NOT_READY. Whenever the first asks CUPTI for an error's text, the
 * second calls in: it must never get the given-up state without its
 * reason (umrec writes that reason as meta.um_counters; session 59's
 * review found the state published before the reason).
 */
#include "testutil.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <cupti.h>

#include "common/cuda/cupti_guard.h"
#include "common/cuda/cupti_um.h"

static pthread_t first;
static sem_t second_may_call, second_called;
static atomic_bool first_done;
static _Thread_local bool is_first; /* set by the first thread itself */

static bool on_first(void)
{
	return is_first;
}

/* ---- the fake CUPTI ---- */

static CUptiResult fake_enable(CUpti_ActivityKind kind)
{
	return CUPTI_ERROR_NOT_SUPPORTED;
}

static CUptiResult fake_configure(CUpti_ActivityUnifiedMemoryCounterConfig *config, uint32_t count)
{
	return on_first() ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_READY;
}

static const struct cupti_real fake_real = {
	.ActivityEnable = fake_enable,
	.ActivityConfigureUnifiedMemoryCounter = fake_configure,
};

const struct cupti_real *cupti_real(void)
{
	return &fake_real;
}

/* The first thread waits here while the second calls in. */
CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **text)
{
	*text = result == CUPTI_ERROR_NOT_SUPPORTED ? "CUPTI_ERROR_NOT_SUPPORTED" : "CUPTI_OTHER";
	if (on_first()) {
		sem_post(&second_may_call);
		sem_wait(&second_called);
	}
	return CUPTI_SUCCESS;
}

static void *first_launch(void *unused)
{
	is_first = true;
	cupti_um_enable(NULL);
	atomic_store(&first_done, true);
	sem_post(&second_may_call);
	return NULL;
}

static void given_up_only_with_its_reason(void **state)
{
	sem_init(&second_may_call, 0, 0);
	sem_init(&second_called, 0, 0);
	assert_int_equal(pthread_create(&first, NULL, first_launch, NULL), 0);
	int calls = 0, reasonless = 0;
	for (;;) {
		sem_wait(&second_may_call);
		if (atomic_load(&first_done))
			break;
		const char *why = "unset";
		enum cupti_um_state s = cupti_um_enable(&why);
		reasonless += s == CUPTI_UM_FAILED && !why;
		calls++;
		sem_post(&second_called);
	}
	assert_int_equal(pthread_join(first, NULL), 0);
	assert_true(calls > 0);
	assert_int_equal(reasonless, 0);
	const char *why = NULL;
	assert_int_equal(cupti_um_enable(&why), CUPTI_UM_FAILED);
	assert_string_equal(why, "CUPTI_ERROR_NOT_SUPPORTED");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(given_up_only_with_its_reason),
	};
	return cmocka_run_group_tests_name("cupti_um", tests, NULL, NULL);
}
