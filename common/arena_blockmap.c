/* arena_blockmap.c: the arena's per-block radix table (arena_blockmap.h). */
#include "arena_blockmap.h"

#include <stdlib.h>

#define BLOCK_SHIFT 21 /* ARENA_BLOCK_SIZE */
#define LEAF_SHIFT 30  /* one leaf: 512 blocks, 1 GiB */
#define ADDRESS_BITS 48
#define TOP_ENTRIES ((size_t)1 << (ADDRESS_BITS - LEAF_SHIFT))
#define LEAF_ENTRIES ((size_t)1 << (LEAF_SHIFT - BLOCK_SHIFT))

bool arena_blockmap_init(struct arena_blockmap *m)
{
	*m = (struct arena_blockmap){ calloc(TOP_ENTRIES, sizeof *m->leaves), TOP_ENTRIES, 0 };
	return m->leaves != NULL;
}

void arena_blockmap_destroy(struct arena_blockmap *m)
{
	if (!m->leaves)
		return;
	for (uint64_t t = m->lo; t < m->hi; t++)
		free(m->leaves[t]);
	free(m->leaves);
	m->leaves = NULL;
}

bool arena_blockmap_reserve(struct arena_blockmap *m, uint64_t address, uint64_t bytes)
{
	if (!bytes)
		return true;
	uint64_t last = address + bytes - 1;
	if (last < address || last >> ADDRESS_BITS)
		return false;
	for (uint64_t t = address >> LEAF_SHIFT; t <= last >> LEAF_SHIFT; t++) {
		if (!m->leaves[t] && !(m->leaves[t] = calloc(LEAF_ENTRIES, sizeof **m->leaves)))
			return false;
		m->lo = t < m->lo ? t : m->lo;
		m->hi = t + 1 > m->hi ? t + 1 : m->hi;
	}
	return true;
}

void arena_blockmap_set(struct arena_blockmap *m, uint64_t address, uint64_t bytes, void *value)
{
	if (!bytes)
		return;
	for (uint64_t b = address >> BLOCK_SHIFT; b <= (address + bytes - 1) >> BLOCK_SHIFT; b++)
		m->leaves[b >> (LEAF_SHIFT - BLOCK_SHIFT)][b & (LEAF_ENTRIES - 1)] = value;
}

void *arena_blockmap_get(const struct arena_blockmap *m, uint64_t address)
{
	if (address >> ADDRESS_BITS)
		return NULL;
	void **leaf = m->leaves[address >> LEAF_SHIFT];
	return leaf ? leaf[(address >> BLOCK_SHIFT) & (LEAF_ENTRIES - 1)] : NULL;
}
