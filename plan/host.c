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

/* The most bytes the kernel at pos can have moved in its recorded time
 * (0 without one). */
static double most_moved(const struct vital *v, uint32_t pos)
{
	return (double)vital_kernel_ns(v, pos) * HOST_DEVICE_PEAK_BPS / 1e9;
}

/* The kernel at pos ran longer than HOST_MAX_REUSE passes over its
 * operands at the device's peak would take: it re-reads them (host.h). A
 * kernel with no recorded time, or operands unknown, is not taken for one. */
static bool rereads(const struct vital *v, uint32_t pos, const struct host_options *o)
{
	if (!o->operand_bytes || !o->operand_bytes[pos])
		return false;
	return most_moved(v, pos) > HOST_MAX_REUSE * (double)o->operand_bytes[pos];
}

static bool eligible(const struct tensor_set *ts, const struct vital *v, size_t i,
		     const struct host_options *o)
{
	const struct tensor *t = &ts->t[i];
	uint32_t uses = v->tv[i].n_uses;
	if (t->origin != PLAN_ALLOC_PERSISTENT || t->live_len < ts->n_pos || t->freed ||
	    !owns_blocks(t) || uses > HOST_MAX_USES)
		return false;
	for (uint32_t k = 0; k < uses; k++)
		if (rereads(v, v->uses[v->tv[i].use_first + k], o))
			return false;
	/* Unused and not resident when the iteration starts: the schedule
	 * never counts it resident, so the host would take nothing off. */
	if (!uses && !t->resident_at_start)
		return false;
	double pass = 1.0 / (double)o->remote_bytes_per_s;
	double migrate = 1.0 / (double)o->dtoh_bytes_per_s + 1.0 / (double)o->htod_bytes_per_s;
	return uses * pass < migrate;
}

/* A candidate's blocks in proportion to need of group, rounded down. The
 * product of two block counts needs 128 bits past 2^64 (two tensors of
 * 2^54 bytes: the loader takes sizes up to 2^60). */
static uint64_t share_blocks(const struct cand *c, uint64_t need, uint64_t group)
{
	unsigned __int128 product = (unsigned __int128)(need / PLAN_BLOCK_SIZE) * (c->bytes / PLAN_BLOCK_SIZE);
	return (uint64_t)(product / (group / PLAN_BLOCK_SIZE));
}

/* Keeps need bytes (whole blocks, less than the group's) of the n
 * candidates of c on the host, the same share of each one's blocks at its
 * end: share_blocks each, then one more block for the first ones in order
 * until the blocks cover need. */
static void spread(struct tensor_set *ts, const struct cand *c, size_t n, uint64_t group, uint64_t need)
{
	uint64_t need_blocks = need / PLAN_BLOCK_SIZE, given = 0;
	for (size_t j = 0; j < n; j++)
		given += share_blocks(&c[j], need, group);
	for (size_t j = 0; j < n; j++) {
		struct tensor *t = &ts->t[c[j].tensor];
		uint64_t blocks = share_blocks(&c[j], need, group);
		if (given < need_blocks) { /* below each one's blocks: need < group */
			blocks++;
			given++;
		}
		if (!blocks)
			continue;
		t->host = true;
		t->host_offset = t->bytes - blocks * PLAN_BLOCK_SIZE;
	}
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
	/* Group by group of equal uses, the fewest first: whole groups while
	 * they fit in the excess; the group where it ends is spread. */
	uint64_t chosen = 0;
	for (size_t g = 0, end; g < n && chosen < o->excess; g = end) {
		uint64_t group = 0;
		for (end = g; end < n && cand[end].uses == cand[g].uses; end++)
			group += cand[end].bytes;
		uint64_t need = (o->excess - chosen + PLAN_BLOCK_SIZE - 1) / PLAN_BLOCK_SIZE * PLAN_BLOCK_SIZE;
		if (need < group) {
			spread(ts, cand + g, end - g, group, need);
			chosen += need;
			break;
		}
		for (size_t j = g; j < end; j++)
			ts->t[cand[j].tensor].host = true;
		chosen += group;
	}
	free(cand);
	return chosen;
}

/* What a use at position pos can have moved of a tensor of bytes. */
static double touched(const struct vital *v, uint32_t pos, uint64_t bytes)
{
	double most = most_moved(v, pos);
	return most > 0 && most < (double)bytes ? most : (double)bytes;
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
		double share = (double)tensor_host_bytes(t) / (double)t->bytes;
		for (uint32_t k = 0; k < tv->n_uses; k++)
			bytes += share * touched(v, v->uses[tv->use_first + k], t->bytes);
	}
	/* Past 2^64 ns (petabytes at a few MB/s), forever: converting it
	 * would be undefined, and read as 0 on x86-64. */
	double ns = bytes * 1e9 / (double)remote_bytes_per_s;
	return ns < (double)UINT64_MAX ? (uint64_t)ns : UINT64_MAX;
}
