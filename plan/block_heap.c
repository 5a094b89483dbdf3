/*
 * block_heap.c: the simulator's min-heap of (key, block) pairs (see
 * block_heap.h), stored as an array: the children of i are 2i+1 and 2i+2.
 */
#include "block_heap.h"

#include <stdlib.h>

#include "grow.h"

static bool less(struct block_key a, struct block_key b)
{
	return a.key != b.key ? a.key < b.key : a.block < b.block;
}

static void sift_up(struct block_heap *h, size_t i)
{
	struct block_key x = h->e[i];
	while (i > 0 && less(x, h->e[(i - 1) / 2])) {
		h->e[i] = h->e[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->e[i] = x;
}

static void sift_down(struct block_heap *h, size_t i)
{
	struct block_key x = h->e[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && less(h->e[c + 1], h->e[c]))
			c++;
		if (!less(h->e[c], x))
			break;
		h->e[i] = h->e[c];
		i = c;
	}
	h->e[i] = x;
}

int block_heap_push(struct block_heap *h, uint64_t key, size_t block)
{
	struct block_key *e = room_for_one(h->e, h->n, &h->cap, sizeof *e, 1024);
	if (!e)
		return -1;
	h->e = e;
	h->e[h->n] = (struct block_key){ key, block };
	sift_up(h, h->n++);
	return 0;
}

bool block_heap_top(const struct block_heap *h, struct block_key *out)
{
	if (!h->n)
		return false;
	*out = h->e[0];
	return true;
}

void block_heap_pop(struct block_heap *h)
{
	if (!h->n)
		return;
	h->e[0] = h->e[--h->n];
	if (h->n)
		sift_down(h, 0);
}

void block_heap_keep(struct block_heap *h, bool (*live)(const void *ctx, struct block_key entry),
		     const void *ctx)
{
	size_t kept = 0;
	for (size_t i = 0; i < h->n; i++)
		if (live(ctx, h->e[i]))
			h->e[kept++] = h->e[i];
	h->n = kept;
	/* Floyd's construction: sift every parent down, last first. */
	for (size_t i = h->n / 2; i-- > 0;)
		sift_down(h, i);
}

void block_heap_free(struct block_heap *h)
{
	free(h->e);
	*h = (struct block_heap){ 0 };
}
