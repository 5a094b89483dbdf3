/*
 * Unit tests for the guard of the process's CUPTI (common/cuda/cupti_guard.c):
 * no CUPTI library is loaded, so a call the guard lets through finds no
 * real function (CUPTI_ERROR_NOT_INITIALIZED), and one it refuses answers
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, with one warning for the
 * whole run.
 */
#include "testutil.h"

#include <cupti.h>

#include "common/cuda/cupti_guard.h"

/* Every entry point the guard stands in for, called as a program would. */
static CUptiResult call(int i)
{
	static CUpti_SubscriberHandle sub;
	CUpti_ActivityUnifiedMemoryCounterConfig um = { 0 };
	switch (i) {
	case 0: return cuptiSubscribe(&sub, NULL, NULL);
	case 1: return cuptiUnsubscribe(sub);
	case 2: return cuptiActivityRegisterCallbacks(NULL, NULL);
	case 3: return cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	case 4: return cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	case 5: return cuptiActivityEnableContext(NULL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	case 6: return cuptiActivityDisableContext(NULL, CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
	case 7: return cuptiActivityConfigureUnifiedMemoryCounter(&um, 1);
	case 8: return cuptiActivityFlushPeriod(1);
	case 9: return cuptiActivityRegisterTimestampCallback(NULL);
	case 10: return cuptiActivityEnableHWTrace(1);
	case 11: return cuptiFinalize();
	}
	return CUPTI_SUCCESS;
}
#define CALLS 12

static void hold_and_call_all(void)
{
	cupti_guard_hold("umtest");
	for (int i = CALLS - 1; i >= 0; i--)
		assert_int_equal(call(i), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
}

/* Before umkit holds CUPTI every call goes through (to nothing here);
 * after, every one is refused, and the first refusal alone warns, naming
 * the call and the tool. */
static void calls_are_refused_once_held(void **state)
{
	for (int i = 0; i < CALLS; i++)
		assert_int_equal(call(i), CUPTI_ERROR_NOT_INITIALIZED);
	const char *text = stderr_of(hold_and_call_all);
	assert_non_null(strstr(text, "the program called cuptiFinalize, but umtest holds"));
	assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1); /* one line */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(calls_are_refused_once_held),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
