/*
 * Unit tests for the replayer's activity records (replay/cuda/rp_activity.c),
 * linked with fakes of the CUPTI calls it makes: no GPU, no CUPTI. The
 * records are handed over only once the GPU's work is done, never by an
 * idle replay; each Unified Memory record lands in its total by direction
 * and cause. The file's state lives as long as the process: the tests run
 * in order, the first before the start.
 */
#include "testutil.h"

#include <cupti.h>

#include "common/cuda/cupti_guard.h"
#include "fake_hand_over.h"
#include "replay/cuda/rp.h"

/* ---- what the replayer's other parts define ---- */

uint64_t rp_now(void)
{
	return 0;
}

/* ---- the fakes ---- */

static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static CUpti_Activity *const *records; /* what the next buffer holds */
static size_t n_records, next_record;

static CUptiResult fake_register(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
	requested = req;
	completed = done;
	return CUPTI_SUCCESS;
}

static CUptiResult fake_enable(CUpti_ActivityKind kind)
{
	return CUPTI_SUCCESS;
}

static CUptiResult fake_flush_period(uint32_t ms)
{
	return CUPTI_SUCCESS;
}

const struct cupti_real *cupti_real(void)
{
	static const struct cupti_real real = {
		.ActivityRegisterCallbacks = fake_register,
		.ActivityEnable = fake_enable,
		.ActivityFlushPeriod = fake_flush_period,
	};
	return &real;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	if (next_record == n_records)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = records[next_record++];
	return CUPTI_SUCCESS;
}

/* CUPTI delivers a buffer holding v[0 .. n). */
static void deliver(CUpti_Activity *const *v, size_t n)
{
	uint8_t *buf;
	size_t size, max_records;
	requested(&buf, &size, &max_records);
	assert_non_null(buf);
	records = v;
	n_records = n;
	next_record = 0;
	completed(NULL, 0, buf, size, 0);
}

static CUpti_ActivityUnifiedMemoryCounter3 migration(CUpti_ActivityUnifiedMemoryCounterKind kind, uint32_t cause,
						     uint64_t bytes)
{
	return (CUpti_ActivityUnifiedMemoryCounter3){ .kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER,
						     .counterKind = kind,
						     .flags = cause,
						     .value = bytes,
						     .start = 100,
						     .end = 200 };
}

/* ---- the tests ---- */

/* An idle replay never started the records: nothing to wait for, and no
 * flush. */
static void idle_hands_over_nothing(void **state)
{
	rp_activity_hand_over();
	assert_false(gpu_waited);
	assert_int_equal(forced_flushes, 0);
}

/* Started, the hand-over waits for the GPU, then forces the flush. */
static void hand_over_after_the_gpu(void **state)
{
	assert_int_equal(rp_activity_start(true), CUPTI_SUCCESS);
	rp_activity_hand_over();
	assert_true(gpu_waited);
	assert_int_equal(forced_flushes, 1);
}

/* An HtoD migration a processor's touch caused is an on-demand one, the
 * driver's prefetch around it speculative, the replayer's own (USER)
 * neither; DtoH bytes and fault records counted apart; a kernel's record
 * moves nothing. */
static void migrations_counted_by_cause(void **state)
{
	CUpti_ActivityUnifiedMemoryCounter3 fault = migration(
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE, 4096);
	CUpti_ActivityUnifiedMemoryCounter3 speculative = migration(
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH, 65536);
	CUpti_ActivityUnifiedMemoryCounter3 user = migration(
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER, 2 << 20);
	CUpti_ActivityUnifiedMemoryCounter3 out = migration(
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION, 1 << 20);
	CUpti_ActivityUnifiedMemoryCounter3 page_fault = migration(
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 0, 7);
	CUpti_ActivityKernel10 kernel = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .start = 100, .end = 300 };
	CUpti_Activity *const v[] = { (void *)&fault, (void *)&speculative, (void *)&user,
				      (void *)&out,   (void *)&page_fault,  (void *)&kernel };
	deliver(v, sizeof v / sizeof *v);
	struct rp_traffic t;
	rp_activity_totals(&t);
	assert_int_equal(t.htod_bytes, 4096 + 65536 + (2 << 20));
	assert_int_equal(t.fault_migrations, 1);
	assert_int_equal(t.fault_bytes, 4096);
	assert_int_equal(t.speculative_migrations, 1);
	assert_int_equal(t.speculative_bytes, 65536);
	assert_int_equal(t.dtoh_bytes, 1 << 20);
	assert_int_equal(t.fault_records, 1);
}

/* A kernel record whose end is before its start (times CUPTI could not
 * give) is no busy time: the kernels' time in a window is the other's. */
static void untimed_records_not_busy(void **state)
{
	rp_activity_keep_records(true);
	CUpti_ActivityKernel10 timed = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .start = 1100, .end = 1300 };
	CUpti_ActivityKernel10 untimed = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .start = 1500, .end = 0 };
	CUpti_Activity *const v[] = { (void *)&timed, (void *)&untimed };
	deliver(v, sizeof v / sizeof *v);
	uint64_t ends[] = { 1000, 2000 };
	struct rp_traffic t[2];
	rp_activity_by_iteration(ends, 2, t);
	assert_int_equal(t[1].busy_ns[RP_BUSY_KERNELS], 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(idle_hands_over_nothing),
		cmocka_unit_test(hand_over_after_the_gpu),
		cmocka_unit_test(migrations_counted_by_cause),
		cmocka_unit_test(untimed_records_not_busy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
