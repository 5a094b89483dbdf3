/*
 * residency.c: the residency model (see residency.h). Both lists are
 * circular and doubly linked through the blocks themselves, with a sentinel
 * each: head.next is the most recently used, head.prev the least.
 */
#include "residency.h"

#include <stdlib.h>

enum { LIST_NONE = 0, LIST_LIVE = 1, LIST_DEAD = 2 };

struct residency {
	blocktab *blocks;
	struct block live, dead; /* sentinels */
	uint64_t resident, peak; /* blocks */
};

residency *residency_create(void)
{
	residency *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->blocks = blocktab_create();
	if (!r->blocks) {
		free(r);
		return NULL;
	}
	r->live.next = r->live.prev = &r->live;
	r->dead.next = r->dead.prev = &r->dead;
	return r;
}

void residency_destroy(residency *r)
{
	if (!r)
		return;
	blocktab_destroy(r->blocks);
	free(r);
}

struct block *residency_block(residency *r, uint64_t no)
{
	return blocktab_get(r->blocks, no);
}

struct block *residency_find(residency *r, uint64_t no)
{
	return blocktab_find(r->blocks, no);
}

struct block *residency_find_run(residency *r, uint64_t no, uint32_t *n)
{
	return blocktab_find_run(r->blocks, no, n);
}

static void unlink_block(struct block *b)
{
	b->prev->next = b->next;
	b->next->prev = b->prev;
	b->prev = b->next = NULL;
	b->list = LIST_NONE;
}

/* Puts a resident block at the most recently used end of the list its
 * liveness calls for. */
static void file_block(residency *r, struct block *b)
{
	if (b->list != LIST_NONE)
		unlink_block(b);
	struct block *head = b->live ? &r->live : &r->dead;
	b->next = head->next;
	b->prev = head;
	head->next->prev = b;
	head->next = b;
	b->list = b->live ? LIST_LIVE : LIST_DEAD;
}

void residency_live_add(residency *r, struct block *b)
{
	b->live++;
	if (b->live == 1 && b->state == BLOCK_RESIDENT)
		file_block(r, b);
}

bool residency_live_drop(residency *r, struct block *b)
{
	if (b->live == 0)
		return true;
	b->live--;
	if (b->live)
		return false;
	if (b->state == BLOCK_RESIDENT)
		file_block(r, b);
	return true;
}

void residency_set(residency *r, struct block *b, enum block_state s)
{
	b->evicted = 0;
	if (s == BLOCK_RESIDENT) {
		if (b->state != BLOCK_RESIDENT) {
			r->resident++;
			if (r->resident > r->peak)
				r->peak = r->resident;
		}
		b->state = BLOCK_RESIDENT;
		file_block(r, b);
		return;
	}
	if (b->state == BLOCK_RESIDENT) {
		unlink_block(b);
		r->resident--;
	}
	b->state = (uint8_t)s;
}

void residency_touch(residency *r, struct block *b)
{
	if (b->state == BLOCK_RESIDENT)
		file_block(r, b);
}

struct block *residency_dead_victim(residency *r)
{
	return r->dead.prev != &r->dead ? r->dead.prev : NULL;
}

struct block *residency_victim(residency *r, uint64_t seq, bool honour_keep)
{
	struct block *dead = residency_dead_victim(r);
	if (dead)
		return dead;
	for (uint64_t i = 0; i < r->resident; i++) {
		struct block *b = r->live.prev;
		if (b == &r->live)
			return NULL;
		if (b->pin != seq && (!honour_keep || b->keep < seq))
			return b;
		file_block(r, b);
	}
	return NULL;
}

uint64_t residency_bytes(const residency *r)
{
	return r->resident * BLOCK_BYTES;
}

uint64_t residency_peak(const residency *r)
{
	return r->peak * BLOCK_BYTES;
}
