/*
 * Unit tests for libumreplay.so's entry (replay/cuda/rp_inject.c), linked
 * with fakes of CUPTI, of the driver and of the replayer's other pieces:
 * no GPU, no CUPTI. Its strdup is wrapped to fail on demand
 * (-Wl,--wrap=strdup, Makefile).
 *
 * Whatever goes wrong at the entry, the program runs on: a setting the
 * library cannot keep for want of memory gives one warning and a plain
 * run, never a crash, nor a replay that silently lacks it.
 *
 * The library's state is the process's, so each case runs in a child.
 */
#include "testutil.h"

#include <cuda.h>
#include <cupti.h>

#include "common/cuda/cupti_guard.h"
#include "common/cuda/um_alloc.h"
#include "common/cuda/um_backend.h"
#include "plan_sample.h"
#include "replay/cuda/rp.h"

int InitializeInjection(void);

char *__real_strdup(const char *s);
char *__wrap_strdup(const char *s);

static bool strdup_fails;

char *__wrap_strdup(const char *s)
{
	return strdup_fails ? NULL : __real_strdup(s);
}

/* ---- fakes: the replay goes on past its settings when the callbacks
 * are started ---- */

static bool callbacks_started;

CUptiResult rp_callbacks_start(bool kernel_times)
{
	callbacks_started = true;
	return CUPTI_SUCCESS;
}

static void issue(void *ctx, enum engine_op op, const struct engine_range *ranges, size_t n, uint64_t wait_mark,
		  uint64_t ticket, uint64_t room)
{
}

static uint64_t mark(void *ctx)
{
	return 0;
}

const struct engine_executor *rp_exec_get(void)
{
	static const struct engine_executor x = { .issue = issue, .mark = mark };
	return &x;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *t)
{
	*t = 0;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = "CUPTI_ERROR_FAKE";
	return CUPTI_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *d)
{
	return CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice d)
{
	return CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
	return CUDA_ERROR_INVALID_DEVICE;
}

void cupti_guard_hold(const char *tool)
{
}

void um_alloc_warn_unserved(const char *consequence)
{
}

void um_alloc_get_stats(struct um_alloc_stats *out)
{
	*out = (struct um_alloc_stats){ 0 };
}

void um_backend_launches_unseen(void)
{
}

void rp_activity_keep_records(bool keep)
{
}

void rp_activity_hand_over(void)
{
}

uint64_t rp_activity_dropped(void)
{
	return 0;
}

void rp_activity_totals(struct rp_traffic *out)
{
	*out = (struct rp_traffic){ 0 };
}

void rp_activity_by_iteration(const uint64_t *ends, size_t n, struct rp_traffic *out)
{
}

struct fault_event *rp_activity_faults(uint64_t from_ns, uint64_t to_ns, size_t *n)
{
	*n = 0;
	return NULL;
}

uint64_t rp_callback_ns(void)
{
	return 0;
}

bool rp_callbacks_may_wake(void)
{
	return true;
}

void rp_callbacks_stop(void)
{
}

bool rp_callbacks_stopped_at_graph(void)
{
	return false;
}

bool rp_callbacks_stopped_at_reset(void)
{
	return false;
}

uint64_t rp_callbacks_other_context_launches(void)
{
	return 0;
}

void rp_exec_drain(void)
{
}

void rp_exec_get_stats(struct rp_exec_stats *out)
{
	*out = (struct rp_exec_stats){ 0 };
}

size_t rp_iteration_ends(struct rp_iteration_end *out, size_t max)
{
	return 0;
}

uint64_t rp_residency_stop(void)
{
	return 0;
}

/* ---- the cases ---- */

static bool said(bool ok, const char *what)
{
	if (!ok)
		fprintf(stderr, "%s\n", what);
	return ok;
}

static int injected;

static void inject(void)
{
	injected = InitializeInjection();
}

/* The library starts with strdup failing; true when it ran the program
 * plain (no callbacks) and warned that memory ran out. */
static bool plain_run_warned(void)
{
	strdup_fails = true;
	const char *err = stderr_of(inject);
	strdup_fails = false;
	return said(injected == 1, "the injection failed") &&
	       said(!callbacks_started, "the replay went on without a setting it could not keep") &&
	       said(strstr(err, "out of memory") != NULL, "no warning that memory ran out");
}

/* The stats file's path: without it the run's stats were silently not
 * written. */
static bool stats_path_kept_or_plain(void)
{
	char path[512];
	setenv("UMKIT_POLICY", "ondemand", 1);
	setenv("UMKIT_STATS", test_path(path, sizeof path, "stats.json"), 1);
	return plain_run_warned();
}

static void an_unkept_stats_path_runs_plain(void **state)
{
	test_in_child(stats_path_kept_or_plain);
}

/* The plan's path, which the warnings name: without it they were given
 * a NULL string. */
static bool plan_path_kept_or_plain(void)
{
	char path[512], err[256];
	struct plan *p = sample_plan();
	if (!said(p && plan_save(p, test_path(path, sizeof path, "sample.plan"), err, sizeof err) == 0,
		  "no plan written"))
		return false;
	plan_destroy(p);
	setenv("UMKIT_POLICY", "plan", 1);
	setenv("UMKIT_PLAN", path, 1);
	return plain_run_warned();
}

static void an_unkept_plan_path_runs_plain(void **state)
{
	test_in_child(plan_path_kept_or_plain);
}

/* With memory, the same settings replay. */
static bool settings_kept(void)
{
	char path[512], err[256];
	struct plan *p = sample_plan();
	if (!said(p && plan_save(p, test_path(path, sizeof path, "sample2.plan"), err, sizeof err) == 0,
		  "no plan written"))
		return false;
	plan_destroy(p);
	setenv("UMKIT_POLICY", "plan", 1);
	setenv("UMKIT_PLAN", path, 1);
	setenv("UMKIT_STATS", test_path(path, sizeof path, "stats2.json"), 1);
	inject();
	return said(injected == 1 && callbacks_started, "the replay did not start");
}

static void kept_settings_replay(void **state)
{
	test_in_child(settings_kept);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(an_unkept_stats_path_runs_plain),
		cmocka_unit_test(an_unkept_plan_path_runs_plain),
		cmocka_unit_test(kept_settings_replay),
	};
	return cmocka_run_group_tests_name("rp_inject", tests, NULL, NULL);
}
