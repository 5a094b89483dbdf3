/* dryrun.c: the engine driven through a recorded trace (see dryrun.h). */
#include "dryrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "oplog.h"

static int by_time(const void *a, const void *b)
{
	const struct dryrun_event *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return (x->index > y->index) - (x->index < y->index);
}

struct dryrun_event *dryrun_events(const struct trace *t, size_t *n)
{
	struct dryrun_event *ev = malloc((t->n_kernels + 2 * t->n_allocs + 1) * sizeof *ev);
	size_t k = 0;
	if (!ev)
		return NULL;
	for (uint32_t i = 0; i < t->n_kernels; i++)
		ev[k++] = (struct dryrun_event){ t->kernels[i].launch_ns, DRYRUN_LAUNCH, i };
	for (uint32_t i = 0; i < t->n_allocs; i++) {
		const struct trace_alloc *a = &t->allocs[i];
		ev[k++] = (struct dryrun_event){ a->alloc_ns, DRYRUN_ALLOC, i };
		enum dryrun_event_kind free_kind = a->free_ns == a->alloc_ns ? DRYRUN_LATE_FREE : DRYRUN_FREE;
		if (a->free_ns != TRACE_NS_NEVER)
			ev[k++] = (struct dryrun_event){ a->free_ns, free_kind, i };
	}
	qsort(ev, k, sizeof *ev, by_time);
	*n = k;
	return ev;
}

/* How far the counters went from a to b. */
static struct dryrun_counts counts_between(const struct engine_stats *a, const struct engine_stats *b)
{
	struct dryrun_counts c = {
		.launches = b->launches - a->launches,
		.matched = b->matched - a->matched,
		.shaped = b->shaped - a->shaped,
		.resynced = b->resynced - a->resynced,
		.lost = b->lost - a->lost,
		.budget_evictions = b->budget_evictions - a->budget_evictions,
		.refault_blocks = b->refault_blocks - a->refault_blocks,
		.refault_budget_blocks = b->refault_budget_blocks - a->refault_budget_blocks,
		.refault_shared_blocks = b->refault_shared_blocks - a->refault_shared_blocks,
		.unread_evicted_blocks = b->unread_evicted_blocks - a->unread_evicted_blocks,
	};
	for (int k = 0; k < 4; k++) {
		c.ops[k] = b->ops[k] - a->ops[k];
		c.bytes[k] = b->bytes[k] - a->bytes[k];
	}
	return c;
}

/* Launch kp of t, told to the engine as libumreplay.so tells it (not while
 * the engine does not follow launches); acc has room for every argument.
 * Returns engine_on_launch's news. */
static bool launch(engine *e, const struct trace *t, uint32_t kp, struct engine_access *acc)
{
	if (!engine_follows_launches(e))
		return false;
	size_t n = 0;
	for (uint32_t j = t->arg_first[kp]; j < t->arg_first[kp + 1]; j++)
		acc[n++] = (struct engine_access){ t->allocs[t->arg_alloc[j]].id };
	bool news = engine_on_launch(e, t->kernels[kp].exec_id, t->kernels[kp].shape_id, acc, n);
	engine_after_launch(e);
	return news;
}

/* After a launch with news: the row of the iteration it completed (the
 * counters since *last, which it then becomes), and the verdict. Returns
 * 0, or -1 when out of memory. */
static int note_news(engine *e, struct dryrun_result *out, size_t *cap, struct engine_stats *last)
{
	struct engine_stats st;
	engine_get_stats(e, &st);
	if (st.iterations > out->n_iterations) {
		struct dryrun_counts *p = room_for_one(out->iterations, out->n_iterations, cap, sizeof *p, 64);
		if (!p)
			return -1;
		out->iterations = p;
		out->iterations[out->n_iterations++] = counts_between(last, &st);
		*last = st;
	}
	if (st.signature_mismatch)
		out->foreign_at = st.launches;
	return 0;
}

/* Feeds the events ev[0 .. n) of t to e until the end or the foreign
 * verdict, clearing the log behind each (nothing reads the entries).
 * Returns 0, or -1 when out of memory. */
static int feed(engine *e, oplog *log, const struct trace *t, const struct dryrun_event *ev, size_t n,
		struct engine_access *acc, struct dryrun_result *out, struct engine_stats *last)
{
	size_t cap = 0;
	for (size_t i = 0; i < n && !out->foreign_at; i++) {
		oplog_set_time(log, (uint64_t)(ev[i].ns - ev[0].ns));
		if (ev[i].kind == DRYRUN_ALLOC) {
			const struct trace_alloc *a = &t->allocs[ev[i].index];
			if (trace_host_writes(t, a))
				engine_on_managed_alloc(e, a->id, a->address, a->size);
			else
				engine_on_alloc(e, a->id, a->address, a->size);
		} else if (ev[i].kind != DRYRUN_LAUNCH) {
			engine_on_free(e, t->allocs[ev[i].index].id);
		} else if (launch(e, t, ev[i].index, acc) && note_news(e, out, &cap, last) != 0) {
			return -1;
		}
		if (oplog_failed(log))
			return -1;
		oplog_clear(log);
	}
	return 0;
}

int dryrun_run(const struct trace *t, const struct engine_config *cfg, struct dryrun_result *out,
	       char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	size_t n_ev = 0;
	struct dryrun_event *ev = dryrun_events(t, &n_ev);
	struct engine_access *acc = malloc((t->n_args + 1) * sizeof *acc);
	oplog *log = oplog_create();
	struct engine_executor x = log ? oplog_executor(log) : (struct engine_executor){ 0 };
	struct engine_stats last = { 0 }; /* at the latest iteration's end */
	engine *e = NULL;
	int rc = -1;
	if (!ev || !acc || !log) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	e = engine_create(cfg, &x, err, errlen);
	if (!e)
		goto done;
	if (feed(e, log, t, ev, n_ev, acc, out, &last) != 0) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	engine_get_stats(e, &out->stats);
	out->tail = counts_between(&last, &out->stats);
	out->total = counts_between(&(struct engine_stats){ 0 }, &out->stats);
	out->iteration_ns = malloc((out->stats.iterations + 1) * sizeof *out->iteration_ns);
	if (!out->iteration_ns) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	out->n_iteration_ns = engine_iteration_times(e, out->iteration_ns, out->stats.iterations);
	rc = 0;
done:
	if (rc != 0)
		dryrun_result_free(out);
	engine_destroy(e);
	oplog_destroy(log);
	free(acc);
	free(ev);
	return rc;
}

void dryrun_result_free(struct dryrun_result *r)
{
	free(r->iterations);
	free(r->iteration_ns);
	memset(r, 0, sizeof *r);
}
