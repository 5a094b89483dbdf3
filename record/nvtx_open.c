/* nvtx_open.c: the NVTX ranges open in a recorded process (nvtx_open.h). */
#include "nvtx_open.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

/* Open ranges in the order they opened. A process has few open at a time
 * (nesting depth times threads, plus started ranges not yet ended), so a
 * close searches from the newest and shifts the rest down. */
struct entry {
	bool started; /* by nvtxRangeStart: id names it; else pushed */
	uint64_t id;
	struct trace_nvtx r;
};

struct nvtx_open {
	pthread_mutex_t lock;
	struct entry *v;
	size_t n, cap;
};

nvtx_open *nvtx_open_create(void)
{
	nvtx_open *o = calloc(1, sizeof *o);
	if (o)
		pthread_mutex_init(&o->lock, NULL);
	return o;
}

void nvtx_open_destroy(nvtx_open *o)
{
	if (!o)
		return;
	pthread_mutex_destroy(&o->lock);
	free(o->v);
	free(o);
}

static bool add(nvtx_open *o, bool started, uint64_t id, const struct trace_nvtx *r)
{
	pthread_mutex_lock(&o->lock);
	struct entry *v = room_for_one(o->v, o->n, &o->cap, sizeof *v, 16);
	if (v) {
		o->v = v;
		o->v[o->n++] = (struct entry){ started, id, *r };
	}
	pthread_mutex_unlock(&o->lock);
	return v != NULL;
}

bool nvtx_open_push(nvtx_open *o, const struct trace_nvtx *r)
{
	return add(o, false, 0, r);
}

bool nvtx_open_start(nvtx_open *o, uint64_t id, const struct trace_nvtx *r)
{
	return add(o, true, id, r);
}

/* Removes the newest entry that is started with id (started) or pushed on
 * thread_id (!started) into *out, closed at end_ns. */
static bool take(nvtx_open *o, bool started, uint64_t key, uint64_t end_ns, struct trace_nvtx *out)
{
	bool found = false;
	pthread_mutex_lock(&o->lock);
	for (size_t i = o->n; i-- > 0;) {
		const struct entry *e = &o->v[i];
		if (e->started != started || (started ? e->id : e->r.thread_id) != key)
			continue;
		*out = e->r;
		out->end_ns = end_ns;
		memmove(&o->v[i], &o->v[i + 1], (o->n - i - 1) * sizeof *o->v);
		o->n--;
		found = true;
		break;
	}
	pthread_mutex_unlock(&o->lock);
	return found;
}

bool nvtx_open_pop(nvtx_open *o, uint32_t thread_id, uint64_t end_ns, struct trace_nvtx *out)
{
	return take(o, false, thread_id, end_ns, out);
}

bool nvtx_open_end(nvtx_open *o, uint64_t id, uint64_t end_ns, struct trace_nvtx *out)
{
	return take(o, true, id, end_ns, out);
}

void nvtx_open_drain(nvtx_open *o, void (*fn)(void *ctx, const struct trace_nvtx *r), void *ctx)
{
	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < o->n; i++) {
		struct trace_nvtx r = o->v[i].r;
		r.end_ns = 0;
		fn(ctx, &r);
	}
	o->n = 0;
	pthread_mutex_unlock(&o->lock);
}
