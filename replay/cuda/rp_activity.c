/*
 * rp_activity.c: what actually moved during the replay, from CUPTI's
 * Unified Memory counters: bytes each way, on-demand (fault-driven)
 * migrations, and GPU page-fault records. Records are kept (compactly) so
 * that they can be binned by iteration at exit.
 */
#include <pthread.h>
#include <stdlib.h>

#include <cupti.h>

#include "common/cuda/cupti_guard.h"
#include "log.h"
#include "rp.h"

#define BUFFER_BYTES (4u << 20)
#define FLUSH_PERIOD_MS 500

/* One UM record, as much as the stats need. */
struct um_event {
	uint64_t start_ns;
	uint64_t bytes;
	uint8_t kind; /* 0 htod, 1 dtoh, 2 fault record */
	uint8_t on_demand;
};

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static struct um_event *events;
static size_t n_events, cap_events;

static void keep(struct um_event ev)
{
	pthread_mutex_lock(&events_lock);
	if (n_events == cap_events) {
		size_t cap = cap_events ? 2 * cap_events : 4096;
		struct um_event *p = realloc(events, cap * sizeof *p);
		if (!p) {
			pthread_mutex_unlock(&events_lock);
			return;
		}
		events = p;
		cap_events = cap;
	}
	events[n_events++] = ev;
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
		if (rec->kind != CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)
			continue;
		const CUpti_ActivityUnifiedMemoryCounter3 *u = (const void *)rec;
		struct um_event ev = { u->start, u->value, 0, 0 };
		switch (u->counterKind) {
		case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
			ev.on_demand = u->flags == CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE;
			break;
		case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
			ev.kind = 1;
			break;
		case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
			ev.kind = 2;
			ev.bytes = 0;
			break;
		default:
			continue;
		}
		keep(ev);
	}
	free(buf);
}

CUptiResult rp_activity_start(void)
{
	CUptiResult r = cupti_real()->ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r == CUPTI_SUCCESS)
		cuptiActivityFlushPeriod(FLUSH_PERIOD_MS);
	return r;
}

void rp_activity_flush(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static void add(struct rp_traffic *t, const struct um_event *ev)
{
	if (ev->kind == 0) {
		t->htod_bytes += ev->bytes;
		if (ev->on_demand) {
			t->fault_migrations++;
			t->fault_bytes += ev->bytes;
		}
	} else if (ev->kind == 1) {
		t->dtoh_bytes += ev->bytes;
	} else {
		t->fault_records++;
	}
}

void rp_activity_totals(struct rp_traffic *out)
{
	*out = (struct rp_traffic){ 0 };
	pthread_mutex_lock(&events_lock);
	for (size_t i = 0; i < n_events; i++)
		add(out, &events[i]);
	pthread_mutex_unlock(&events_lock);
}

void rp_activity_by_iteration(const uint64_t *ends, size_t n, struct rp_traffic *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (struct rp_traffic){ 0 };
	pthread_mutex_lock(&events_lock);
	for (size_t e = 0; e < n_events; e++) {
		/* Iterations are few: a linear search beats sorting here. */
		for (size_t i = 0; i < n; i++) {
			if (events[e].start_ns < ends[i] && (i == 0 || events[e].start_ns >= ends[i - 1])) {
				add(&out[i], &events[e]);
				break;
			}
		}
	}
	pthread_mutex_unlock(&events_lock);
}
