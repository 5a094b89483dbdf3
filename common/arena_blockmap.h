/*
 * arena_blockmap.h: what occupies each 2 MiB block of the arena's memory,
 * found with two array loads.
 *
 * The arena looks up the parameter words of every kernel launch (arena.h,
 * arena_lookup); searching its live index costs a pointer chase per tree
 * level, each likely a cache miss in a program that ran Python in between.
 * This map answers for the block instead: a two-level radix table over the
 * 48-bit address space, like a page table with 2 MiB pages. The top level
 * is one array of 2^18 pointers (2 MiB of address space reserved at
 * creation, touched only where memory is mapped); each leaf covers 1 GiB.
 * Leaves are made when a segment is mapped, so setting an entry never
 * allocates, and kept until the map is destroyed.
 * Not thread-safe: the arena's lock covers it.
 */
#ifndef UMKIT_ARENA_BLOCKMAP_H
#define UMKIT_ARENA_BLOCKMAP_H

#include <stdbool.h>
#include <stdint.h>

struct arena_blockmap {
	void ***leaves;
	uint64_t lo, hi; /* the top entries that may hold leaves: [lo, hi) */
};

/* false when out of memory. */
bool arena_blockmap_init(struct arena_blockmap *m);
void arena_blockmap_destroy(struct arena_blockmap *m);

/* Makes the leaves for [address, address + bytes), so that entries there
 * can be set. false when out of memory or when the range reaches past the
 * 48-bit address space. */
bool arena_blockmap_reserve(struct arena_blockmap *m, uint64_t address, uint64_t bytes);

/* Sets the entry of every block that [address, address + bytes) touches
 * to value; the range must have been reserved. */
void arena_blockmap_set(struct arena_blockmap *m, uint64_t address, uint64_t bytes, void *value);

/* The entry of the block holding address; NULL where none was set or the
 * block was never reserved. */
void *arena_blockmap_get(const struct arena_blockmap *m, uint64_t address);

#endif
