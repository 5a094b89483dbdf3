/*
 * trace_writer.c: the trace writer's event calls (see trace_writer.h): the
 * queue they append to and the string intern table. The writer thread
 * (trace_writer_thread.c) turns queued events into rows; opening and closing
 * are trace_writer_file.c's.
 *
 * Producers append fixed-size events to a chunked batch under one mutex; a
 * kernel launch becomes one event plus one per argument, appended under the
 * same lock hold, so a launch and its arguments always land in the same
 * transaction.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "execid.h"
#include "gate.h"
#include "trace_writer_int.h"

/* A slot for one event at the end of the queue; NULL, counted as dropped,
 * when out of memory. The caller holds mu. */
static struct ev *push(trace_writer *w, enum ev_kind kind)
{
	struct chunk *c = w->cur.tail;
	if (!c || c->n == CHUNK_EVENTS) {
		c = w->free_chunks;
		if (c) {
			w->free_chunks = c->next;
			w->nfree--;
		} else if (!(c = malloc(sizeof *c))) {
			w->stats.dropped++;
			return NULL;
		}
		c->next = NULL;
		c->n = 0;
		if (w->cur.tail)
			w->cur.tail->next = c;
		else
			w->cur.head = c;
		w->cur.tail = c;
	}
	w->cur.n++;
	struct ev *e = &c->ev[c->n++];
	e->kind = kind;
	return e;
}

/* Locks mu for appending n events, waiting while the queue is full (the
 * writer still runs then: close stops it only once no call is inside the
 * gate). Each wait kicks the writer: another producer may have filled the
 * queue again since the take the last kick asked for. Returns -1 (nothing
 * locked) in a forked child or once close has begun. */
static int enter(trace_writer *w, size_t n)
{
	if (trace_writer_foreign(w))
		return -1;
	if (!gate_enter(&w->gate))
		return -1;
	pthread_mutex_lock(&w->mu);
	if (w->cur.n > 0 && w->cur.n + n > w->max_queued) {
		w->stats.stalls++;
		do {
			w->kicked = 1;
			pthread_cond_signal(&w->wake);
			pthread_cond_wait(&w->space, &w->mu);
		} while (w->cur.n > 0 && w->cur.n + n > w->max_queued);
	}
	return 0;
}

/* Unlocks mu, waking the writer when a batch is full. */
static void leave(trace_writer *w)
{
	if (w->cur.n > w->stats.queue_peak)
		w->stats.queue_peak = w->cur.n;
	if (w->cur.n >= w->batch_events && !w->kicked) {
		w->kicked = 1;
		pthread_cond_signal(&w->wake);
	}
	pthread_mutex_unlock(&w->mu);
	gate_leave(&w->gate);
}

/* Appends one event of a kind that carries a plain struct. */
#define QUEUE_ONE(w, kind, field, value, counter)              \
	do {                                                    \
		if (enter((w), 1) != 0)                         \
			return;                                 \
		struct ev *e_ = push((w), (kind));              \
		if (e_) {                                       \
			e_->u.field = (value);                  \
			(w)->stats.events++;                    \
			counter;                                \
		}                                               \
		leave(w);                                       \
	} while (0)

void trace_writer_meta(trace_writer *w, const char *key, const char *value)
{
	char *k = strdup(key);
	char *v = value ? strdup(value) : NULL;
	if (!k || (value && !v) || enter(w, 1) != 0) {
		free(k);
		free(v);
		return;
	}
	struct ev *e = push(w, EV_META);
	if (e) {
		e->u.meta.key = k;
		e->u.meta.value = v;
		w->stats.events++;
	} else {
		free(k);
		free(v);
	}
	leave(w);
}

/* Grows the open-addressing table to twice its size (kept at most half full). */
static int strings_grow(trace_writer *w)
{
	size_t cap = w->strings_cap ? w->strings_cap * 2 : 1024;
	struct intern_entry *t = calloc(cap, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < w->strings_cap; i++) {
		struct intern_entry *e = &w->strings[i];
		if (!e->id)
			continue;
		size_t j = e->hash & (cap - 1);
		while (t[j].id)
			j = (j + 1) & (cap - 1);
		t[j] = *e;
	}
	free(w->strings);
	w->strings = t;
	w->strings_cap = cap;
	return 0;
}

/* The id of s, interned on first sight (a message only while fewer than
 * TRACE_WRITER_MESSAGES_KEPT are); 0 when out of memory. Called with the
 * writer entered. */
static int64_t intern_entered(trace_writer *w, const char *s, bool message)
{
	size_t len = strlen(s);
	uint64_t h = execid_fnv1a(EXECID_FNV_SEED, s, len);
	if ((w->strings_n + 1) * 2 > w->strings_cap && strings_grow(w) != 0) {
		w->stats.dropped++;
		return 0;
	}
	size_t i = h & (w->strings_cap - 1);
	for (; w->strings[i].id; i = (i + 1) & (w->strings_cap - 1))
		if (w->strings[i].hash == h && strcmp(w->strings[i].s, s) == 0)
			return w->strings[i].id;
	if (message && w->messages_n >= TRACE_WRITER_MESSAGES_KEPT) {
		w->stats.messages_not_kept++;
		return intern_entered(w, TRACE_WRITER_MESSAGE_NOT_KEPT, false);
	}
	char *copy = malloc(len + 1);
	struct ev *e = copy ? push(w, EV_STRING) : NULL;
	if (!e) {
		if (!copy)
			w->stats.dropped++;
		free(copy);
		return 0;
	}
	memcpy(copy, s, len + 1);
	int64_t id = (int64_t)++w->strings_n;
	w->messages_n += message;
	w->strings[i] = (struct intern_entry){ h, id, copy };
	e->u.str.id = id;
	e->u.str.s = copy;
	w->stats.events++;
	return id;
}

static int64_t intern(trace_writer *w, const char *s, bool message)
{
	if (enter(w, 1) != 0)
		return 0;
	int64_t id = intern_entered(w, s ? s : "", message);
	leave(w);
	return id;
}

int64_t trace_writer_intern(trace_writer *w, const char *s)
{
	return intern(w, s, false);
}

int64_t trace_writer_intern_message(trace_writer *w, const char *s)
{
	return intern(w, s, true);
}

void trace_writer_stream(trace_writer *w, const struct trace_stream *s)
{
	QUEUE_ONE(w, EV_STREAM, stream, *s, (void)0);
}

void trace_writer_launch(trace_writer *w, const struct trace_launch *l)
{
	size_t nargs = l->args ? l->nargs : 0;
	if (enter(w, 1 + nargs) != 0)
		return;
	struct ev *e = push(w, EV_LAUNCH);
	if (e) {
		e->u.launch = (struct ev_launch){
			.seq = l->seq, .exec_id = l->exec_id, .launch_ns = l->launch_ns,
			.name_id = l->name_id, .correlation_id = l->correlation_id,
			.grid = { l->grid[0], l->grid[1], l->grid[2] },
			.block = { l->block[0], l->block[1], l->block[2] },
			.shared_mem = l->shared_mem, .thread_id = l->thread_id,
		};
		w->stats.events++;
		w->stats.launches++;
		for (size_t i = 0; i < nargs; i++) {
			struct ev *a = push(w, EV_ARG);
			if (!a)
				break;
			a->u.arg = (struct ev_arg){ l->correlation_id, l->args[i].param_offset,
						    l->args[i].alloc_id, l->args[i].offset };
		}
	}
	leave(w);
}

void trace_writer_kernel(trace_writer *w, const struct trace_kernel_activity *k)
{
	QUEUE_ONE(w, EV_KERNEL, kernel, *k, (w->stats.kernels++, w->stats.graph_kernels += k->graph_id != 0));
}

void trace_writer_alloc(trace_writer *w, const struct trace_alloc *a)
{
	QUEUE_ONE(w, EV_ALLOC, alloc, *a, w->stats.allocs++);
}

void trace_writer_free(trace_writer *w, uint64_t alloc_id, uint64_t free_ns, uint32_t thread_id)
{
	if (enter(w, 1) != 0)
		return;
	struct ev *e = push(w, EV_FREE);
	if (e) {
		e->u.free.id = alloc_id;
		e->u.free.ns = free_ns;
		e->u.free.thread = thread_id;
		w->stats.events++;
	}
	leave(w);
}

void trace_writer_live_at_exit(trace_writer *w, uint64_t alloc_id)
{
	QUEUE_ONE(w, EV_LIVE, live, alloc_id, (void)0);
}

void trace_writer_migration(trace_writer *w, const struct trace_migration *m)
{
	QUEUE_ONE(w, EV_MIGRATION, migration, *m, w->stats.migrations++);
}

void trace_writer_fault(trace_writer *w, const struct trace_fault *f)
{
	QUEUE_ONE(w, EV_FAULT, fault, *f, w->stats.faults++);
}

void trace_writer_nvtx(trace_writer *w, const struct trace_nvtx *r)
{
	QUEUE_ONE(w, EV_NVTX, nvtx, *r, w->stats.nvtx_ranges++);
}

void trace_writer_memcpy(trace_writer *w, const struct trace_memcpy *c)
{
	QUEUE_ONE(w, EV_MEMCPY, memcpy, *c, (void)0);
}

void trace_writer_memset(trace_writer *w, const struct trace_memset *s)
{
	QUEUE_ONE(w, EV_MEMSET, memset, *s, (void)0);
}

void trace_writer_write_dst(trace_writer *w, const struct trace_write_dst *d)
{
	QUEUE_ONE(w, EV_WRITE_DST, write_dst, *d, (void)0);
}

void trace_writer_get_stats(trace_writer *w, struct trace_writer_stats *out)
{
	if (trace_writer_foreign(w)) {
		memset(out, 0, sizeof *out);
		return;
	}
	pthread_mutex_lock(&w->mu);
	*out = w->stats;
	pthread_mutex_unlock(&w->mu);
}

int trace_writer_first_error(trace_writer *w, char *buf, size_t len)
{
	int any = 0;
	if (len)
		buf[0] = '\0';
	if (trace_writer_foreign(w))
		return 0;
	pthread_mutex_lock(&w->mu);
	if (w->stats.write_errors) {
		any = 1;
		if (len)
			snprintf(buf, len, "%s", w->first_error);
	}
	pthread_mutex_unlock(&w->mu);
	return any;
}
