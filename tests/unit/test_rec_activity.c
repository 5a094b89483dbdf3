/*
 * Unit tests for the recorder's activity set-up (record/cuda/rec_activity.c),
 * linked with fakes of the CUPTI calls it makes: no GPU, no CUPTI. The fake
 * keeps the set of activity kinds enabled, as CUPTI would. The exit's
 * forced flush comes after the wait for the GPU, and notes counters never
 * enabled in the trace it writes.
 */
#include "testutil.h"

#include <cupti.h>
#include <sqlite3.h>

#include "common/cuda/cupti_guard.h"
#include "common/cuda/cupti_um.h"
#include "fake_hand_over.h"
#include "record/cuda/rec.h"
#include "record/trace_writer.h"

/* ---- what the recorder's other parts define ---- */

trace_writer *rec_writer;
struct gate rec_gate;

/* ---- the fakes ---- */

static bool enabled[CUPTI_ACTIVITY_KIND_COUNT];
static int refuse_enable_call; /* the nth ActivityEnable fails (from 1); 0: none */
static int enable_calls;
static bool refuse_register;

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

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	return CUPTI_ERROR_MAX_LIMIT_REACHED;
}

enum cupti_um_state cupti_um_enable(const char **why)
{
	return CUPTI_UM_TRYING;
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

/* The trace the exit path writes to, at path. */
static bool open_rec_writer(char *path, size_t len, const char *name)
{
	char err[512];
	test_path(path, len, name);
	rec_writer = trace_writer_open(path, NULL, err, sizeof err);
	return rec_writer != NULL;
}

static bool close_rec_writer(void)
{
	char err[512];
	int rc = trace_writer_close(rec_writer, 1, err, sizeof err);
	rec_writer = NULL;
	return rc == 0;
}

/* meta's value of key in the trace at path starts with prefix. */
static bool meta_starts(const char *path, const char *key, const char *prefix)
{
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	bool found = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
		     sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) == SQLITE_OK &&
		     sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
		     strncmp((const char *)sqlite3_column_text(st, 0), prefix, strlen(prefix)) == 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	return found;
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
	char path[512];
	assert_true(open_rec_writer(path, sizeof path, "kinds.db"));
	rec_activity_flush();
	assert_true(close_rec_writer());
	assert_int_equal(forced_flushes, 1);
}

/* A run that never launched a kernel outside a graph's capture never
 * enabled the Unified Memory counters: the exit notes that in
 * meta.um_counters, which stayed absent until session 77. In a child:
 * the note is made once per process, and the other tests flush too. */
static bool never_enabled_noted(void)
{
	char path[512];
	if (!open_rec_writer(path, sizeof path, "um_never.db") || rec_activity_start() != CUPTI_SUCCESS)
		return false;
	rec_activity_flush();
	return close_rec_writer() && meta_starts(path, "um_counters", "none: not enabled");
}

static void counters_never_enabled_noted(void **state)
{
	test_in_child(never_enabled_noted);
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
		/* First: its child starts from this process's state, and no
		 * exit path may have noted the counters yet. */
		cmocka_unit_test_setup(counters_never_enabled_noted, setup),
		cmocka_unit_test_setup(a_refused_kind_leaves_none_on, setup),
		cmocka_unit_test_setup(refused_buffers_enable_nothing, setup),
		cmocka_unit_test_setup(every_kind_is_enabled, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
