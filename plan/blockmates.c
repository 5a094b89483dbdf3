/* blockmates.c: the tensors that share a 2 MB block (see blockmates.h). */
#include "blockmates.h"

#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "search.h"

/* Whether x's footprint starts or ends inside a block; its first and last
 * block in *b0, *b1. */
static bool packed(const struct tensor *x, uint64_t *b0, uint64_t *b1)
{
	const uint64_t mask = ((uint64_t)1 << ACCESS_BLOCK_SHIFT) - 1;
	if (!x->bytes)
		return false;
	access_blocks(x->address, x->bytes, b0, b1);
	return (x->address & mask) || ((x->address + x->bytes) & mask);
}

static int cmp_mate(const void *a, const void *b)
{
	const struct blockmate *x = a, *y = b;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return (x->tensor > y->tensor) - (x->tensor < y->tensor);
}

int blockmates_build(const struct tensor_set *ts, struct blockmates *out)
{
	memset(out, 0, sizeof *out);
	out->m = malloc((ts->n ? 2 * ts->n : 1) * sizeof *out->m);
	if (!out->m)
		return -1;
	for (size_t t = 0; t < ts->n; t++) {
		uint64_t b0, b1;
		if (!packed(&ts->t[t], &b0, &b1))
			continue;
		out->m[out->n++] = (struct blockmate){ b0, (uint32_t)t };
		if (b1 != b0)
			out->m[out->n++] = (struct blockmate){ b1, (uint32_t)t };
	}
	qsort(out->m, out->n, sizeof *out->m, cmp_mate);
	return 0;
}

void blockmates_free(struct blockmates *m)
{
	free(m->m);
	memset(m, 0, sizeof *m);
}

/* Whether a tensor of block b but t and except is live in the stretch. */
static bool live_in(const struct blockmates *m, const struct tensor_set *ts, uint64_t b, uint32_t t,
		    uint32_t except, uint32_t from, uint32_t n)
{
	size_t first = lower_bound_u64(m->m, m->n, SEARCH_FIELD(struct blockmate, block), b);
	for (size_t i = first; i < m->n && m->m[i].block == b; i++) {
		uint32_t u = m->m[i].tensor;
		if (u != t && u != except && tensor_live_within(ts, &ts->t[u], from, n))
			return true;
	}
	return false;
}

bool blockmates_live(const struct blockmates *m, const struct tensor_set *ts, uint32_t t, uint32_t except,
		     uint32_t from, uint32_t n)
{
	uint64_t b0, b1;
	if (!packed(&ts->t[t], &b0, &b1))
		return false;
	return live_in(m, ts, b0, t, except, from, n) || (b1 != b0 && live_in(m, ts, b1, t, except, from, n));
}
