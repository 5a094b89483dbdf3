/* tensor.c: the planned iteration's allocations and lifetimes (see tensor.h). */
#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "plan.h"

/* Position of CPU time ns relative to the iteration's first kernel, in
 * unwrapped coordinates (p and beyond are the next iteration's kernels);
 * SIZE_MAX for "never". */
static size_t rel_pos(const struct trace *t, size_t first, int64_t ns)
{
	if (ns == TRACE_NS_NEVER)
		return SIZE_MAX;
	size_t k = trace_position_at(t, ns);
	return k >= first ? k - first : 0;
}

/* Allocation indices whose alloc_ns lies in [from, to), in ordinal order. */
static size_t window_allocs(const struct trace *t, int64_t from, int64_t to, size_t **out)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n_allocs; i++)
		n += t->allocs[i].alloc_ns >= from && t->allocs[i].alloc_ns < to;
	*out = malloc((n ? n : 1) * sizeof **out);
	if (!*out)
		return SIZE_MAX;
	n = 0;
	for (size_t i = 0; i < t->n_allocs; i++)
		if (t->allocs[i].alloc_ns >= from && t->allocs[i].alloc_ns < to)
			(*out)[n++] = i;
	return n;
}

/* What the allocation holds on the GPU: the arena's reservation. A
 * zero-byte allocation holds a slot but no data, and no op moves zero
 * bytes: counted, it would stay resident in the model for good. */
static uint64_t footprint(const struct trace_alloc *a)
{
	if (!a->size)
		return 0;
	return a->reserved > a->size ? a->reserved : a->size;
}

/* Whether a kernel at positions [from, to) of the window starting at
 * kernel first uses trace allocation a. */
static bool used_between(const struct trace *t, size_t first, size_t from, size_t to, size_t a)
{
	for (size_t k = first + from; k < first + to; k++)
		for (uint32_t j = t->arg_first[k]; j < t->arg_first[k + 1]; j++)
			if (t->arg_alloc[j] == a)
				return true;
	return false;
}

/* Makes s->t[n] the tensor of trace allocation i, live at the iteration's
 * start: origin PERSISTENT, named by its id, or PREVIOUS, by the ordinal of
 * its successor. */
static void add_before(struct tensor_set *s, const struct trace *t, size_t first, size_t i,
		       uint8_t origin, uint64_t ordinal, bool touched, size_t n)
{
	const struct trace_alloc *a = &t->allocs[i];
	size_t F = rel_pos(t, first, a->free_ns);
	struct tensor *x = &s->t[n];
	x->origin = origin;
	x->ordinal = ordinal;
	x->size = a->size;
	x->bytes = footprint(a);
	x->address = a->address;
	x->trace_alloc = i;
	x->alloc_pos = 0;
	x->freed = F <= s->n_pos;
	x->live_len = (uint32_t)(x->freed ? F : s->n_pos);
	x->resident_at_start = touched;
	s->of_alloc[i] = (uint32_t)n;
}

int tensor_build(const struct trace *t, const struct iter_result *it, struct tensor_set *s,
		 char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	struct iter_span c = it->iters[it->chosen];
	if (c.n >= UINT32_MAX) {
		um_errmsg(err, errlen, "%s: the iteration has %zu kernels, more than a plan can hold",
			t->path, c.n);
		return -1;
	}
	const size_t first = c.first, p = c.n;
	s->first = first;
	s->n_pos = (uint32_t)p;
	int64_t t0 = t->kernels[first].launch_ns;
	int64_t t1 = first + p < t->n_kernels ? t->kernels[first + p].launch_ns : INT64_MAX;
	/* The previous iteration's window, whose instances of the iteration's
	 * allocations may still be live when the iteration starts. */
	bool has_prev = false;
	int64_t tp = 0;
	if (it->chosen > 0 && it->iters[it->chosen - 1].first + it->iters[it->chosen - 1].n == first) {
		tp = t->kernels[it->iters[it->chosen - 1].first].launch_ns;
		has_prev = true;
	} else if (first >= p) {
		tp = t->kernels[first - p].launch_ns;
		has_prev = true;
	}

	size_t *cur = NULL, *prv = NULL;
	/* Per trace allocation: PREV_MATCHED, the previous instance of an
	 * iteration tensor, the same tensor; PREV_LATE, one freed after its
	 * successor was made, a tensor of its own (PLAN_ALLOC_PREVIOUS). */
	enum { PREV_MATCHED = 1, PREV_LATE = 2 };
	uint8_t *matched = NULL, *touched = NULL;
	size_t n_cur = window_allocs(t, t0, t1, &cur);
	size_t n_prv = has_prev ? window_allocs(t, tp, t0, &prv) : 0;
	s->of_alloc = malloc((t->n_allocs ? t->n_allocs : 1) * sizeof *s->of_alloc);
	matched = calloc(t->n_allocs ? t->n_allocs : 1, 1);
	touched = calloc(t->n_allocs ? t->n_allocs : 1, 1);
	if (n_cur == SIZE_MAX || n_prv == SIZE_MAX || !s->of_alloc || !matched || !touched ||
	    !(s->alloc_sizes = malloc((n_cur ? n_cur : 1) * sizeof *s->alloc_sizes)) ||
	    !(s->alloc_before = calloc(p, sizeof *s->alloc_before)))
		goto oom;
	for (size_t i = 0; i < t->n_allocs; i++)
		s->of_alloc[i] = TENSOR_NONE;

	/* Iteration tensors: lifetime from their own instance, or from the
	 * previous instance's free when that one is still live at the start
	 * (steady state: both say the same; the previous one is in this
	 * iteration's window, so it is the better witness). */
	struct tensor *it_t = calloc(n_cur ? n_cur : 1, sizeof *it_t);
	if (!it_t)
		goto oom;
	bool by_ordinal = has_prev && n_prv == n_cur;
	for (size_t r = 0; r < n_cur; r++) {
		const struct trace_alloc *a = &t->allocs[cur[r]];
		size_t A = rel_pos(t, first, a->alloc_ns);
		size_t F = rel_pos(t, first, a->free_ns);
		struct tensor *x = &it_t[r];
		x->origin = PLAN_ALLOC_ITERATION;
		x->ordinal = r + 1;
		x->size = a->size;
		x->bytes = footprint(a);
		x->address = a->address;
		x->trace_alloc = cur[r];
		x->alloc_pos = (uint32_t)(A % p);
		s->alloc_sizes[r] = a->size;
		if (A < p)
			s->alloc_before[A]++; /* made before launch A: summed below */
		if (F != SIZE_MAX && F - A <= p) {
			x->freed = true;
			x->live_len = (uint32_t)(F - A);
		} else {
			x->live_len = (uint32_t)(A == p ? p : p - A);
		}
		/* The previous iteration's instance of the same ordinal and
		 * size, and its free (SIZE_MAX: none, or never freed). */
		size_t q = by_ordinal && t->allocs[prv[r]].size == a->size ? prv[r] : SIZE_MAX;
		size_t Fq = q != SIZE_MAX ? rel_pos(t, first, t->allocs[q].free_ns) : SIZE_MAX;
		/* Only an instance that outlives this iteration can have had a
		 * predecessor live at the start, in a steady program. */
		if ((F == SIZE_MAX || F > p) && Fq != SIZE_MAX && Fq > 0 && Fq <= A) {
			matched[q] = PREV_MATCHED;
			s->prev_matched++;
			x->freed = true;
			x->live_len = (uint32_t)(p + Fq - A);
			if (x->live_len > p)
				x->live_len = (uint32_t)p;
		}
		/* The previous instance freed after this one was made: two
		 * live at once, which one cyclic lifetime cannot hold. That
		 * one becomes a PREVIOUS tensor, this one, unless the program
		 * frees it within the iteration, ends with the iteration, its
		 * memory going on as that twin: also where the trace frees it
		 * early in the next iteration, before its own position
		 * (iterations whose frees differ in time), else the two would
		 * be one memory counted twice there. One freed only after the
		 * next iteration (live into a third) stays a persistent
		 * tensor, named by its id. */
		if (Fq != SIZE_MAX && Fq > p) {
			s->beyond_next++;
		} else if (Fq != SIZE_MAX && Fq > A) {
			matched[q] = PREV_LATE;
			s->overlapping++;
			s->overlapping_bytes += footprint(&t->allocs[q]);
			if (used_between(t, first, A, Fq, q))
				s->outliving++;
			if (F == SIZE_MAX || F > p) {
				x->freed = false;
				x->live_len = (uint32_t)(A == p ? p : p - A);
			}
		}
		if (x->alloc_pos + (size_t)x->live_len > p || A == p)
			s->wrapping++;
	}

	for (size_t k = 1; k < p; k++)
		s->alloc_before[k] += s->alloc_before[k - 1];

	/* Persistent tensors: live at the start and not a previous instance. */
	for (size_t k = 0; k < first; k++)
		for (uint32_t j = t->arg_first[k]; j < t->arg_first[k + 1]; j++)
			touched[t->arg_alloc[j]] = 1;
	size_t n_pers = 0;
	for (size_t i = 0; i < t->n_allocs; i++) {
		const struct trace_alloc *a = &t->allocs[i];
		if (a->alloc_ns < t0 && matched[i] != PREV_MATCHED && rel_pos(t, first, a->free_ns) > 0)
			n_pers++;
	}
	s->t = calloc(n_pers + n_cur ? n_pers + n_cur : 1, sizeof *s->t);
	if (!s->t) {
		free(it_t);
		goto oom;
	}
	size_t n = 0;
	for (size_t i = 0; i < t->n_allocs; i++) {
		const struct trace_alloc *a = &t->allocs[i];
		if (a->alloc_ns < t0 && !matched[i] && rel_pos(t, first, a->free_ns) > 0)
			add_before(s, t, first, i, PLAN_ALLOC_PERSISTENT, a->id, touched[i], n++);
	}
	/* The previous instances freed after their successors, by ordinal. */
	for (size_t r = 0; by_ordinal && r < n_cur; r++)
		if (matched[prv[r]] == PREV_LATE) {
			add_before(s, t, first, prv[r], PLAN_ALLOC_PREVIOUS, r + 1, touched[prv[r]], n++);
			s->n_previous++;
		}
	s->n_persistent = n;
	memcpy(s->t + n, it_t, n_cur * sizeof *it_t);
	free(it_t);
	for (size_t i = 0; i < n + n_cur; i++)
		s->t[i].twin = TENSOR_NONE;
	for (size_t x = n - s->n_previous; x < n; x++) {
		s->t[x].twin = (uint32_t)(n + s->t[x].ordinal - 1);
		s->t[n + s->t[x].ordinal - 1].twin = (uint32_t)x;
	}
	for (size_t r = 0; r < n_cur; r++) {
		s->of_alloc[cur[r]] = (uint32_t)(n + r);
		if (by_ordinal && matched[prv[r]] == PREV_MATCHED)
			s->of_alloc[prv[r]] = (uint32_t)(n + r);
	}
	s->n = n + n_cur;
	s->n_iteration = n_cur;
	free(cur);
	free(prv);
	free(matched);
	free(touched);
	return 0;
oom:
	free(cur);
	free(prv);
	free(matched);
	free(touched);
	tensor_set_free(s);
	um_errmsg(err, errlen, "%s: out of memory building the iteration's allocations", t->path);
	return -1;
}

void tensor_set_free(struct tensor_set *s)
{
	free(s->t);
	free(s->alloc_sizes);
	free(s->alloc_before);
	free(s->of_alloc);
	memset(s, 0, sizeof *s);
}

uint32_t tensor_age(const struct tensor_set *s, const struct tensor *x, uint32_t pos)
{
	return (uint32_t)(((uint64_t)pos + s->n_pos - x->alloc_pos) % s->n_pos);
}

bool tensor_live_at(const struct tensor_set *s, const struct tensor *x, uint32_t pos)
{
	return x->live_len >= s->n_pos || tensor_age(s, x, pos) < x->live_len;
}

bool tensor_live_within(const struct tensor_set *s, const struct tensor *x, uint32_t from, uint32_t n)
{
	/* Two cyclic stretches meet where one begins inside the other. */
	if (!n || !x->live_len)
		return false;
	return tensor_live_at(s, x, from) || (x->alloc_pos + (uint64_t)s->n_pos - from) % s->n_pos < n;
}

uint32_t tensor_free_pos(const struct tensor_set *s, const struct tensor *x)
{
	return (uint32_t)(((uint64_t)x->alloc_pos + x->live_len) % s->n_pos);
}
