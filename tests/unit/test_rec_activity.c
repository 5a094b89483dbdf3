/*
 * Unit tests for the recorder's activity set-up (record/cuda/rec_activity.c),
 * linked with fakes of the CUPTI calls it makes: no GPU, no CUPTI. The fake
 * keeps the set of activity kinds enabled, as CUPTI would.
 */
#include "testutil.h"

#include <cupti.h>

#include "common/cuda/cupti_dropped.h"
#include "common/cuda/cupti_guard.h"
#include "common/cuda/cupti_um.h"
#include "common/cuda/um_alloc.h"
#include "record/cuda/rec.h"

/* ---- what the recorder's other parts define ---- */

trace_writer *rec_writer;
struct gate rec_gate;

/* ---- the fakes ---- */

static bool enabled[CUPTI_ACTIVITY_KIND_COUNT];
static int refuse_enable_call; /* the nth ActivityEnable fails (from 1); 0: none */
static int enable_calls;
static bool refuse_register;
static int forced_flushes;
static bool gpu_waited;

static CUptiResult fake_register(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
	return refuse_register ? CUPTI_ERROR_NOT_INITIALIZED : CUPTI_SUCCESS;
}

static CUptiResult fake_enable(CUpti_ActivityKind kind)
{
	if (++enable_calls == refuse_enable_call)
		return CUPTI_ERROR_NOT_COMPATIBLE;
	enabled[kind] = true;
	return CUPTI_SUCCESS;
}

static CUptiResult fake_disable(CUpti_ActivityKind kind)
{
	assert_true(enabled[kind]); /* only what was enabled */
	enabled[kind] = false;
	return CUPTI_SUCCESS;
}

const struct cupti_real *cupti_real(void)
{
	static const struct cupti_real real = {
		.ActivityRegisterCallbacks = fake_register,
		.ActivityEnable = fake_enable,
		.ActivityDisable = fake_disable,
	};
	return &real;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	if (flag == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
		assert_true(gpu_waited); /* kernels still queued would lose their times */
		forced_flushes++;
	}
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	return CUPTI_ERROR_MAX_LIMIT_REACHED;
}

void cupti_count_dropped(CUcontext ctx, uint32_t stream_id, atomic_uint_fast64_t *count, const char *consequence)
{
}

enum cupti_um_state cupti_um_enable(const char **why)
{
	return CUPTI_UM_TRYING;
}

void um_alloc_wait_for_gpu(void)
{
	gpu_waited = true;
}

static int setup(void **state)
{
	memset(enabled, 0, sizeof enabled);
	refuse_enable_call = 0;
	enable_calls = 0;
	refuse_register = false;
	forced_flushes = 0;
	gpu_waited = false;
	return 0;
}

static int kinds_on(void)
{
	int n = 0;
	for (size_t k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		n += enabled[k];
	return n;
}

/* ---- the tests ---- */

/* Kernels, copies and memsets are recorded; the exit path's flush is
 * forced (after the GPU's work is waited for). */
static void every_kind_is_enabled(void **state)
{
	assert_int_equal(rec_activity_start(), CUPTI_SUCCESS);
	assert_true(enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
	assert_true(enabled[CUPTI_ACTIVITY_KIND_MEMCPY]);
	assert_true(enabled[CUPTI_ACTIVITY_KIND_MEMSET]);
	assert_int_equal(kinds_on(), 3);
	rec_activity_flush();
	assert_int_equal(forced_flushes, 1);
}

/* A kind CUPTI refuses fails the set-up, and the run goes on unrecorded
 * with no kind left on, where those before it stayed enabled: CUPTI
 * timed every kernel for buffers nobody read. */
static void a_refused_kind_leaves_none_on(void **state)
{
	for (int refused = 1; refused <= 3; refused++) {
		setup(state);
		refuse_enable_call = refused;
		assert_int_equal(rec_activity_start(), CUPTI_ERROR_NOT_COMPATIBLE);
		assert_int_equal(enable_calls, refused);
		assert_int_equal(kinds_on(), 0);
	}
}

static void refused_buffers_enable_nothing(void **state)
{
	refuse_register = true;
	assert_int_equal(rec_activity_start(), CUPTI_ERROR_NOT_INITIALIZED);
	assert_int_equal(enable_calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(a_refused_kind_leaves_none_on, setup),
		cmocka_unit_test_setup(refused_buffers_enable_nothing, setup),
		cmocka_unit_test_setup(every_kind_is_enabled, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
