/*
 * rec_inject.c: libumrec.so's entry and exit.
 *
 * The CUDA driver calls InitializeInjection() during cuInit when
 * CUDA_INJECTION64_PATH names this library (umrec sets it, and LD_PRELOADs
 * the same file for the allocator shim, so both roles share one instance).
 * The first process that initialises CUDA with UMKIT_TRACE set owns the
 * trace: it claims the file, which umrec set aside beforehand, so that any
 * other process handed the same path (a child given a copy of the
 * environment taken before the variable went, a sibling) leaves it alone;
 * and it removes UMKIT_TRACE from its environment, so processes it starts
 * later are not even tried.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#include "common/cuda/capture.h"
#include "common/cuda/cupti_guard.h"
#include "common/cuda/um_alloc.h"
#include "common/cuda/um_backend.h"
#include "log.h"
#include "rec.h"

trace_writer *rec_writer;
struct gate rec_gate = GATE_SHUT;
static CUpti_SubscriberHandle subscriber;

uint64_t rec_now(void)
{
	uint64_t t = 0;
	cuptiGetTimestamp(&t);
	return t;
}

uint32_t rec_tid(void)
{
	static __thread uint32_t tid;
	if (!tid)
		tid = (uint32_t)syscall(SYS_gettid);
	return tid;
}

void rec_meta_u64(const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
	trace_writer_meta(rec_writer, key, buf);
}

static void mark_live(void *ctx, const struct arena_alloc *a)
{
	trace_writer_live_at_exit(rec_writer, a->id);
}

/* What trace_writer_close or _abandon returned, told the user. */
static void report_close(int rc, const char *err)
{
	if (rc < 0)
		um_error("%s", err);
	else if (rc > 0)
		um_warn("%s", err);
}

static void finish(void)
{
	char err[512];
	if (!rec_writer)
		return;
	/* Before the notes of the program's calls on streams stop: a free
	 * from here on follows no stream, and waits for the whole context
	 * instead. */
	um_backend_launches_unseen();
	/* Then no more launch rows, so that the flush hands over the times of
	 * every kernel recorded; the gate stays open for it. */
	cupti_real()->Unsubscribe(subscriber);
	rec_activity_flush();
	gate_close(&rec_gate);
	rec_callbacks_finish();
	arena *a = um_alloc_arena();
	if (a)
		arena_foreach_live(a, mark_live, NULL);
	rec_meta_u64("dropped_records", rec_activity_dropped());
	rec_meta_u64("captured_launches", rec_callbacks_captured_launches());
	struct um_alloc_stats as;
	um_alloc_get_stats(&as);
	rec_meta_u64("runtime_allocs", as.runtime_allocs);
	rec_meta_u64("runtime_alloc_bytes", as.runtime_bytes);
	rec_meta_u64("driver_allocs", as.driver_allocs);
	rec_meta_u64("driver_alloc_bytes", as.driver_bytes);
	rec_meta_u64("driver_alloc_peak_bytes", as.driver_peak_bytes);
	rec_meta_u64("driver_managed_allocs", as.driver_managed_allocs);
	rec_meta_u64("driver_managed_alloc_bytes", as.driver_managed_bytes);
	rec_meta_u64("driver_managed_alloc_peak_bytes", as.driver_managed_peak_bytes);
	report_close(trace_writer_close(rec_writer, rec_now(), err, sizeof err), err);
	rec_writer = NULL;
}

/* A forked child shares the parent's trace handle but not its writer
 * thread: it must not touch the trace. */
static void forget_in_child(void)
{
	gate_shut(&rec_gate);
	rec_writer = NULL;
}

static void write_run_meta(void)
{
	const char *keys[][2] = {
		{ "command", "UMKIT_COMMAND" },
		{ "options", "UMKIT_OPTIONS" },
		{ "max_managed", "UMKIT_MAX_MANAGED" },
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v = getenv(keys[i][1]);
		if (v)
			trace_writer_meta(rec_writer, keys[i][0], v);
	}
	trace_writer_meta(rec_writer, "managed", um_alloc_managed() ? "1" : "0");
	/* With the cache on, a PyTorch program's allocations are its segments:
	 * the replay must run it so too (the plan carries this). */
	trace_writer_meta(rec_writer, "framework_cache", capture_pytorch_cache_off() ? "0" : "1");
	rec_meta_u64("pid", (uint64_t)getpid());
	rec_meta_u64("start_ns", rec_now());
	uint32_t v = 0;
	if (cuptiGetVersion(&v) == CUPTI_SUCCESS)
		rec_meta_u64("cupti_version", v);
	int dv = 0;
	if (cuDriverGetVersion(&dv) == CUDA_SUCCESS)
		rec_meta_u64("driver_version", (uint64_t)dv);
}

int InitializeInjection(void);
int InitializeInjection(void)
{
	char err[512] = "out of memory";
	um_log_init("umrec");
	const char *env = getenv("UMKIT_TRACE");
	if (!env || !*env) {
		um_debug("UMKIT_TRACE is not set: process %d is not recorded", (int)getpid());
		return 1;
	}
	char *path = strdup(env);
	unsetenv("UMKIT_TRACE");
	if (path && trace_writer_claim(path) != 0) {
		if (errno == EEXIST)
			um_info("process %d is not recorded: %s is another process's trace", (int)getpid(), path);
		else
			um_error("%s: cannot create: %s; this run is not recorded", path, strerror(errno));
		free(path);
		return 1;
	}
	const struct trace_writer_options opt = { .claimed = true };
	rec_writer = path ? trace_writer_open(path, &opt, err, sizeof err) : NULL;
	free(path);
	if (!rec_writer) {
		um_error("%s; this run is not recorded", err);
		return 1;
	}
	write_run_meta();
	um_alloc_warn_unserved("the trace will hold no allocation of it, so no plan can move it");
	CUptiResult r = rec_callbacks_start(&subscriber);
	if (r == CUPTI_SUCCESS && (r = rec_activity_start()) != CUPTI_SUCCESS)
		rec_callbacks_stop(subscriber);
	if (r != CUPTI_SUCCESS) {
		const char *msg = "?";
		cuptiGetResultString(r, &msg);
		um_error("CUPTI set-up failed (%s); this run is not recorded", msg);
		report_close(trace_writer_abandon(rec_writer, rec_now(), msg, err, sizeof err), err);
		rec_writer = NULL;
		return 1;
	}
	cupti_guard_hold("umrec");
	um_backend_launches_seen(true);
	pthread_atfork(NULL, NULL, forget_in_child);
	gate_open(&rec_gate);
	atexit(finish);
	return 1;
}
