/* access.c: per-kernel access sets and their recall (see access.h). */
#include "access.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "search.h"

void access_blocks(uint64_t address, uint64_t bytes, uint64_t *b0, uint64_t *b1)
{
	*b0 = address >> ACCESS_BLOCK_SHIFT;
	*b1 = (address + (bytes ? bytes : 1) - 1) >> ACCESS_BLOCK_SHIFT;
}

/* ---- attribution by time ---- */

struct timed {
	int64_t start, end;
	size_t pos; /* kernel position */
};

static int cmp_timed(const void *a, const void *b)
{
	const struct timed *x = a, *y = b;
	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static bool kernel_covers_block(const struct trace *t, size_t k, uint64_t block)
{
	for (uint32_t j = t->arg_first[k]; j < t->arg_first[k + 1]; j++) {
		const struct trace_alloc *a = &t->allocs[t->arg_alloc[j]];
		uint64_t b0, b1;
		access_blocks(a->address, a->size, &b0, &b1);
		if (block >= b0 && block <= b1)
			return true;
	}
	return false;
}

/* How many of the latest-started kernels are searched for one still
 * running whose arguments cover the address (concurrent streams). */
#define ATTRIBUTE_LOOKBACK 16

/* The kernel position a migration at time ns to address belongs to, or
 * SIZE_MAX before the first kernel. *covered says whether that kernel's
 * argument blocks include the address's block. */
static size_t attribute(const struct trace *t, const struct timed *by_start, size_t n,
			int64_t ns, uint64_t address, bool *covered)
{
	size_t lo = upper_bound_i64(by_start, n, SEARCH_FIELD(struct timed, start), ns);
	*covered = false;
	if (lo == 0)
		return SIZE_MAX;
	size_t latest = by_start[lo - 1].pos;
	uint64_t block = address >> ACCESS_BLOCK_SHIFT;
	for (size_t i = lo; i > 0 && lo - i < ATTRIBUTE_LOOKBACK; i--) {
		const struct timed *k = &by_start[i - 1];
		if (k->end < ns)
			continue;
		if (kernel_covers_block(t, k->pos, block)) {
			*covered = true;
			return k->pos;
		}
	}
	*covered = kernel_covers_block(t, latest, block);
	return latest;
}

/* ---- building ---- */

struct pair {
	uint64_t a, b;
};

static int cmp_pair(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;
	if (p->a != q->a)
		return (p->a > q->a) - (p->a < q->a);
	return (p->b > q->b) - (p->b < q->b);
}

struct by_addr {
	uint64_t address;
	uint32_t tensor;
};

static int cmp_by_addr(const void *x, const void *y)
{
	const struct by_addr *p = x, *q = y;
	if (p->address != q->address)
		return (p->address > q->address) - (p->address < q->address);
	return (p->tensor > q->tensor) - (p->tensor < q->tensor);
}

/* The tensor live at pos whose footprint contains address, or TENSOR_NONE. */
static uint32_t tensor_at(const struct tensor_set *ts, const struct by_addr *idx, uint64_t max_bytes,
			  uint64_t address, uint32_t pos)
{
	size_t lo = upper_bound_u64(idx, ts->n, SEARCH_FIELD(struct by_addr, address), address);
	for (size_t i = lo; i > 0 && idx[i - 1].address + max_bytes > address; i--) {
		const struct tensor *x = &ts->t[idx[i - 1].tensor];
		if (address < x->address + x->bytes && tensor_live_at(ts, x, pos))
			return idx[i - 1].tensor;
	}
	return TENSOR_NONE;
}

/* Attributes every record of recs; counts recall pairs into pairs (kernel,
 * block*2+covered) when counting, and adds (pos, tensor) to extra for those
 * inside the iteration. */
struct attrib_ctx {
	const struct trace *t;
	const struct tensor_set *ts;
	const struct timed *by_start;
	size_t n_timed;
	const struct by_addr *idx;
	uint64_t max_bytes;
	struct pair *pairs;
	size_t n_pairs;
	struct pair *extra;
	size_t n_extra;
};

static void attribute_all(struct attrib_ctx *c, const struct trace_migration *recs, size_t n,
			  bool count_recall)
{
	for (size_t i = 0; i < n; i++) {
		bool covered;
		size_t k = attribute(c->t, c->by_start, c->n_timed, recs[i].start_ns, recs[i].address,
				     &covered);
		if (k == SIZE_MAX)
			continue;
		if (count_recall)
			c->pairs[c->n_pairs++] = (struct pair){
				k, ((recs[i].address >> ACCESS_BLOCK_SHIFT) << 1) | covered };
		if (covered || k < c->ts->first || k >= c->ts->first + c->ts->n_pos)
			continue;
		uint32_t pos = (uint32_t)(k - c->ts->first);
		uint32_t x = tensor_at(c->ts, c->idx, c->max_bytes, recs[i].address, pos);
		if (x != TENSOR_NONE)
			c->extra[c->n_extra++] = (struct pair){ pos, x };
	}
}

static int attribute_records(const struct trace *t, const struct tensor_set *ts,
			     struct access_set *a, struct pair **extra, size_t *n_extra)
{
	size_t n_timed = 0;
	for (size_t k = 0; k < t->n_kernels; k++)
		n_timed += t->kernels[k].start_ns != TRACE_NS_NONE;
	size_t n_recs = t->n_fault_migrations + t->n_faults;
	struct attrib_ctx c = { .t = t, .ts = ts };
	struct timed *by_start = malloc((n_timed ? n_timed : 1) * sizeof *by_start);
	struct by_addr *idx = malloc((ts->n ? ts->n : 1) * sizeof *idx);
	c.pairs = malloc((t->n_fault_migrations ? t->n_fault_migrations : 1) * sizeof *c.pairs);
	c.extra = malloc((n_recs ? n_recs : 1) * sizeof *c.extra);
	if (!by_start || !idx || !c.pairs || !c.extra) {
		free(by_start);
		free(idx);
		free(c.pairs);
		free(c.extra);
		return -1;
	}
	n_timed = 0;
	bool sorted = true;
	for (size_t k = 0; k < t->n_kernels; k++) {
		const struct trace_kernel *kk = &t->kernels[k];
		if (kk->start_ns == TRACE_NS_NONE)
			continue;
		by_start[n_timed] = (struct timed){ kk->start_ns, kk->end_ns, k };
		if (n_timed && by_start[n_timed - 1].start > kk->start_ns)
			sorted = false;
		n_timed++;
	}
	if (!sorted)
		qsort(by_start, n_timed, sizeof *by_start, cmp_timed);
	for (size_t i = 0; i < ts->n; i++) {
		idx[i] = (struct by_addr){ ts->t[i].address, (uint32_t)i };
		if (ts->t[i].bytes > c.max_bytes)
			c.max_bytes = ts->t[i].bytes;
	}
	qsort(idx, ts->n, sizeof *idx, cmp_by_addr);
	c.by_start = by_start;
	c.n_timed = n_timed;
	c.idx = idx;
	attribute_all(&c, t->fault_migrations, t->n_fault_migrations, true);
	attribute_all(&c, t->faults, t->n_faults, false);
	free(by_start);
	free(idx);

	qsort(c.pairs, c.n_pairs, sizeof *c.pairs, cmp_pair);
	for (size_t i = 0; i < c.n_pairs; i++) {
		/* A block counted covered and uncovered for one kernel (two
		 * records, one attributed by the fallback) counts once, as
		 * covered: sorting puts the uncovered twin first. */
		if (i + 1 < c.n_pairs && c.pairs[i + 1].a == c.pairs[i].a &&
		    c.pairs[i + 1].b >> 1 == c.pairs[i].b >> 1)
			continue;
		a->fault_pairs++;
		a->fault_pairs_covered += c.pairs[i].b & 1;
	}
	free(c.pairs);
	*extra = c.extra;
	*n_extra = c.n_extra;
	return 0;
}

int access_build(const struct trace *t, const struct tensor_set *ts, struct access_set *a,
		 char *err, size_t errlen)
{
	memset(a, 0, sizeof *a);
	const uint32_t p = ts->n_pos;
	a->n_pos = p;
	struct pair *extra = NULL, *all = NULL;
	size_t n_extra = 0;
	if (attribute_records(t, ts, a, &extra, &n_extra))
		goto oom;
	size_t n_arg = t->arg_first[ts->first + p] - t->arg_first[ts->first];
	all = malloc((n_arg + n_extra ? n_arg + n_extra : 1) * sizeof *all);
	if (!all)
		goto oom;
	size_t n_all = 0;
	for (uint32_t pos = 0; pos < p; pos++) {
		size_t k = ts->first + pos;
		for (uint32_t j = t->arg_first[k]; j < t->arg_first[k + 1]; j++) {
			uint32_t x = ts->of_alloc[t->arg_alloc[j]];
			if (x == TENSOR_NONE || !tensor_live_at(ts, &ts->t[x], pos)) {
				/* Stale pointer words or clock disagreement: the
				 * tensor cannot be in use here. */
				a->refs_unmapped++;
				continue;
			}
			all[n_all++] = (struct pair){ pos, x };
		}
	}
	qsort(all, n_all, sizeof *all, cmp_pair);
	size_t arg_distinct = 0;
	for (size_t i = 0; i < n_all; i++)
		arg_distinct += i == 0 || all[i].a != all[i - 1].a || all[i].b != all[i - 1].b;
	memcpy(all + n_all, extra, n_extra * sizeof *extra);
	n_all += n_extra;
	free(extra);
	extra = NULL;
	qsort(all, n_all, sizeof *all, cmp_pair);

	a->first = calloc((size_t)p + 1, sizeof *a->first);
	a->tensor = malloc((n_all ? n_all : 1) * sizeof *a->tensor);
	a->ws_bytes = calloc(p ? p : 1, sizeof *a->ws_bytes);
	a->ws_blocks = calloc(p ? p : 1, sizeof *a->ws_blocks);
	if (!a->first || !a->tensor || !a->ws_bytes || !a->ws_blocks)
		goto oom;
	size_t n = 0;
	for (size_t i = 0; i < n_all; i++) {
		if (i > 0 && all[i].a == all[i - 1].a && all[i].b == all[i - 1].b)
			continue;
		uint32_t pos = (uint32_t)all[i].a;
		const struct tensor *x = &ts->t[all[i].b];
		a->tensor[n++] = (uint32_t)all[i].b;
		a->first[pos + 1]++;
		a->ws_bytes[pos] += x->bytes;
		uint64_t b0, b1;
		access_blocks(x->address, x->bytes, &b0, &b1);
		a->ws_blocks[pos] += b1 - b0 + 1;
	}
	for (uint32_t pos = 0; pos < p; pos++)
		a->first[pos + 1] += a->first[pos];
	a->n_refs = n;
	free(all);
	/* Observed accesses that were not already argument-based. */
	a->observed_added = n - arg_distinct;
	return 0;
oom:
	free(extra);
	free(all);
	access_set_free(a);
	um_errmsg(err, errlen, "%s: out of memory building access sets", t->path);
	return -1;
}

void access_set_free(struct access_set *a)
{
	free(a->first);
	free(a->tensor);
	free(a->ws_bytes);
	free(a->ws_blocks);
	memset(a, 0, sizeof *a);
}

double access_recall(const struct access_set *a)
{
	return a->fault_pairs ? (double)a->fault_pairs_covered / (double)a->fault_pairs : -1;
}
