/*
 * blocktab.c: the block table (see blocktab.h).
 *
 * Blocks live in chunks of CHUNK consecutive block numbers (128 MiB of
 * address space), allocated once and never moved; an open-addressing hash
 * maps a chunk number to its chunk. The arena packs allocations into its
 * segments (the large ones 2 MB-aligned, the small ones sharing blocks),
 * so a chunk is mostly used once created.
 */
#include "blocktab.h"

#include <stdlib.h>

#define CHUNK_SHIFT 6
#define CHUNK (1u << CHUNK_SHIFT)

struct slot {
	uint64_t chunk_no;
	struct block *blocks; /* NULL: empty slot */
};

struct blocktab {
	struct slot *slots;
	size_t cap, used; /* cap a power of two, used <= cap / 2 */
	uint64_t cached_no;
	struct block *cached; /* the chunk of the last lookup, or NULL */
};

static size_t hash_chunk(uint64_t c, size_t cap)
{
	c ^= c >> 29;
	c *= 0xbf58476d1ce4e5b9ULL;
	c ^= c >> 32;
	return (size_t)c & (cap - 1);
}

blocktab *blocktab_create(void)
{
	blocktab *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->cap = 64;
	t->slots = calloc(t->cap, sizeof *t->slots);
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void blocktab_destroy(blocktab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].blocks);
	free(t->slots);
	free(t);
}

static struct slot *probe(struct slot *slots, size_t cap, uint64_t chunk_no)
{
	size_t i = hash_chunk(chunk_no, cap);
	while (slots[i].blocks && slots[i].chunk_no != chunk_no)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(blocktab *t)
{
	size_t cap = t->cap * 2;
	struct slot *s = calloc(cap, sizeof *s);
	if (!s)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].blocks)
			*probe(s, cap, t->slots[i].chunk_no) = t->slots[i];
	free(t->slots);
	t->slots = s;
	t->cap = cap;
	return 0;
}

static struct block *chunk_of(blocktab *t, uint64_t chunk_no, int create)
{
	if (t->cached && t->cached_no == chunk_no)
		return t->cached;
	struct slot *s = probe(t->slots, t->cap, chunk_no);
	if (!s->blocks) {
		if (!create)
			return NULL;
		if (2 * (t->used + 1) > t->cap) {
			if (grow(t) != 0)
				return NULL;
			s = probe(t->slots, t->cap, chunk_no);
		}
		struct block *b = calloc(CHUNK, sizeof *b);
		if (!b)
			return NULL;
		for (uint32_t i = 0; i < CHUNK; i++)
			b[i].no = (chunk_no << CHUNK_SHIFT) | i;
		s->chunk_no = chunk_no;
		s->blocks = b;
		t->used++;
	}
	t->cached_no = chunk_no;
	t->cached = s->blocks;
	return s->blocks;
}

struct block *blocktab_get(blocktab *t, uint64_t no)
{
	struct block *c = chunk_of(t, no >> CHUNK_SHIFT, 1);
	return c ? &c[no & (CHUNK - 1)] : NULL;
}

struct block *blocktab_find(blocktab *t, uint64_t no)
{
	struct block *c = chunk_of(t, no >> CHUNK_SHIFT, 0);
	return c ? &c[no & (CHUNK - 1)] : NULL;
}

struct block *blocktab_find_run(blocktab *t, uint64_t no, uint32_t *n)
{
	uint32_t in_chunk = CHUNK - (uint32_t)(no & (CHUNK - 1));
	if (*n > in_chunk)
		*n = in_chunk;
	return blocktab_find(t, no);
}
