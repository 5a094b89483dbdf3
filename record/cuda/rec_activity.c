/*
 * rec_activity.c: the records CUPTI delivers in buffers, after the fact:
 * kernel executions with GPU timestamps, memcpy/memset, and the Unified
 * Memory counters (migrations, which are complete, and GPU page faults,
 * which are a sample: h100-facts.md).
 *
 * CUPTI calls buffer_completed on its own thread; records are converted and
 * queued for the writer there. CUPTI hands over a buffer only when it is
 * full (its own periodic flush did not deliver partly filled buffers on the
 * H100 machine: a run killed after 5 s had no kernel times), so a thread of
 * ours asks for a flush every FLUSH_PERIOD_MS. Not a forced one: that hands
 * over the records of kernels still queued with times of 0, and CUPTI never
 * sends them again (516 of the 11,548 kernels of the BERT-large fixture,
 * recorded so before session 48, have none). A default flush hands over
 * the buffers whose records are all complete, full or not; the buffers are
 * small, so that a killed run loses the times of a few thousand kernels at
 * most. Only at exit, after the GPU's work is waited for, is the flush
 * forced.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include <cupti.h>

#include "clock.h"
#include "common/cuda/cupti_dropped.h"
#include "common/cuda/cupti_guard.h"
#include "common/cuda/cupti_um.h"
#include "common/cuda/um_alloc.h"
#include "log.h"
#include "rec.h"
#include "thread.h"

#define BUFFER_BYTES (1u << 20)
#define FLUSH_PERIOD_MS 500

static atomic_uint_fast64_t dropped;

static pthread_t flusher;
static bool flusher_running;
static pthread_mutex_t flusher_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flusher_cond = PTHREAD_COND_INITIALIZER;
static bool flusher_stop;

static void *flush_periodically(void *arg)
{
	pthread_mutex_lock(&flusher_lock);
	while (!flusher_stop) {
		struct timespec t = um_deadline_in(FLUSH_PERIOD_MS * 1000000ull); /* flusher_cond's clock */
		if (pthread_cond_timedwait(&flusher_cond, &flusher_lock, &t) != 0 && !flusher_stop) {
			pthread_mutex_unlock(&flusher_lock);
			cuptiActivityFlushAll(0);
			pthread_mutex_lock(&flusher_lock);
		}
	}
	pthread_mutex_unlock(&flusher_lock);
	return NULL;
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUFFER_BYTES);
	*size = *buf ? BUFFER_BYTES : 0;
	*max_records = 0;
}

static const char *copy_kind(uint8_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "htod";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "dtoh";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "dtod";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "htoh";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "ptop";
	default: return "unknown";
	}
}

static void on_unified_memory(const CUpti_ActivityUnifiedMemoryCounter3 *u)
{
	switch (u->counterKind) {
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH: {
		/* The trace's cause enum follows CUPTI's migration-cause values. */
		struct trace_migration m = {
			u->start, u->end, u->address, u->value,
			u->counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD
				? TRACE_HTOD : TRACE_DTOH,
			u->flags <= CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS
				? (enum trace_cause)u->flags : TRACE_CAUSE_UNKNOWN,
		};
		trace_writer_migration(rec_writer, &m);
		break;
	}
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT: {
		struct trace_fault f = {
			u->start, u->end, u->address,
			u->flags <= CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_PREFETCH
				? (enum trace_access)u->flags : TRACE_ACCESS_UNKNOWN,
			u->value,
		};
		trace_writer_fault(rec_writer, &f);
		break;
	}
	default:
		break;
	}
}

static void on_record(const CUpti_Activity *rec)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)rec;
		struct trace_kernel_activity a = {
			.correlation_id = k->correlationId,
			.name_id = trace_writer_intern(rec_writer, k->name ? k->name : "<unknown>"),
			.grid = { (uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ },
			.block = { (uint32_t)k->blockX, (uint32_t)k->blockY, (uint32_t)k->blockZ },
			.shared_mem = (uint32_t)k->dynamicSharedMemory,
			.stream_id = k->streamId,
			.context_id = k->contextId,
			.start_ns = k->start,
			.end_ns = k->end,
			.graph_id = k->graphId,
			.graph_node_id = k->graphNodeId,
		};
		trace_writer_kernel(rec_writer, &a);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *c = (const void *)rec;
		struct trace_memcpy m = { c->correlationId, copy_kind(c->copyKind), c->bytes,
					  c->streamId, c->contextId, c->start, c->end };
		trace_writer_memcpy(rec_writer, &m);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *s = (const void *)rec;
		struct trace_memset m = { s->correlationId, s->bytes, s->value, s->streamId,
					  s->contextId, s->start, s->end };
		trace_writer_memset(rec_writer, &m);
		break;
	}
	case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
		on_unified_memory((const void *)rec);
		break;
	default:
		break;
	}
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buf, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;
	if (gate_enter(&rec_gate)) {
		while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
			on_record(rec);
		gate_leave(&rec_gate);
	}
	cupti_count_dropped(ctx, stream_id, &dropped, "the trace is incomplete");
	free(buf);
}

CUptiResult rec_activity_start(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET,
	};
	const struct cupti_real *cr = cupti_real();
	CUptiResult r = cr->ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	size_t on = 0;
	while (r == CUPTI_SUCCESS && on < sizeof kinds / sizeof *kinds)
		if ((r = cr->ActivityEnable(kinds[on])) == CUPTI_SUCCESS)
			on++;
	if (r != CUPTI_SUCCESS) {
		/* The run goes on unrecorded: CUPTI is not to go on timing its
		 * kernels for buffers nobody reads. */
		while (on > 0)
			cr->ActivityDisable(kinds[--on]);
		return r;
	}
	/* Timed by the monotonic clock: a step of the wall clock neither
	 * stalls nor hurries the flushes. */
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&flusher_cond, &ca);
	pthread_condattr_destroy(&ca);
	flusher_running = thread_start_unsignalled(&flusher, flush_periodically, NULL) == 0;
	return CUPTI_SUCCESS;
}

/* Whether meta.um_counters is written. */
static atomic_int um_noted;

void rec_activity_enable_um(void)
{
	const char *why;
	enum cupti_um_state st = cupti_um_enable(&why);
	if (st == CUPTI_UM_TRYING || atomic_exchange(&um_noted, 1))
		return;
	trace_writer_meta(rec_writer, "um_counters",
			  st == CUPTI_UM_ENABLED_WITH_FAULTS ? "migrations,faults"
			  : st == CUPTI_UM_ENABLED_MIGRATIONS_ONLY ? "migrations" : why);
}

void rec_activity_flush(void)
{
	if (flusher_running) {
		pthread_mutex_lock(&flusher_lock);
		flusher_stop = true;
		pthread_cond_signal(&flusher_cond);
		pthread_mutex_unlock(&flusher_lock);
		pthread_join(flusher, NULL);
		flusher_running = false;
	}
	/* A run that launched no kernel outside a CUDA graph's capture never
	 * enabled the counters: the trace says so, rather than nothing. */
	if (!atomic_exchange(&um_noted, 1))
		trace_writer_meta(rec_writer, "um_counters",
				  "none: not enabled by the end of the run (they are enabled at the first kernel "
				  "launched outside a CUDA graph's capture)");
	rec_activity_hand_over();
}

void rec_activity_hand_over(void)
{
	um_alloc_wait_for_gpu();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

uint64_t rec_activity_dropped(void)
{
	return atomic_load(&dropped);
}
