/* sched.c: G10-style eviction, eager prefetch, discard (see sched.h). */
#include "sched.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockmates.h"
#include "errmsg.h"
#include "grow.h"
#include "link.h"
#include "minmax.h"

/* One eviction candidate: an inactive period, and what has been decided for
 * it. Offsets count kernels from evict_at; offset i is position
 * (evict_at + i) % p. */
struct cand {
	uint32_t tensor;
	int64_t bytes;       /* footprint: what residency counts */
	uint32_t evict_at, len;
	uint32_t from, to;   /* uses around the period, VITAL_NONE if none */
	uint32_t next, next_at; /* offsets [next_at, len) are tensor next's
				   (vital_period) */
	bool prefetch;       /* the data is needed again (to != VITAL_NONE) */
	bool selected, forced;
	uint32_t nr;         /* plan model: offsets [0, nr) are evicted; the
				prefetch is issued at offset nr */
	uint32_t t_from;     /* in-flight model: offsets [t_from, nr) are out */
	uint32_t evict_off;  /* the eviction is issued at this offset (< nr):
				0, or later where phase_lazy delays it */
	int64_t slack;       /* idle link time between eviction end and
				prefetch start, for the eager order */
	int64_t de, dp;      /* eviction and prefetch durations */
};

struct ctx {
	const struct tensor_set *ts;
	const struct access_set *a;
	const struct vital *v;
	const struct sched_options *o;
	uint32_t p;
	int64_t *pos_res;  /* plan model residency */
	int64_t *time_res; /* in-flight model residency (>= pos_res) */
	int64_t *target;   /* max(capacity, working set) */
	size_t time_over, pos_over; /* positions above target in each model */
	struct link mig;   /* the driver's migrations, both directions */
	struct cand *c;
	size_t nc;
};

uint64_t sched_headroom(uint64_t capacity, uint32_t headroom_pct)
{
	if (headroom_pct > 50)
		headroom_pct = 50;
	return capacity - capacity / 100 * headroom_pct;
}

static uint32_t pos_of(const struct ctx *x, const struct cand *c, uint64_t i)
{
	return (uint32_t)((c->evict_at + i) % x->p);
}

/* Unwrapped position of offset i, shifted one cycle so that the use before
 * offset 0 is never negative. */
static uint64_t U(const struct ctx *x, const struct cand *c, int64_t i)
{
	return (uint64_t)((int64_t)x->p + c->evict_at + i);
}

static int64_t start_at(const struct ctx *x, uint64_t u)
{
	return (int64_t)vital_start_ns(x->v, u);
}

/* A transfer that never ends: no link, or a time that would not fit the
 * schedule's arithmetic. */
#define NEVER_NS (INT64_MAX / 4)

/* A transfer's time; NEVER_NS when there is no link or the time would not
 * fit. */
static int64_t transfer_ns(uint64_t bytes, uint64_t bytes_per_s, uint64_t call_ns)
{
	double ns = bytes_per_s ? (double)call_ns + (double)bytes * 1e9 / (double)bytes_per_s : (double)NEVER_NS;
	return ns < (double)NEVER_NS ? (int64_t)ns : NEVER_NS;
}

/* total plus a time of d: forever (UINT64_MAX) once a transfer never
 * ends, or where the sum would wrap. */
static uint64_t add_time(uint64_t total, int64_t d)
{
	return d >= NEVER_NS ? UINT64_MAX : add_sat_u64(total, (uint64_t)d);
}

/* Adds delta to one model's residency over offsets [from, to) of c, keeping
 * its count of positions above target. */
static void add_range(struct ctx *x, int64_t *res, size_t *over, const struct cand *c,
		      uint32_t from, uint32_t to, int64_t delta)
{
	for (uint32_t i = from; i < to; i++) {
		uint32_t k = pos_of(x, c, i);
		bool was = res[k] > x->target[k];
		res[k] += delta;
		bool is = res[k] > x->target[k];
		*over += (size_t)is - (size_t)was;
	}
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* ---- phase 1: smart eviction ---- */

struct plan1 {
	int64_t es, ps;  /* reserved starts of the eviction and prefetch */
	uint32_t k1, w;  /* in-flight non-resident offsets [k1, w) */
};

/* The score of candidate c given the links and pressure now, 0 if it cannot
 * help; fills how it would be scheduled. */
static double score1(const struct ctx *x, const struct cand *c, struct plan1 *out)
{
	if (c->bytes <= 0)
		return 0;
	int64_t ready = c->from != VITAL_NONE ? (int64_t)vital_end_ns(x->v, U(x, c, -1))
					       : start_at(x, U(x, c, 0));
	int64_t es = link_earliest(&x->mig, ready, c->de);
	if (es == LINK_NONE)
		return 0;
	int64_t ed = es + c->de;
	/* First offset whose kernel starts after the eviction is done. */
	uint32_t lo = 0, hi = c->len;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (start_at(x, U(x, c, mid)) < ed)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint32_t k1 = lo, w = c->len;
	int64_t ps = 0;
	if (c->prefetch) {
		/* Done within a cycle of the eviction's start: a period may
		 * last longer than the cycle (vital.c), and a prefetch later
		 * than that would run during the eviction on the link's
		 * circle, where one transfer fits at a time. */
		int64_t deadline = min64(start_at(x, U(x, c, c->len)), es + x->mig.cycle_ns);
		ps = link_latest(&x->mig, deadline, c->dp);
		if (ps == LINK_NONE || ps < ed)
			return 0;
		/* Issue at the last kernel starting no later than ps. */
		lo = k1;
		hi = c->len;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo + 1) / 2;
			if (start_at(x, U(x, c, mid)) <= ps)
				lo = mid;
			else
				hi = mid - 1;
		}
		w = lo;
		if (start_at(x, U(x, c, w)) > ps)
			return 0;
	}
	if (w <= k1)
		return 0;
	double gain = 0;
	for (uint32_t i = k1; i < w; i++) {
		uint32_t k = pos_of(x, c, i);
		int64_t excess = x->time_res[k] - x->target[k];
		if (excess <= 0)
			continue;
		int64_t dur = (int64_t)vital_kernel_ns(x->v, k);
		gain += (double)min64(c->bytes, excess) * (double)(dur > 1000 ? dur : 1000);
	}
	out->es = es;
	out->ps = ps;
	out->k1 = k1;
	out->w = w;
	return gain / (double)(c->de + (c->prefetch ? c->dp : 0));
}

struct heap_item {
	double score;
	uint32_t cand;
};

struct heap {
	struct heap_item *h;
	size_t n;
};

/* Max-heap by score; equal scores: lower candidate index first, so the
 * order never depends on anything but the input. */
static bool above(struct heap_item a, struct heap_item b)
{
	return a.score > b.score || (a.score == b.score && a.cand < b.cand);
}

static void heap_push(struct heap *h, struct heap_item it)
{
	size_t i = h->n++;
	h->h[i] = it;
	while (i > 0 && above(h->h[i], h->h[(i - 1) / 2])) {
		struct heap_item t = h->h[i];
		h->h[i] = h->h[(i - 1) / 2];
		h->h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct heap_item heap_pop(struct heap *h)
{
	struct heap_item top = h->h[0];
	h->h[0] = h->h[--h->n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && above(h->h[l], h->h[m]))
			m = l;
		if (r < h->n && above(h->h[r], h->h[m]))
			m = r;
		if (m == i)
			break;
		struct heap_item t = h->h[i];
		h->h[i] = h->h[m];
		h->h[m] = t;
		i = m;
	}
	return top;
}

static int phase_smart(struct ctx *x, struct heap *h)
{
	h->n = 0;
	struct plan1 pl;
	for (size_t i = 0; i < x->nc; i++) {
		double s = score1(x, &x->c[i], &pl);
		if (s > 0)
			heap_push(h, (struct heap_item){ s, (uint32_t)i });
	}
	while (h->n && x->time_over) {
		struct heap_item it = heap_pop(h);
		struct cand *c = &x->c[it.cand];
		double s = score1(x, c, &pl);
		if (s <= 0)
			continue; /* scores never rise again: drop it */
		if (h->n && above(h->h[0], (struct heap_item){ s, it.cand })) {
			heap_push(h, (struct heap_item){ s, it.cand });
			continue;
		}
		if (link_reserve(&x->mig, pl.es, c->de) ||
		    (c->prefetch && link_reserve(&x->mig, pl.ps, c->dp)))
			return -1;
		c->selected = true;
		c->nr = pl.w;
		c->t_from = pl.k1;
		c->slack = c->prefetch ? pl.ps - (pl.es + c->de) : INT64_MAX;
		add_range(x, x->pos_res, &x->pos_over, c, 0, pl.w, -c->bytes);
		add_range(x, x->time_res, &x->time_over, c, pl.k1, pl.w, -c->bytes);
	}
	return 0;
}

/* ---- phase 2: forced eviction at kernel granularity ---- */

/* Gain of making offsets [nr or 0, len) non-resident in the plan model. */
static double score2(const struct ctx *x, const struct cand *c)
{
	if (c->bytes <= 0)
		return 0;
	uint32_t from = c->selected ? c->nr : 0;
	double gain = 0;
	for (uint32_t i = from; i < c->len; i++) {
		uint32_t k = pos_of(x, c, i);
		int64_t excess = x->pos_res[k] - x->target[k];
		if (excess > 0)
			gain += (double)min64(c->bytes, excess);
	}
	int64_t cost = c->selected ? c->dp : c->de + (c->prefetch ? c->dp : 0);
	return gain / (double)(cost > 0 ? cost : 1);
}

static void phase_forced(struct ctx *x, struct heap *h)
{
	h->n = 0;
	for (size_t i = 0; i < x->nc; i++) {
		double s = score2(x, &x->c[i]);
		if (s > 0)
			heap_push(h, (struct heap_item){ s, (uint32_t)i });
	}
	while (h->n && x->pos_over) {
		struct heap_item it = heap_pop(h);
		struct cand *c = &x->c[it.cand];
		double s = score2(x, c);
		if (s <= 0)
			continue;
		if (h->n && above(h->h[0], (struct heap_item){ s, it.cand })) {
			heap_push(h, (struct heap_item){ s, it.cand });
			continue;
		}
		uint32_t from = c->selected ? c->nr : 0;
		add_range(x, x->pos_res, &x->pos_over, c, from, c->len, -c->bytes);
		add_range(x, x->time_res, &x->time_over, c, from, c->len, -c->bytes);
		if (!c->selected)
			c->t_from = 0;
		c->selected = c->forced = true;
		c->nr = c->len;
	}
}

/* ---- phase 3: eager prefetch, dropping unneeded evictions ---- */

static const struct ctx *order_ctx;

static int cmp_eager(const void *a, const void *b)
{
	const struct cand *x = &order_ctx->c[*(const uint32_t *)a];
	const struct cand *y = &order_ctx->c[*(const uint32_t *)b];
	if (x->forced != y->forced)
		return x->forced ? -1 : 1;
	if (x->slack != y->slack)
		return x->slack < y->slack ? -1 : 1;
	return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static bool fits(const struct ctx *x, uint32_t k, int64_t bytes)
{
	return x->pos_res[k] + bytes <= x->target[k];
}

/* What giving offsets [from, to) of c back to residency adds at the
 * position of offset i, one of them. A period may be longer than the
 * cycle: an iteration tensor's memory idle on as the next iteration's
 * PREVIOUS tensor, up to that one's first use or its free (vital.c).
 * Offsets i and i + p are then one position and two instances, both live
 * there and both out while the period is: its bytes twice. */
static int64_t bytes_at(const struct ctx *x, const struct cand *c, uint32_t from, uint32_t to, uint32_t i)
{
	return c->bytes * (1 + (i >= (uint64_t)from + x->p) + ((uint64_t)i + x->p < to));
}

static int phase_eager(struct ctx *x, struct sched_result *r)
{
	size_t n = 0;
	uint32_t *order = malloc((x->nc ? x->nc : 1) * sizeof *order);
	if (!order)
		return -1;
	for (size_t i = 0; i < x->nc; i++)
		if (x->c[i].selected)
			order[n++] = (uint32_t)i;
	order_ctx = x;
	qsort(order, n, sizeof *order, cmp_eager);
	for (size_t j = 0; j < n; j++) {
		struct cand *c = &x->c[order[j]];
		bool all = true;
		for (uint32_t i = 0; i < c->nr && all; i++)
			all = fits(x, pos_of(x, c, i), bytes_at(x, c, 0, c->nr, i));
		uint32_t w = 0;
		if (!all) {
			if (!c->prefetch)
				continue;
			w = c->nr;
			while (w > 1 && fits(x, pos_of(x, c, w - 1), bytes_at(x, c, w - 1, c->nr, w - 1)))
				w--;
		}
		add_range(x, x->pos_res, &x->pos_over, c, w, c->nr, c->bytes);
		if (c->t_from < c->nr)
			add_range(x, x->time_res, &x->time_over, c, w > c->t_from ? w : c->t_from,
				  c->nr, c->bytes);
		if (w < c->t_from)
			c->t_from = w;
		c->nr = w;
		if (all) {
			c->selected = c->forced = false;
			r->dropped++;
		}
	}
	free(order);
	return 0;
}

/* ---- ops ---- */

struct op_buf {
	struct plan_op *ops;
	size_t n, cap;
};

static int emit(struct op_buf *b, uint32_t position, uint8_t kind, uint32_t after,
		uint32_t deadline, uint32_t tensor, uint64_t bytes)
{
	struct plan_op *ops = room_for_one(b->ops, b->n, &b->cap, sizeof *ops, 256);
	if (!ops)
		return -1;
	b->ops = ops;
	b->ops[b->n++] = (struct plan_op){ .position = position, .kind = kind, .after = after,
		.deadline = deadline, .alloc = tensor, .offset = 0, .bytes = bytes };
	return 0;
}

/* A prefetch of bytes, dp long on the link, issued at offset issued of c
 * for the use at offset needed: its bytes, its busy time, and the stall
 * where the copy is not done by the use (a late prefetch). */
static void count_prefetch(const struct ctx *x, const struct cand *c, uint32_t issued, uint32_t needed,
			   uint64_t bytes, int64_t dp, struct sched_result *r)
{
	r->prefetch_bytes += bytes;
	r->htod_busy_ns = add_time(r->htod_busy_ns, dp);
	int64_t avail = start_at(x, U(x, c, needed)) - start_at(x, U(x, c, issued));
	if (dp > avail) {
		r->stall_ns = add_time(r->stall_ns, dp >= NEVER_NS ? dp : dp - avail);
		r->late_prefetches++;
		r->late_prefetch_bytes += bytes;
	}
}

/* Births: bring fresh iteration tensors in at their allocation when
 * capacity allows (DISCARD_PREFETCH: no stale data is copied), or as early
 * as it allows with a plain PREFETCH when a copy may have filled them. */
static int births(struct ctx *x, struct op_buf *b, struct sched_result *r)
{
	const struct tensor_set *ts = x->ts;
	for (size_t t = 0; t < ts->n; t++) {
		const struct tensor *tx = &ts->t[t];
		const struct vital_tensor *tv = &x->v->tv[t];
		if (tx->origin != PLAN_ALLOC_ITERATION || !tv->n_uses || !tx->size)
			continue;
		uint32_t age = tensor_age(ts, tx, tv->first_use);
		/* A pseudo-candidate walks the ages from the allocation. */
		struct cand c = { .evict_at = tx->alloc_pos };
		int64_t bytes = (int64_t)tx->bytes;
		uint32_t w = age;
		while (w > 0 && fits(x, pos_of(x, &c, w - 1), bytes))
			w--;
		if (tv->written_before_use) {
			add_range(x, x->pos_res, &x->pos_over, &c, w, age, bytes);
			add_range(x, x->time_res, &x->time_over, &c, w, age, bytes);
			if (emit(b, pos_of(x, &c, w), PLAN_OP_PREFETCH, PLAN_POS_NONE, tv->first_use,
				 (uint32_t)t, tx->size))
				return -1;
			count_prefetch(x, &c, w, age, tx->size,
				       transfer_ns(tx->size, x->o->htod_bytes_per_s, x->o->call_cost_ns), r);
		} else if (w == 0) {
			add_range(x, x->pos_res, &x->pos_over, &c, 0, age, bytes);
			add_range(x, x->time_res, &x->time_over, &c, 0, age, bytes);
			if (emit(b, tx->alloc_pos, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE,
				 tv->first_use, (uint32_t)t, tx->size))
				return -1;
			r->discard_prefetch_bytes += tx->size;
		}
	}
	return 0;
}

/* Deaths and births matter only under pressure. When everything fits (the
 * residency without evictions never exceeds capacity), a freed range can
 * stay resident for the arena's next tensor; discarding it would cost a
 * call at the death and another to populate the range again at the birth
 * (a kernel touching a discarded range faults on every page:
 * tests/gpu/um_costs.py). */
static int deaths_and_births(struct ctx *x, struct op_buf *b, struct sched_result *r)
{
	const struct tensor_set *ts = x->ts;
	if (r->baseline_peak <= x->o->capacity)
		return 0;
	/* Deaths: discard where the program frees a used tensor. */
	for (size_t t = 0; t < ts->n; t++) {
		const struct tensor *tx = &ts->t[t];
		const struct vital_tensor *tv = &x->v->tv[t];
		if (!tx->freed || !tv->n_uses || !tx->size)
			continue;
		/* Freed in the gap where its next instance is made (live the
		 * whole cycle): there its ordinal names the new instance, which
		 * is live, so the replayer would skip the discard. A previous
		 * instance freed at the iteration's end is the same case. */
		if (tx->origin != PLAN_ALLOC_PERSISTENT && tx->live_len >= ts->n_pos)
			continue;
		if (emit(b, tensor_free_pos(ts, tx), PLAN_OP_DISCARD, tv->last_use, PLAN_POS_NONE,
			 (uint32_t)t, tx->size))
			return -1;
		r->discard_bytes += tx->size;
	}
	return births(x, b, r);
}

/* ---- lazy eviction of shared blocks ---- */

/* The replayer moves whole 2 MB blocks: evicting a tensor packed in a
 * block with others takes them out too, and the next use of one that is
 * live meanwhile faults the block back. So such an eviction is issued as
 * late as the capacity allows, at the first kernel of its stretch where
 * the model needs its room, not as its inactive period begins (G10's
 * eager eviction, which frees the room and hides the copy early: kept
 * for a tensor with blocks of its own). The room before that kernel is
 * what the other ops left (births included), taken in candidate order;
 * phase_eager dropped every eviction the capacity does not need at some
 * offset before nr. The copy keeps the link time phase_smart reserved,
 * as a prefetch phase_eager moves does; the in-flight model counts the
 * tensor up to the new offset. */
static int phase_lazy(struct ctx *x)
{
	struct blockmates m;
	if (blockmates_build(x->ts, &m))
		return -1;
	for (size_t i = 0; i < x->nc; i++) {
		struct cand *c = &x->c[i];
		if (!c->selected || !blockmates_live(&m, x->ts, c->tensor, c->next, c->evict_at, c->nr))
			continue;
		uint32_t at = 0;
		while (at < c->nr && fits(x, pos_of(x, c, at), bytes_at(x, c, 0, at + 1, at)))
			at++;
		c->evict_off = at;
		/* A tensor live the whole cycle that no kernel uses is never
		 * brought back: a steady run has it out at every position,
		 * wherever in the cycle its eviction stands (plan_check). */
		if (c->from == VITAL_NONE && !c->prefetch && tensor_whole_cycle(x->ts, &x->ts->t[c->tensor]))
			continue;
		add_range(x, x->pos_res, &x->pos_over, c, 0, at, c->bytes);
		if (c->t_from < at) {
			add_range(x, x->time_res, &x->time_over, c, c->t_from, at, c->bytes);
			c->t_from = at;
		}
	}
	blockmates_free(&m);
	return 0;
}

/* The chosen evictions and the prefetches that bring their tensors back. */
static int emit_moves(struct ctx *x, struct op_buf *b, struct sched_result *r)
{
	const struct tensor_set *ts = x->ts;
	for (size_t i = 0; i < x->nc; i++) {
		const struct cand *c = &x->c[i];
		uint64_t size = ts->t[c->tensor].size;
		if (!c->selected)
			continue;
		r->evictions++;
		r->forced += c->forced;
		/* Each op named as the tensor the memory is at its offset. */
		uint32_t whose = c->evict_off >= c->next_at ? c->next : c->tensor;
		if (emit(b, pos_of(x, c, c->evict_off), PLAN_OP_EVICT, c->from == VITAL_NONE ? PLAN_POS_NONE : c->from,
			 PLAN_POS_NONE, whose, size))
			return -1;
		r->evict_bytes += size;
		r->dtoh_busy_ns = add_time(r->dtoh_busy_ns, c->de);
		if (!c->prefetch) {
			/* A tensor unused all iteration has no use before. */
			if (c->from != VITAL_NONE)
				r->tail_evict_bytes += size;
			continue;
		}
		whose = c->nr >= c->next_at ? c->next : c->tensor;
		if (emit(b, pos_of(x, c, c->nr), PLAN_OP_PREFETCH, PLAN_POS_NONE, c->to, whose, size))
			return -1;
		count_prefetch(x, c, c->nr, c->len, size, c->dp, r);
	}
	return 0;
}

/* Migrations busier than the iteration is long stall the program by at
 * least the difference, whatever their order. */
static void stall_at_least_excess(const struct ctx *x, struct sched_result *r)
{
	uint64_t cycle = x->v->cycle_ns, busy = add_sat_u64(r->dtoh_busy_ns, r->htod_busy_ns);
	if (busy == UINT64_MAX)
		r->stall_ns = UINT64_MAX;
	else if (busy > cycle && busy - cycle > r->stall_ns)
		r->stall_ns = busy - cycle;
}

/* ---- setup ---- */

/* Resident stretch of tensor t before any op: offsets from its first
 * resident position. Returns false if it is never resident. */
static bool resident_span(const struct tensor_set *ts, const struct vital *v, size_t t,
			  uint32_t *start, uint32_t *len)
{
	const struct tensor *tx = &ts->t[t];
	const struct vital_tensor *tv = &v->tv[t];
	bool at_start = tx->resident_at_start;
	if (!tensor_gpu_bytes(tx))
		return false;
	if (tensor_whole_cycle(ts, tx)) {
		*start = 0;
		*len = ts->n_pos;
		return tv->n_uses > 0 || at_start;
	}
	if (at_start) {
		*start = tx->alloc_pos;
		*len = tx->live_len;
		return true;
	}
	if (!tv->n_uses)
		return false;
	uint32_t age = tensor_age(ts, tx, tv->first_use);
	*start = tv->first_use;
	*len = tx->live_len - age;
	return true;
}

static int setup(struct ctx *x, struct sched_result *r)
{
	const uint32_t p = x->p;
	const struct tensor_set *ts = x->ts;
	x->pos_res = calloc(p, sizeof *x->pos_res);
	x->time_res = calloc(p, sizeof *x->time_res);
	x->target = calloc(p, sizeof *x->target);
	x->c = calloc(x->v->n_periods ? x->v->n_periods : 1, sizeof *x->c);
	r->baseline = calloc(p, sizeof *r->baseline);
	r->residency = calloc(p, sizeof *r->residency);
	r->unfit = calloc(p, sizeof *r->unfit);
	if (!x->pos_res || !x->time_res || !x->target || !x->c || !r->baseline || !r->residency ||
	    !r->unfit)
		return -1;
	for (size_t t = 0; t < ts->n; t++) {
		uint32_t start, len;
		if (!resident_span(ts, x->v, t, &start, &len))
			continue;
		for (uint32_t i = 0; i < len; i++)
			x->pos_res[(start + i) % p] += (int64_t)tensor_gpu_bytes(&ts->t[t]);
	}
	for (uint32_t k = 0; k < p; k++) {
		int64_t ws = (int64_t)x->a->ws_bytes[k], cap = (int64_t)x->o->capacity;
		for (uint32_t j = x->a->first[k]; j < x->a->first[k + 1]; j++) {
			const struct tensor *tj = &ts->t[x->a->tensor[j]];
			ws -= (int64_t)(tj->bytes - tensor_gpu_bytes(tj));
		}
		x->target[k] = ws > cap ? ws : cap;
		if (ws > cap)
			r->unfit[r->n_unfit++] = k;
		x->time_res[k] = x->pos_res[k];
		r->baseline[k] = (uint64_t)x->pos_res[k];
		if (r->baseline[k] > r->baseline_peak)
			r->baseline_peak = r->baseline[k];
		if (x->pos_res[k] > x->target[k]) {
			x->pos_over++;
			x->time_over++;
		}
	}
	for (size_t i = 0; i < x->v->n_periods; i++) {
		const struct vital_period *per = &x->v->periods[i];
		const struct tensor *tx = &ts->t[per->tensor];
		if (tx->host) /* what stays of one in part stays resident */
			continue;
		struct cand *c = &x->c[x->nc++];
		c->tensor = per->tensor;
		/* A period handed on to another tensor counts the smaller
		 * footprint: residency is never modelled below what it is. */
		c->bytes = (int64_t)(tx->bytes < ts->t[per->next].bytes ? tx->bytes : ts->t[per->next].bytes);
		c->evict_at = per->evict_at;
		c->len = per->len;
		c->from = per->from;
		c->to = per->to;
		c->next = per->next;
		c->next_at = per->next_at;
		c->prefetch = per->to != VITAL_NONE;
		c->de = transfer_ns(tx->size, x->o->dtoh_bytes_per_s, x->o->call_cost_ns);
		c->dp = transfer_ns(tx->size, x->o->htod_bytes_per_s, x->o->call_cost_ns);
	}
	link_init(&x->mig, (int64_t)x->v->cycle_ns);
	return 0;
}

/* One schedule, phase 1 included when smart. Returns 0, or -1 (out of
 * memory) with r freed. */
static int schedule(const struct tensor_set *ts, const struct access_set *a, const struct vital *v,
		    const struct sched_options *o, bool smart, struct sched_result *r)
{
	memset(r, 0, sizeof *r);
	struct ctx x = { .ts = ts, .a = a, .v = v, .o = o, .p = ts->n_pos };
	struct heap h = { 0 };
	struct op_buf b = { 0 };
	int rc = -1;
	if (setup(&x, r))
		goto out;
	h.h = malloc((x.nc ? x.nc : 1) * sizeof *h.h);
	if (!h.h || (smart && phase_smart(&x, &h)))
		goto out;
	phase_forced(&x, &h);
	if (phase_eager(&x, r) || deaths_and_births(&x, &b, r) || phase_lazy(&x) || emit_moves(&x, &b, r))
		goto out;
	stall_at_least_excess(&x, r);
	for (uint32_t k = 0; k < x.p; k++) {
		r->residency[k] = (uint64_t)x.pos_res[k];
		uint64_t inflight = (uint64_t)(x.time_res[k] > x.pos_res[k] ? x.time_res[k] : x.pos_res[k]);
		if (r->residency[k] > r->peak)
			r->peak = r->residency[k];
		if (inflight > r->inflight_peak)
			r->inflight_peak = inflight;
		r->over += x.pos_res[k] > x.target[k];
	}
	r->ops = b.ops;
	r->n_ops = b.n;
	b.ops = NULL;
	rc = 0;
out:
	free(h.h);
	free(b.ops);
	free(x.pos_res);
	free(x.time_res);
	free(x.target);
	free(x.c);
	link_free(&x.mig);
	if (rc)
		sched_result_free(r);
	return rc;
}

int sched_run(const struct tensor_set *ts, const struct access_set *a, const struct vital *v,
	      const struct sched_options *o, struct sched_result *r, char *err, size_t errlen)
{
	struct sched_result alt;
	int rc = schedule(ts, a, v, o, o->smart != SCHED_SMART_NEVER, r);
	/* Smart eviction's premise is link time left idle to hide its
	 * transfers in. Forced evictions (phase 2) mean there was not enough:
	 * their transfers take no time in its model, and its picks leave the
	 * peak to forced ones that cover their stretches too. The schedule
	 * without it is then the one to compare with, by the same model. */
	if (!rc && o->smart == SCHED_SMART_AUTO && r->forced) {
		rc = schedule(ts, a, v, o, false, &alt);
		if (rc)
			sched_result_free(r);
		else if (alt.stall_ns < r->stall_ns) {
			alt.smart_left_out = true;
			alt.smart_stall_ns = r->stall_ns;
			sched_result_free(r);
			*r = alt;
		} else
			sched_result_free(&alt);
	}
	if (rc)
		um_errmsg(err, errlen, "out of memory in the scheduler");
	return rc;
}

void sched_result_free(struct sched_result *r)
{
	free(r->ops);
	free(r->baseline);
	free(r->residency);
	free(r->unfit);
	memset(r, 0, sizeof *r);
}
