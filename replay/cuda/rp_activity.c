/*
 * rp_activity.c: what actually moved during the replay, from CUPTI's
 * Unified Memory counters: bytes each way, on-demand (fault-driven)
 * migrations, and GPU page-fault records; with --kernel-times also each
 * kernel's time on the GPU. Totals are kept as records arrive. For
 * --stats the records are kept too (compactly, about 40 bytes each: a
 * migrating model under ondemand makes some 150,000 a step), so that they
 * can be binned by iteration at exit, with the time the copy engines and
 * the kernels kept the GPU busy in each iteration (replay/busy.h). With
 * kernel times the launches' times are noted too, so that each fault can
 * be charged to what its kernel touched (replay/faultlaunch.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <cupti.h>

#include "common/cuda/cupti_dropped.h"
#include "common/cuda/cupti_guard.h"
#include "common/cuda/um_alloc.h"
#include "grow.h"
#include "log.h"
#include "search.h"
#include "replay/busy.h"
#include "replay/faultlaunch.h"
#include "rp.h"

#define BUFFER_BYTES (4u << 20)
#define FLUSH_PERIOD_MS 500

/* Why an HtoD migration was made, as the stats tell them apart: a page
 * a processor touched (CUPTI's COHERENCE), the driver's speculative
 * prefetch around it (PREFETCH), or anything else (the replayer's own
 * prefetches are USER). */
enum migration_cause { MIGRATION_OTHER, MIGRATION_FAULT, MIGRATION_SPECULATIVE };

/* One record, as much as the stats need. The first three kinds are
 * rp_traffic's busy_ns indexes (enum rp_busy). */
enum event_kind { EV_HTOD = RP_BUSY_HTOD, EV_DTOH = RP_BUSY_DTOH, EV_KERNEL = RP_BUSY_KERNELS, EV_FAULT_RECORD };
struct um_event {
	uint64_t start_ns, end_ns;
	uint64_t bytes;
	uint64_t address; /* migrations: the first byte moved */
	uint8_t kind; /* enum event_kind */
	uint8_t cause; /* HtoD: enum migration_cause */
	uint32_t correlation; /* kernels: CUPTI's correlation ID */
};

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rp_traffic totals;
static struct um_event *events;
static size_t n_events, cap_events;
static atomic_bool started;
static atomic_uint_fast64_t dropped; /* records CUPTI dropped */
/* The records, for --stats (rp_activity_keep_records), those that start
 * before keep_until (rp_activity_keep_until). */
static atomic_bool keeping;
static atomic_uint_fast64_t keep_until = UINT64_MAX;
/* The launches' times (rp_activity_note_launch), kernel times only. */
static pthread_mutex_t launches_lock = PTHREAD_MUTEX_INITIALIZER;
static struct launch_time *launches;
static size_t n_launches, cap_launches;

static void add(struct rp_traffic *t, const struct um_event *ev);

static void keep(struct um_event ev)
{
	pthread_mutex_lock(&events_lock);
	add(&totals, &ev);
	bool wanted = atomic_load(&keeping) && ev.start_ns < atomic_load(&keep_until);
	struct um_event *v = wanted ? room_for_one(events, n_events, &cap_events, sizeof *v, 4096) : NULL;
	if (v) {
		events = v;
		events[n_events++] = ev;
	}
	pthread_mutex_unlock(&events_lock);
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUFFER_BYTES);
	*size = *buf ? BUFFER_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buf, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			const CUpti_ActivityKernel10 *k = (const void *)rec;
			keep((struct um_event){ k->start, k->end, 0, 0, EV_KERNEL, 0, k->correlationId });
			continue;
		}
		if (rec->kind != CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)
			continue;
		const CUpti_ActivityUnifiedMemoryCounter3 *u = (const void *)rec;
		struct um_event ev = { u->start, u->end, u->value, u->address, EV_HTOD, 0, 0 };
		switch (u->counterKind) {
		case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
			ev.cause = u->flags == CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE ? MIGRATION_FAULT
				 : u->flags == CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH ? MIGRATION_SPECULATIVE
				 : MIGRATION_OTHER;
			break;
		case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
			ev.kind = EV_DTOH;
			break;
		case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
			ev.kind = EV_FAULT_RECORD;
			ev.bytes = 0;
			break;
		default:
			continue;
		}
		keep(ev);
	}
	/* Counted in the statistics too (rp_activity_dropped). */
	cupti_count_dropped(ctx, stream_id, &dropped, "the migrations and faults counted are short");
	free(buf);
}

uint64_t rp_activity_dropped(void)
{
	return atomic_load(&dropped);
}

void rp_activity_keep_records(bool keep)
{
	atomic_store(&keeping, keep);
}

void rp_activity_keep_until(uint64_t ns)
{
	atomic_store(&keep_until, ns);
}

CUptiResult rp_activity_start(bool kernel_times)
{
	const struct cupti_real *cr = cupti_real();
	CUptiResult r = cr->ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r == CUPTI_SUCCESS && kernel_times)
		r = cr->ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (r == CUPTI_SUCCESS)
		cr->ActivityFlushPeriod(FLUSH_PERIOD_MS);
	atomic_store(&started, r == CUPTI_SUCCESS);
	return r;
}

void rp_activity_note_launch(uint32_t correlation)
{
	if (!atomic_load(&keeping))
		return;
	struct launch_time x = { correlation, rp_now() };
	if (x.ns >= atomic_load(&keep_until))
		return;
	pthread_mutex_lock(&launches_lock);
	struct launch_time *v = room_for_one(launches, n_launches, &cap_launches, sizeof *v, 4096);
	if (v) {
		launches = v;
		launches[n_launches++] = x;
	}
	pthread_mutex_unlock(&launches_lock);
}

void rp_activity_hand_over(void)
{
	if (!atomic_load(&started))
		return;
	um_alloc_wait_for_gpu();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static void add(struct rp_traffic *t, const struct um_event *ev)
{
	switch ((enum event_kind)ev->kind) {
	case EV_HTOD:
		t->htod_bytes += ev->bytes;
		if (ev->cause == MIGRATION_FAULT) {
			t->fault_migrations++;
			t->fault_bytes += ev->bytes;
		} else if (ev->cause == MIGRATION_SPECULATIVE) {
			t->speculative_migrations++;
			t->speculative_bytes += ev->bytes;
		}
		break;
	case EV_DTOH:
		t->dtoh_bytes += ev->bytes;
		break;
	case EV_FAULT_RECORD:
		t->fault_records++;
		break;
	case EV_KERNEL:
		break;
	}
}

void rp_activity_totals(struct rp_traffic *out)
{
	pthread_mutex_lock(&events_lock);
	*out = totals;
	pthread_mutex_unlock(&events_lock);
}

/* The union of kind's intervals, merged (busy.h); NULL with *n 0 when
 * there are none or memory ran out. A record that ends before it starts
 * (times CUPTI could not give) is left out: busy.h's intervals end at or
 * after their start, and busy_within's sums wrap otherwise. Called with
 * events_lock held. */
static struct busy_interval *merged_intervals(enum event_kind kind, size_t *n)
{
	size_t k = 0;
	for (size_t e = 0; e < n_events; e++)
		k += events[e].kind == kind;
	struct busy_interval *v = k ? malloc(k * sizeof *v) : NULL;
	*n = 0;
	if (!v)
		return NULL;
	for (size_t e = 0; e < n_events; e++)
		if (events[e].kind == kind && events[e].end_ns >= events[e].start_ns)
			v[(*n)++] = (struct busy_interval){ events[e].start_ns, events[e].end_ns };
	*n = busy_merge(v, *n);
	return v;
}

/* How long kind kept the GPU busy in each iteration's window, into
 * out[].busy_ns[kind]. Called with events_lock held. */
static void add_busy(enum rp_busy kind, const uint64_t *ends, size_t n, struct rp_traffic *out)
{
	size_t m;
	struct busy_interval *v = merged_intervals((enum event_kind)kind, &m);
	for (size_t i = 0; v && i < n; i++)
		out[i].busy_ns[kind] = busy_within(v, m, i ? ends[i - 1] : 0, ends[i]);
	free(v);
}

static bool fault_within(const struct um_event *x, uint64_t from_ns, uint64_t to_ns)
{
	return x->kind == EV_HTOD && x->cause == MIGRATION_FAULT && x->start_ns >= from_ns && x->start_ns < to_ns;
}

/* Dates faults v[0 .. n) by their kernel's launch, where the kernel
 * records and the launches' times say (faultlaunch.h). Called with
 * events_lock held. */
static void date_by_launch(struct fault_event *v, size_t n)
{
	size_t k = 0;
	for (size_t e = 0; e < n_events; e++)
		k += events[e].kind == EV_KERNEL;
	struct kernel_span *spans = k ? malloc(k * sizeof *spans) : NULL;
	if (!spans)
		return;
	k = 0;
	for (size_t e = 0; e < n_events; e++)
		if (events[e].kind == EV_KERNEL)
			spans[k++] = (struct kernel_span){ events[e].start_ns, events[e].end_ns, events[e].correlation };
	pthread_mutex_lock(&launches_lock);
	faultlaunch_date(v, n, spans, k, launches, n_launches);
	pthread_mutex_unlock(&launches_lock);
	free(spans);
}

struct fault_event *rp_activity_faults(uint64_t from_ns, uint64_t to_ns, size_t *n)
{
	*n = 0;
	pthread_mutex_lock(&events_lock);
	size_t k = 0;
	for (size_t e = 0; e < n_events; e++)
		k += fault_within(&events[e], from_ns, to_ns);
	struct fault_event *v = k ? malloc(k * sizeof *v) : NULL;
	for (size_t e = 0; v && e < n_events; e++)
		if (fault_within(&events[e], from_ns, to_ns))
			v[(*n)++] = (struct fault_event){ events[e].start_ns, events[e].address, events[e].bytes, 0 };
	if (v)
		date_by_launch(v, *n);
	pthread_mutex_unlock(&events_lock);
	return v;
}

void rp_activity_by_iteration(const uint64_t *ends, size_t n, struct rp_traffic *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (struct rp_traffic){ 0 };
	pthread_mutex_lock(&events_lock);
	for (int kind = 0; kind < RP_BUSY_KINDS; kind++)
		add_busy((enum rp_busy)kind, ends, n, out);
	for (size_t e = 0; e < n_events; e++) {
		/* The iteration it started in: the first that ended after it. */
		size_t i = upper_bound_u64(ends, n, sizeof *ends, 0, events[e].start_ns);
		if (i < n)
			add(&out[i], &events[e]);
	}
	pthread_mutex_unlock(&events_lock);
}
