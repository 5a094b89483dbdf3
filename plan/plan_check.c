/* plan_check.c: residency simulation of a plan (see plan_check.h). */
#include "plan_check.h"
#include "search.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ON_HOST: kept in host memory by the plan (plan.host), never resident. A
 * tensor kept there in part has the other states, for the part before its
 * host offset. */
enum state { ABSENT = 0, EMPTY, RESIDENT, EVICTED, ON_HOST };

struct sim {
	const struct tensor_set *ts;
	const struct vital *v;
	const struct plan *pl;
	struct plan_check_result *out;
	uint8_t *state;
	uint64_t *on_host; /* per tensor: footprint bytes the plan keeps on the host */
	uint64_t resident;
	bool checking; /* second cycle */
};

static void violation(struct sim *s, size_t *counter, const char *fmt, ...)
{
	if (!s->checking)
		return;
	(*counter)++;
	if (s->out->violations++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->out->first, sizeof s->out->first, fmt, ap);
		va_end(ap);
	}
}

static void set_state(struct sim *s, uint32_t t, enum state st)
{
	bool was = s->state[t] == RESIDENT, is = st == RESIDENT;
	uint64_t bytes = s->ts->t[t].bytes - s->on_host[t];
	if (was != is) {
		if (is)
			s->resident += bytes;
		else
			s->resident -= bytes;
	}
	s->state[t] = (uint8_t)st;
}

/* The tensor a plan allocation stands for, by (origin, ordinal). */
static uint32_t tensor_of(const struct tensor_set *ts, const struct plan_alloc *pa)
{
	if (pa->origin == PLAN_ALLOC_ITERATION)
		return pa->ordinal >= 1 && pa->ordinal <= ts->n_iteration
			? (uint32_t)(ts->n_persistent + pa->ordinal - 1) : TENSOR_NONE;
	/* Those live at the start: PERSISTENT, then PREVIOUS, each by ordinal. */
	size_t from = 0, to = ts->n_persistent - ts->n_previous;
	if (pa->origin == PLAN_ALLOC_PREVIOUS) {
		from = to;
		to = ts->n_persistent;
	}
	size_t lo = from + lower_bound_u64(ts->t + from, to - from, SEARCH_FIELD(struct tensor, ordinal),
					   pa->ordinal);
	return lo < to && ts->t[lo].ordinal == pa->ordinal ? (uint32_t)lo : TENSOR_NONE;
}

/* Tensors that take part: a zero-length life never holds data. */
static bool simulated(const struct tensor *x)
{
	return x->live_len > 0;
}

/* Whether x leaves the GPU every cycle at tensor_free_pos: freed there, or
 * an allocation of the iteration not freed in it, which the tensor model,
 * and so the scheduler, ends with the iteration (a real one made every
 * iteration would pile up), or whose memory goes on as the next
 * iteration's PREVIOUS tensor. */
static bool ends(const struct tensor *x)
{
	return simulated(x) && (x->freed || x->origin == PLAN_ALLOC_ITERATION);
}

/* Whether the allocation event of x happens every cycle at alloc_pos. */
static bool allocates(const struct tensor_set *ts, const struct tensor *x)
{
	return simulated(x) && (x->origin == PLAN_ALLOC_ITERATION || x->freed ||
				x->live_len < ts->n_pos);
}

static enum state fresh_state(const struct tensor *x)
{
	return x->resident_at_start ? RESIDENT : EMPTY;
}

/* Counting sort of (position, tensor) events into CSR. */
static int events(const struct tensor_set *ts, bool frees, uint32_t **first, uint32_t **list)
{
	const uint32_t p = ts->n_pos;
	*first = calloc((size_t)p + 1, sizeof **first);
	*list = malloc((ts->n ? ts->n : 1) * sizeof **list);
	if (!*first || !*list)
		return -1;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t t = 0; t < ts->n; t++) {
			const struct tensor *x = &ts->t[t];
			bool has = frees ? ends(x) : allocates(ts, x);
			if (!has)
				continue;
			uint32_t k = frees ? tensor_free_pos(ts, x) : x->alloc_pos;
			if (pass == 0)
				(*first)[k + 1]++;
			else
				(*list)[(*first)[k]++] = (uint32_t)t;
		}
		if (pass == 0)
			for (uint32_t k = 0; k < p; k++)
				(*first)[k + 1] += (*first)[k];
	}
	/* Pass two advanced each start to the next one's: shift back. */
	memmove(*first + 1, *first, p * sizeof **first);
	(*first)[0] = 0;
	return 0;
}

static const char *origin_word(const struct tensor *x)
{
	return plan_alloc_origin_name(x->origin);
}

/* "kernel K", or "no kernel" for PLAN_POS_NONE (an op's `after` that waits
 * for nothing, the last use of an allocation no kernel uses), which would
 * otherwise read as kernel 4294967295. */
static const char *kernel_words(uint32_t k, char *buf, size_t len)
{
	if (k == PLAN_POS_NONE)
		snprintf(buf, len, "no kernel");
	else
		snprintf(buf, len, "kernel %u", k);
	return buf;
}

static void apply_op(struct sim *s, const uint32_t *map, size_t i, uint32_t k)
{
	const struct plan_op *op = &s->pl->ops[i];
	struct plan_check_result *o = s->out;
	uint32_t t = op->alloc < s->pl->n_allocs ? map[op->alloc] : TENSOR_NONE;
	const char *kind = plan_op_kind_name(op->kind);
	if (t == TENSOR_NONE) {
		violation(s, &o->liveness_violations,
			  "op %zu (%s at kernel %u) names an allocation the iteration does not have",
			  i, kind ? kind : "?", k);
		return;
	}
	const struct tensor *x = &s->ts->t[t];
	if (op->kind == PLAN_OP_DISCARD) {
		const struct vital_tensor *tv = &s->v->tv[t];
		if (!x->freed || !simulated(x) || tensor_free_pos(s->ts, x) != k)
			violation(s, &o->discard_violations,
				  "op %zu: discard at kernel %u of %s allocation %llu, which the "
				  "program does not free there", i, k, origin_word(x),
				  (unsigned long long)x->ordinal);
		else if (op->after != (tv->n_uses ? tv->last_use : PLAN_POS_NONE)) {
			char waits[32], last[32];
			violation(s, &o->discard_violations,
				  "op %zu: discard at kernel %u of %s allocation %llu waits for "
				  "%s, but its last use is %s", i, k, origin_word(x),
				  (unsigned long long)x->ordinal, kernel_words(op->after, waits, sizeof waits),
				  kernel_words(tv->n_uses ? tv->last_use : PLAN_POS_NONE, last, sizeof last));
		}
		return;
	}
	if (s->state[t] == ABSENT) {
		violation(s, &o->liveness_violations,
			  "op %zu: %s at kernel %u of %s allocation %llu, which is not live there",
			  i, kind ? kind : "?", k, origin_word(x), (unsigned long long)x->ordinal);
		return;
	}
	if (op->kind == PLAN_OP_DISCARD_PREFETCH) {
		/* It destroys what the range holds: only a fresh allocation's,
		 * at its allocation, before anything wrote it. */
		const struct vital_tensor *tv = &s->v->tv[t];
		if (x->origin != PLAN_ALLOC_ITERATION || x->alloc_pos != k || tv->written_before_use)
			violation(s, &o->discard_violations,
				  "op %zu: discard_prefetch at kernel %u of %s allocation %llu, which is "
				  "not a fresh allocation made there", i, k, origin_word(x),
				  (unsigned long long)x->ordinal);
	}
	/* The model follows whole allocations. An op on a part of one (the
	 * format allows it, the scheduler makes none) moves no more than can
	 * be told without the part's place in its blocks: an eviction makes
	 * no room, and a prefetch brings back nothing evicted (what stays out
	 * faults), though it counts fresh memory resident from there. */
	bool whole = op->offset == 0 && op->bytes == x->size;
	if (op->kind == PLAN_OP_EVICT) {
		if (s->state[t] == RESIDENT && whole)
			set_state(s, t, EVICTED);
	} else if (whole || s->state[t] != EVICTED) {
		set_state(s, t, RESIDENT);
	}
}

void plan_check(const struct tensor_set *ts, const struct access_set *a, const struct vital *v,
		const struct plan *pl, struct plan_check_result *out)
{
	plan_check_residency(ts, a, v, pl, out, NULL);
}

void plan_check_residency(const struct tensor_set *ts, const struct access_set *a,
			  const struct vital *v, const struct plan *pl, struct plan_check_result *out,
			  uint64_t *residency)
{
	memset(out, 0, sizeof *out);
	const uint32_t p = ts->n_pos;
	if (residency)
		memset(residency, 0, (size_t)p * sizeof *residency);
	struct sim s = { .ts = ts, .v = v, .pl = pl, .out = out };
	uint32_t *map = malloc((pl->n_allocs ? pl->n_allocs : 1) * sizeof *map);
	uint32_t *op_first = calloc((size_t)p + 1, sizeof *op_first);
	uint32_t *free_first = NULL, *free_list = NULL, *alloc_first = NULL, *alloc_list = NULL;
	s.state = calloc(ts->n ? ts->n : 1, 1);
	s.on_host = calloc(ts->n ? ts->n : 1, sizeof *s.on_host);
	/* Per PREVIOUS tensor, the state its ITERATION twin ended in
	 * (ABSENT: none yet). */
	uint8_t *handed = calloc(ts->n ? ts->n : 1, 1);
	if (!map || !op_first || !s.state || !s.on_host || !handed ||
	    events(ts, true, &free_first, &free_list) ||
	    events(ts, false, &alloc_first, &alloc_list)) {
		snprintf(out->first, sizeof out->first, "out of memory checking the plan");
		out->violations = 1;
		goto out;
	}
	for (uint32_t i = 0; i < pl->n_allocs; i++)
		map[i] = tensor_of(ts, &pl->allocs[i]);
	for (uint32_t i = 0; i < pl->n_host; i++) {
		uint32_t t = map[pl->host[i]];
		uint64_t offset = pl->host_offset ? pl->host_offset[i] : 0;
		if (t == TENSOR_NONE)
			continue;
		s.on_host[t] = offset < ts->t[t].bytes ? ts->t[t].bytes - offset : 0;
		if (!offset)
			s.state[t] = ON_HOST;
	}
	if (pl->signature.n_kernels != p) {
		snprintf(out->first, sizeof out->first,
			 "the plan is for %u kernels per iteration, the iteration has %u",
			 pl->signature.n_kernels, p);
		out->violations = out->liveness_violations = 1;
		goto out;
	}
	for (size_t i = 0; i < pl->n_ops; i++)
		op_first[pl->ops[i].position + 1]++;
	for (uint32_t k = 0; k < p; k++)
		op_first[k + 1] += op_first[k];
	size_t *op_list = malloc((pl->n_ops ? pl->n_ops : 1) * sizeof *op_list);
	uint32_t *fill = malloc(((size_t)p + 1) * sizeof *fill);
	if (!op_list || !fill) {
		free(op_list);
		free(fill);
		snprintf(out->first, sizeof out->first, "out of memory checking the plan");
		out->violations = 1;
		goto out;
	}
	memcpy(fill, op_first, ((size_t)p + 1) * sizeof *fill);
	for (size_t i = 0; i < pl->n_ops; i++)
		op_list[fill[pl->ops[i].position]++] = i;
	free(fill);

	/* A steady run enters the iteration with persistent tensors as they
	 * were, and previous instances of wrapping tensors resident. */
	for (size_t t = 0; t < ts->n; t++) {
		const struct tensor *x = &ts->t[t];
		if (!simulated(x) || !tensor_live_at(ts, x, 0) || s.state[t] == ON_HOST)
			continue;
		set_state(&s, (uint32_t)t, x->origin != PLAN_ALLOC_ITERATION ? fresh_state(x) : RESIDENT);
	}
	for (int cycle = 0; cycle < 2; cycle++) {
		s.checking = cycle == 1;
		for (uint32_t k = 0; k < p; k++) {
			/* An ITERATION tensor's memory is the next iteration's
			 * PREVIOUS tensor of its ordinal: that one starts as
			 * this one ended, once this one has lived. */
			for (uint32_t j = free_first[k]; j < free_first[k + 1]; j++) {
				uint32_t t = free_list[j];
				if (tensor_hands_on_memory(ts, &ts->t[t]))
					handed[ts->t[t].twin] = s.state[t];
				set_state(&s, t, ABSENT);
			}
			for (uint32_t j = alloc_first[k]; j < alloc_first[k + 1]; j++) {
				uint32_t t = alloc_list[j];
				set_state(&s, t, handed[t] != ABSENT ? handed[t] : fresh_state(&ts->t[t]));
				handed[t] = ABSENT;
			}
			for (uint32_t j = op_first[k]; j < op_first[k + 1]; j++)
				apply_op(&s, map, op_list[j], k);
			uint64_t ws = a->ws_bytes[k];
			for (uint32_t j = a->first[k]; j < a->first[k + 1]; j++) {
				uint32_t t = a->tensor[j];
				const struct tensor *x = &ts->t[t];
				ws -= s.on_host[t];
				if (s.state[t] == ON_HOST)
					continue;
				if (s.state[t] == EVICTED)
					violation(&s, &out->use_violations,
						  "kernel %u uses %s allocation %llu while it is evicted "
						  "(no prefetch brought it back)", k, origin_word(x),
						  (unsigned long long)x->ordinal);
				else if (s.state[t] == ABSENT)
					violation(&s, &out->liveness_violations,
						  "kernel %u uses %s allocation %llu outside its lifetime",
						  k, origin_word(x), (unsigned long long)x->ordinal);
				set_state(&s, t, RESIDENT);
			}
			uint64_t limit = pl->assume.capacity_bytes;
			if (ws > limit)
				limit = ws;
			if (s.resident > limit)
				violation(&s, &out->capacity_violations,
					  "kernel %u: %llu bytes resident, above the capacity of %llu "
					  "bytes", k, (unsigned long long)s.resident,
					  (unsigned long long)limit);
			if (s.checking && s.resident > out->peak)
				out->peak = s.resident;
			if (s.checking && residency)
				residency[k] = s.resident;
		}
	}
	free(op_list);
out:
	free(map);
	free(op_first);
	free(free_first);
	free(free_list);
	free(alloc_first);
	free(alloc_list);
	free(s.state);
	free(s.on_host);
	free(handed);
}
