/*
 * Unit tests for the replay's check of a plan's room against the GPU's
 * memory (replay/device_fit.c): no GPU.
 */
#include "testutil.h"

#include <string.h>

#include "replay/device_fit.h"

#define GIB (1ull << 30)

static void test_a_plan_within_the_gpu_is_quiet(void **state)
{
	char msg[512] = "";
	assert_false(device_fit_warning("plan.bin", 134 * GIB, 0, "NVIDIA H200", 140 * GIB, msg, sizeof msg));
	assert_false(device_fit_warning("plan.bin", 140 * GIB, 0, "NVIDIA H200", 140 * GIB, msg, sizeof msg));
	assert_false(device_fit_warning(NULL, 0, 0, "NVIDIA H200", 140 * GIB, msg, sizeof msg)); /* no plan */
	assert_false(device_fit_warning("plan.bin", 200 * GIB, 0, "?", 0, msg, sizeof msg)); /* size unknown */
	assert_string_equal(msg, "");
}

/* Made on an H200, run on an H100. */
static void test_a_plan_for_a_larger_gpu_is_warned_of(void **state)
{
	char msg[512];
	assert_true(device_fit_warning("runs/plan.bin", 134 * GIB, 0, "NVIDIA H100 80GB HBM3", 80 * GIB, msg,
				       sizeof msg));
	assert_string_equal(msg, "runs/plan.bin keeps residency under 134.00 GiB, more than the 80.00 GiB of "
				 "NVIDIA H100 80GB HBM3 it runs on: the room the plan counts on is not there, and the "
				 "GPU will evict and fault on its own; make the plan for this GPU (umplan --capacity) "
				 "or replay with --gpu-budget");
}

/* The budget is the limit that applies, plan or not. */
static void test_the_budget_decides(void **state)
{
	char msg[512];
	assert_false(device_fit_warning("plan.bin", 134 * GIB, 40 * GIB, "NVIDIA H100", 80 * GIB, msg, sizeof msg));
	assert_true(device_fit_warning(NULL, 0, 100 * GIB, "NVIDIA H100", 80 * GIB, msg, sizeof msg));
	assert_string_equal(msg, "--gpu-budget 100.00 GiB is more than the 80.00 GiB of NVIDIA H100: residency "
				 "past the GPU's memory is evicted by the driver on demand, not by the plan");
	/* With a plan, the budget over the GPU is what is warned of: its
	 * size, not the plan's capacity, whether that fits or not. */
	const char *over = "--gpu-budget 100.00 GiB is more than the 80.00 GiB of NVIDIA H100: residency past the "
			   "GPU's memory is evicted by the driver on demand, not by the plan";
	assert_true(device_fit_warning("plan.bin", 40 * GIB, 100 * GIB, "NVIDIA H100", 80 * GIB, msg, sizeof msg));
	assert_string_equal(msg, over);
	assert_true(device_fit_warning("plan.bin", 134 * GIB, 100 * GIB, "NVIDIA H100", 80 * GIB, msg, sizeof msg));
	assert_string_equal(msg, over);
}

/* A short buffer gets a cut, terminated warning. */
static void test_a_short_buffer(void **state)
{
	char msg[16];
	assert_true(device_fit_warning("plan.bin", 2 * GIB, 0, "GPU", GIB, msg, sizeof msg));
	assert_int_equal(strlen(msg), sizeof msg - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_plan_within_the_gpu_is_quiet),
		cmocka_unit_test(test_a_plan_for_a_larger_gpu_is_warned_of),
		cmocka_unit_test(test_the_budget_decides),
		cmocka_unit_test(test_a_short_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
