/* batch.c: per-kind op batches (see batch.h). */
#include "batch.h"

#include <stdlib.h>

#include "blocktab.h"
#include "grow.h"
#include "search.h"

#define KINDS 4

struct list {
	uint64_t *no;
	size_t n, cap;
	struct wait_ref wait;
};

struct batch {
	struct list kind[KINDS]; /* by enum engine_op */
	struct engine_range *ranges;
	size_t cap_ranges;
};

/* enum engine_op in the order the plan issues kinds. */
static const enum engine_op issue_order[KINDS] = { ENGINE_OP_DISCARD, ENGINE_OP_EVICT,
						   ENGINE_OP_DISCARD_PREFETCH, ENGINE_OP_PREFETCH };

batch *batch_create(void)
{
	return calloc(1, sizeof(struct batch));
}

void batch_destroy(batch *b)
{
	if (!b)
		return;
	for (int k = 0; k < KINDS; k++)
		free(b->kind[k].no);
	free(b->ranges);
	free(b);
}

int batch_add(batch *b, enum engine_op op, uint64_t no, struct wait_ref w)
{
	struct list *l = &b->kind[op];
	/* The ranges the flush coalesces the kind into are made room for
	 * here, where running out refuses the block, so that the flush
	 * issues every block added. */
	struct engine_range *r = room_for_one(b->ranges, l->n, &b->cap_ranges, sizeof *r, 64);
	if (!r)
		return -1;
	b->ranges = r;
	uint64_t *p = room_for_one(l->no, l->n, &l->cap, sizeof *p, 64);
	if (!p)
		return -1;
	l->no = p;
	l->no[l->n++] = no;
	l->wait = wait_later(l->wait, w);
	return 0;
}

/* Sorts l's blocks and turns them into coalesced ranges; returns how many.
 * The ranges never outnumber the blocks, and batch_add sizes the buffer
 * for that. */
static size_t coalesce(struct list *l, struct engine_range *out)
{
	size_t n = 0;
	qsort(l->no, l->n, sizeof *l->no, compare_u64);
	for (size_t i = 0; i < l->n; i++) {
		uint64_t addr = l->no[i] << BLOCK_SHIFT;
		/* Sorted: addr is at or past the last range's start. Measured
		 * from there, a range ending at 2^64 (its end would read 0)
		 * still holds a block added twice. */
		uint64_t past = n ? addr - out[n - 1].address : 0;
		if (n && past == out[n - 1].bytes)
			out[n - 1].bytes += BLOCK_BYTES;
		else if (!n || past > out[n - 1].bytes)
			out[n++] = (struct engine_range){ addr, BLOCK_BYTES };
	}
	return n;
}

void batch_flush(batch *b, const struct engine_executor *x, struct engine_stats *st, uint64_t ticket,
		 uint64_t room)
{
	for (int k = 0; k < KINDS; k++) {
		enum engine_op op = issue_order[k];
		struct list *l = &b->kind[op];
		if (!l->n)
			continue;
		size_t n = coalesce(l, b->ranges); /* room made by batch_add */
		uint64_t bytes = 0;
		for (size_t i = 0; i < n; i++)
			bytes += b->ranges[i].bytes;
		x->issue(x->ctx, op, b->ranges, n, l->wait.mark, ticket, room);
		st->ops[op]++;
		st->bytes[op] += bytes;
		l->n = 0;
		l->wait = (struct wait_ref){ 0, 0 };
	}
}
