/* host.c: choosing the tensors kept in host memory (see host.h). */
#include "host.h"

#include <stdbool.h>
#include <stdlib.h>

#include "plan.h"

struct cand {
	uint32_t uses;
	uint64_t bytes;
	uint32_t tensor;
};

/* Fewest uses first, then the largest, then tensor order. */
static int by_cost(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	if (a->uses != b->uses)
		return a->uses < b->uses ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->tensor < b->tensor ? -1 : a->tensor > b->tensor;
}

static bool owns_blocks(const struct tensor *t)
{
	return t->address % PLAN_BLOCK_SIZE == 0 && t->bytes % PLAN_BLOCK_SIZE == 0 && t->bytes > 0;
}

static bool eligible(const struct tensor_set *ts, const struct vital *v, size_t i,
		     const struct host_options *o)
{
	const struct tensor *t = &ts->t[i];
	uint32_t uses = v->tv[i].n_uses;
	if (t->origin != PLAN_ALLOC_PERSISTENT || t->live_len < ts->n_pos || t->freed ||
	    !owns_blocks(t) || uses > HOST_MAX_USES)
		return false;
	/* Unused and not resident when the iteration starts: the schedule
	 * never counts it resident, so the host would take nothing off. */
	if (!uses && !t->resident_at_start)
		return false;
	double pass = 1.0 / (double)o->remote_bytes_per_s;
	double migrate = 1.0 / (double)o->dtoh_bytes_per_s + 1.0 / (double)o->htod_bytes_per_s;
	return uses * pass < migrate;
}

uint64_t host_choose(struct tensor_set *ts, const struct vital *v, const struct host_options *o)
{
	for (size_t i = 0; i < ts->n; i++) {
		ts->t[i].host = false;
		ts->t[i].host_offset = 0;
	}
	if (!o->excess || !o->remote_bytes_per_s || !o->dtoh_bytes_per_s || !o->htod_bytes_per_s)
		return 0;
	struct cand *cand = malloc((ts->n_persistent ? ts->n_persistent : 1) * sizeof *cand);
	if (!cand)
		return (uint64_t)-1;
	size_t n = 0;
	for (size_t i = 0; i < ts->n_persistent; i++)
		if (eligible(ts, v, i, o))
			cand[n++] = (struct cand){ v->tv[i].n_uses, ts->t[i].bytes, (uint32_t)i };
	qsort(cand, n, sizeof *cand, by_cost);
	uint64_t chosen = 0;
	for (size_t j = 0; j < n && chosen < o->excess; j++) {
		struct tensor *t = &ts->t[cand[j].tensor];
		/* The last one only in part, its tail: whole blocks enough to
		 * cover what is left of the excess. */
		uint64_t need = (o->excess - chosen + PLAN_BLOCK_SIZE - 1) / PLAN_BLOCK_SIZE * PLAN_BLOCK_SIZE;
		uint64_t part = need < t->bytes ? need : t->bytes;
		t->host = true;
		t->host_offset = t->bytes - part;
		chosen += part;
	}
	free(cand);
	return chosen;
}

/* What a use at position pos can have moved of a tensor of bytes. */
static double touched(const struct vital *v, uint32_t pos, uint64_t bytes)
{
	uint64_t ns = v->end_ns[pos] - v->start_ns[pos];
	double most = (double)ns * HOST_DEVICE_PEAK_BPS / 1e9;
	return ns && most < (double)bytes ? most : (double)bytes;
}

uint64_t host_pass_ns(const struct tensor_set *ts, const struct vital *v, uint64_t remote_bytes_per_s)
{
	double bytes = 0;
	for (size_t i = 0; i < ts->n; i++) {
		const struct tensor *t = &ts->t[i];
		const struct vital_tensor *tv = &v->tv[i];
		if (!t->host)
			continue;
		/* Of one kept there in part, the host part's share of what
		 * each use touches (uses assumed spread over the tensor). */
		double share = (double)(t->bytes - t->host_offset) / (double)t->bytes;
		for (uint32_t k = 0; k < tv->n_uses; k++)
			bytes += share * touched(v, v->uses[tv->use_first + k], t->bytes);
	}
	return (uint64_t)(bytes * 1e9 / (double)remote_bytes_per_s);
}
