/* vital.c: uses, inactive periods and deaths (see vital.h). */
#include "vital.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "grow.h"
#include "plan.h"

int vital_bucket(uint64_t ns)
{
	uint64_t limit = 10000; /* 10 us */
	for (int b = 0; b < VITAL_BUCKETS - 1; b++, limit *= 10)
		if (ns < limit)
			return b;
	return VITAL_BUCKETS - 1;
}

const char *vital_bucket_name(int b)
{
	static const char *const names[VITAL_BUCKETS] = {
		"<10us", "<100us", "<1ms", "<10ms", "<100ms", "<1s", ">=1s",
	};
	return b >= 0 && b < VITAL_BUCKETS ? names[b] : "?";
}

uint64_t vital_start_ns(const struct vital *v, uint64_t u)
{
	return (u / v->n_pos) * v->cycle_ns + v->start_ns[u % v->n_pos];
}

uint64_t vital_end_ns(const struct vital *v, uint64_t u)
{
	return (u / v->n_pos) * v->cycle_ns + v->end_ns[u % v->n_pos];
}

uint64_t vital_kernel_ns(const struct vital *v, uint32_t k)
{
	return v->end_ns[k] > v->start_ns[k] ? v->end_ns[k] - v->start_ns[k] : 0;
}

static uint64_t idle_between(const struct vital *v, uint64_t from_end, uint64_t to_start)
{
	return to_start > from_end ? to_start - from_end : 0;
}

/* The stretch of per between the use at unwrapped position U1 (position
 * from of p) and the next one, or the end, at U2. */
static void stretch(const struct vital *v, struct vital_period *per, uint32_t from, uint64_t U1, uint64_t U2,
		    uint32_t p)
{
	per->evict_at = (from + 1) % p;
	per->len = (uint32_t)(U2 - U1 - 1);
	per->idle_ns = idle_between(v, vital_end_ns(v, U1), vital_start_ns(v, U2));
}

/* ns - base when ns is later, else 0: the difference of two int64 times
 * always fits a uint64, where their signed difference may overflow. */
static uint64_t ns_since(int64_t ns, int64_t base)
{
	return ns > base ? (uint64_t)ns - (uint64_t)base : 0;
}

/* The iteration's time axis. GPU times where recorded; a kernel without
 * them starts when the previous one ended; an iteration without any GPU
 * time uses launch times. */
static void build_times(const struct trace *t, const struct tensor_set *ts, struct vital *v)
{
	const uint32_t p = ts->n_pos;
	bool any_timed = false;
	for (uint32_t k = 0; k < p && !any_timed; k++)
		any_timed = t->kernels[ts->first + k].start_ns != TRACE_NS_NONE;
	int64_t base = 0;
	for (uint32_t k = 0; k < p; k++) {
		const struct trace_kernel *kk = &t->kernels[ts->first + k];
		if (any_timed ? kk->start_ns != TRACE_NS_NONE : true) {
			base = any_timed ? kk->start_ns : kk->launch_ns;
			break;
		}
	}
	uint64_t prev_start = 0, prev_end = 0;
	for (uint32_t k = 0; k < p; k++) {
		const struct trace_kernel *kk = &t->kernels[ts->first + k];
		uint64_t s, e;
		if (!any_timed) {
			s = ns_since(kk->launch_ns, base);
			e = s;
		} else if (kk->start_ns == TRACE_NS_NONE) {
			s = e = prev_end;
		} else {
			s = ns_since(kk->start_ns, base);
			e = ns_since(kk->end_ns, base);
		}
		if (s < prev_start)
			s = prev_start;
		if (e < s)
			e = s;
		v->start_ns[k] = s;
		v->end_ns[k] = e;
		prev_start = s;
		if (e > prev_end)
			prev_end = e;
	}
	/* The cycle ends where the next iteration starts, if the trace shows
	 * it; never before the last kernel ends. */
	uint64_t cycle = prev_end;
	size_t next = ts->first + p;
	if (next < t->n_kernels) {
		const struct trace_kernel *kk = &t->kernels[next];
		int64_t ns = any_timed ? kk->start_ns : kk->launch_ns;
		if (ns != TRACE_NS_NONE && ns_since(ns, base) > cycle)
			cycle = ns_since(ns, base);
	}
	if (cycle == 0)
		cycle = 1; /* keeps unwrapped times increasing across cycles */
	v->cycle_ns = cycle;
	v->start_ns[p] = cycle;
	v->end_ns[p] = cycle;
}

static int build_uses(const struct tensor_set *ts, const struct access_set *a, struct vital *v)
{
	const uint32_t p = ts->n_pos;
	for (size_t i = 0; i < a->n_refs; i++)
		v->tv[a->tensor[i]].n_uses++;
	uint32_t acc = 0;
	for (size_t x = 0; x < ts->n; x++) {
		v->tv[x].use_first = acc;
		acc += v->tv[x].n_uses;
		v->tv[x].n_uses = 0;
	}
	v->n_uses = acc;
	v->uses = malloc((acc ? acc : 1) * sizeof *v->uses);
	if (!v->uses)
		return -1;
	for (uint32_t pos = 0; pos < p; pos++)
		for (uint32_t j = a->first[pos]; j < a->first[pos + 1]; j++) {
			struct vital_tensor *tv = &v->tv[a->tensor[j]];
			v->uses[tv->use_first + tv->n_uses++] = pos;
		}
	/* Rotate each list from position order into lifetime order. */
	for (size_t x = 0; x < ts->n; x++) {
		struct vital_tensor *tv = &v->tv[x];
		uint32_t *u = v->uses + tv->use_first, m = tv->n_uses;
		tv->first_use = tv->last_use = VITAL_NONE;
		if (!m)
			continue;
		uint32_t k = 0;
		while (k < m && u[k] < ts->t[x].alloc_pos)
			k++;
		if (k > 0 && k < m) {
			uint32_t *tmp = malloc(k * sizeof *tmp);
			if (!tmp)
				return -1;
			memcpy(tmp, u, k * sizeof *tmp);
			memmove(u, u + k, (m - k) * sizeof *u);
			memcpy(u + m - k, tmp, k * sizeof *tmp);
			free(tmp);
		}
		tv->first_use = u[0];
		tv->last_use = u[m - 1];
	}
	return 0;
}

static int add_period(struct vital *v, size_t *cap, struct vital_period per)
{
	if (per.len == 0)
		return 0;
	struct vital_period *np = room_for_one(v->periods, v->n_periods, cap, sizeof *np, 256);
	if (!np)
		return -1;
	v->periods = np;
	v->periods[v->n_periods++] = per;
	return 0;
}

static int build_periods(const struct tensor_set *ts, struct vital *v)
{
	const uint32_t p = ts->n_pos;
	size_t cap = 0;
	for (size_t x = 0; x < ts->n; x++) {
		const struct tensor *tx = &ts->t[x];
		const struct vital_tensor *tv = &v->tv[x];
		const uint32_t *u = v->uses + tv->use_first;
		const uint32_t m = tv->n_uses;
		const uint32_t base = tx->alloc_pos;
		struct vital_period per = { .tensor = (uint32_t)x, .next = (uint32_t)x, .next_at = UINT32_MAX };
		/* Unwrapped positions: base + age. */
#define AGE(pos) ((uint64_t)tensor_age(ts, tx, (pos)))
		if (tensor_whole_cycle(ts, tx)) {
			/* Live the whole cycle: gaps wrap around. */
			if (m == 0) {
				if (tx->resident_at_start) {
					per.kind = VITAL_UNUSED;
					per.from = per.to = VITAL_NONE;
					per.evict_at = 0;
					per.len = p;
					per.idle_ns = v->cycle_ns;
					if (add_period(v, &cap, per))
						return -1;
				}
				continue;
			}
			for (uint32_t i = 0; i < m; i++) {
				uint32_t from = u[i], to = u[(i + 1) % m];
				uint64_t U1 = base + AGE(from), U2 = base + AGE(to);
				if (U2 <= U1)
					U2 += p;
				per.kind = VITAL_GAP;
				per.from = from;
				per.to = to;
				stretch(v, &per, from, U1, U2, p);
				if (add_period(v, &cap, per))
					return -1;
			}
			continue;
		}
		/* A lifetime with a start and an end, ages 0 .. live_len - 1.
		 * A PREVIOUS tensor handed on starts in its ITERATION tensor's
		 * tail period (below). */
		bool handed = tx->origin == PLAN_ALLOC_PREVIOUS && ts->t[tx->twin].hands_on;
		if (tx->resident_at_start && !handed) {
			uint32_t until = m ? (uint32_t)AGE(u[0]) : tx->live_len;
			per.kind = m ? VITAL_HEAD : VITAL_UNUSED;
			per.from = VITAL_NONE;
			per.to = m ? u[0] : VITAL_NONE;
			per.evict_at = base;
			per.len = until;
			per.idle_ns = vital_start_ns(v, base + until) - vital_start_ns(v, base);
			if (add_period(v, &cap, per))
				return -1;
		}
		for (uint32_t i = 0; i + 1 < m; i++) {
			uint64_t U1 = base + AGE(u[i]), U2 = base + AGE(u[i + 1]);
			per.kind = VITAL_GAP;
			per.from = u[i];
			per.to = u[i + 1];
			stretch(v, &per, u[i], U1, U2, p);
			if (add_period(v, &cap, per))
				return -1;
		}
		if (m && tx->hands_on) {
			/* Its memory goes on as the next iteration's PREVIOUS
			 * tensor: one period from its last use to that one's
			 * first, or to its free. */
			uint32_t nx = tx->twin;
			const struct vital_tensor *nv = &v->tv[nx];
			uint64_t U1 = base + AGE(u[m - 1]);
			uint64_t U2 = p + (nv->n_uses ? v->uses[nv->use_first] : ts->t[nx].live_len);
			per.kind = nv->n_uses ? VITAL_GAP : VITAL_TAIL;
			per.from = u[m - 1];
			per.to = nv->n_uses ? v->uses[nv->use_first] : VITAL_NONE;
			stretch(v, &per, u[m - 1], U1, U2, p);
			per.next = nx;
			per.next_at = (uint32_t)(p - U1 - 1);
			if (add_period(v, &cap, per))
				return -1;
			v->deaths += !nv->n_uses && ts->t[nx].freed;
		} else if (m) {
			uint64_t U1 = base + AGE(u[m - 1]), U2 = base + (uint64_t)tx->live_len;
			per.kind = VITAL_TAIL;
			per.from = u[m - 1];
			per.to = VITAL_NONE;
			stretch(v, &per, u[m - 1], U1, U2, p);
			if (add_period(v, &cap, per))
				return -1;
			v->deaths += tx->freed;
		}
#undef AGE
	}
	return 0;
}

/* ---- block granularity ---- */

struct block_event {
	uint64_t block;
	uint32_t tensor;
	uint8_t start; /* 0: the tensor's range ends before block; 1: begins at it */
};

static int cmp_event(const void *a, const void *b)
{
	const struct block_event *x = a, *y = b;
	if (x->block != y->block)
		return (x->block > y->block) - (x->block < y->block);
	if (x->start != y->start)
		return x->start - y->start;
	return (x->tensor > y->tensor) - (x->tensor < y->tensor);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Blocks shared by several tensors (packed small tensors, or a range the
 * arena hands to one tensor after another) take the union of their uses:
 * a block's inactive periods are the cyclic gaps between its uses. A sweep
 * over block numbers finds runs of blocks with the same tensors, so each run
 * is computed once. */
static int build_block_hist(const struct tensor_set *ts, struct vital *v)
{
	const uint32_t p = ts->n_pos;
	size_t n_used = 0;
	for (size_t x = 0; x < ts->n; x++)
		n_used += v->tv[x].n_uses > 0 && ts->t[x].bytes > 0;
	struct block_event *ev = malloc((n_used ? 2 * n_used : 1) * sizeof *ev);
	uint32_t *active = malloc((n_used ? n_used : 1) * sizeof *active);
	uint32_t *pos = malloc((v->n_uses ? v->n_uses : 1) * sizeof *pos);
	if (!ev || !active || !pos) {
		free(ev);
		free(active);
		free(pos);
		return -1;
	}
	size_t ne = 0;
	for (size_t x = 0; x < ts->n; x++) {
		if (!v->tv[x].n_uses || !ts->t[x].bytes)
			continue;
		uint64_t b0, b1;
		access_blocks(ts->t[x].address, ts->t[x].bytes, &b0, &b1);
		ev[ne++] = (struct block_event){ b0, (uint32_t)x, 1 };
		ev[ne++] = (struct block_event){ b1 + 1, (uint32_t)x, 0 };
	}
	qsort(ev, ne, sizeof *ev, cmp_event);
	size_t n_active = 0;
	for (size_t i = 0; i < ne; i++) {
		if (ev[i].start) {
			active[n_active++] = ev[i].tensor;
		} else {
			for (size_t j = 0; j < n_active; j++)
				if (active[j] == ev[i].tensor) {
					active[j] = active[--n_active];
					break;
				}
		}
		if (i + 1 < ne && ev[i + 1].block == ev[i].block)
			continue;
		if (!n_active || i + 1 == ne)
			continue;
		uint64_t run = ev[i + 1].block - ev[i].block;
		size_t k = 0;
		for (size_t j = 0; j < n_active; j++) {
			const struct vital_tensor *tv = &v->tv[active[j]];
			memcpy(pos + k, v->uses + tv->use_first, tv->n_uses * sizeof *pos);
			k += tv->n_uses;
		}
		qsort(pos, k, sizeof *pos, cmp_u32);
		size_t m = 0;
		for (size_t j = 0; j < k; j++)
			if (j == 0 || pos[j] != pos[j - 1])
				pos[m++] = pos[j];
		v->n_blocks += run;
		for (size_t j = 0; j < m; j++) {
			uint64_t U1 = pos[j], U2 = j + 1 < m ? pos[j + 1] : (uint64_t)pos[0] + p;
			if (U2 - U1 < 2)
				continue;
			uint64_t idle = idle_between(v, vital_end_ns(v, U1), vital_start_ns(v, U2));
			v->block_hist[vital_bucket(idle)] += run;
		}
	}
	free(ev);
	free(active);
	free(pos);
	return 0;
}

/* Whether a copy or memset may have written the instance between its
 * allocation and its first kernel's GPU start, or the host, which may
 * write the program's own managed memory at any time. */
static void find_early_writes(const struct trace *t, const struct tensor_set *ts, struct vital *v)
{
	for (size_t x = 0; x < ts->n; x++) {
		const struct tensor *tx = &ts->t[x];
		struct vital_tensor *tv = &v->tv[x];
		if (tx->origin != PLAN_ALLOC_ITERATION || !tv->n_uses)
			continue;
		/* The planned instance is allocated at unwrapped position
		 * (alloc_pos or p); its first use follows. */
		const struct trace_alloc *ta = &t->allocs[tx->trace_alloc];
		size_t a = ts->first + tx->alloc_pos;
		if (ta->alloc_ns > t->kernels[ts->first].launch_ns && tx->alloc_pos == 0)
			a += ts->n_pos; /* allocated at the very end: used next iteration */
		size_t k = a + tensor_age(ts, tx, tv->first_use);
		int64_t until = k < t->n_kernels && t->kernels[k].start_ns != TRACE_NS_NONE
			? t->kernels[k].start_ns : INT64_MAX;
		/* A copy issued between the allocation's launch gap and the
		 * first use may have filled it. */
		tv->written_before_use = trace_host_writes(t, ta) || trace_write_between(t, ta, a, k, ta->alloc_ns, until);
	}
}

int vital_build(const struct trace *t, const struct tensor_set *ts, const struct access_set *a,
		struct vital *v, char *err, size_t errlen)
{
	memset(v, 0, sizeof *v);
	const uint32_t p = ts->n_pos;
	v->n_pos = p;
	v->start_ns = malloc(((size_t)p + 1) * sizeof *v->start_ns);
	v->end_ns = malloc(((size_t)p + 1) * sizeof *v->end_ns);
	v->tv = calloc(ts->n ? ts->n : 1, sizeof *v->tv);
	if (!v->start_ns || !v->end_ns || !v->tv)
		goto oom;
	build_times(t, ts, v);
	if (v->cycle_ns > VITAL_MAX_CYCLE_NS) {
		um_errmsg(err, errlen, "%s: the planned iteration's kernels span %.0f s (more than %.0f): "
			  "not a trace umrec wrote", t->path, v->cycle_ns / 1e9, VITAL_MAX_CYCLE_NS / 1e9);
		vital_free(v);
		return -1;
	}
	if (build_uses(ts, a, v) || build_periods(ts, v) || build_block_hist(ts, v))
		goto oom;
	find_early_writes(t, ts, v);
	for (size_t i = 0; i < v->n_periods; i++) {
		int b = vital_bucket(v->periods[i].idle_ns);
		v->tensor_hist[b]++;
		v->tensor_hist_bytes[b] += ts->t[v->periods[i].tensor].bytes;
	}
	return 0;
oom:
	vital_free(v);
	um_errmsg(err, errlen, "%s: out of memory in the vitality analysis", t->path);
	return -1;
}

void vital_free(struct vital *v)
{
	free(v->start_ns);
	free(v->end_ns);
	free(v->tv);
	free(v->uses);
	free(v->periods);
	memset(v, 0, sizeof *v);
}
