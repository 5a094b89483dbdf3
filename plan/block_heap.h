/*
 * block_heap.h: a binary min-heap of (key, block) pairs, ordered by key
 * and then by block, for the simulator's choices of "the eviction that
 * ends first" and "the least recently used block" in O(log n) where a scan
 * of every block was O(n).
 *
 * Entries are never updated in place: a block whose key changes gets a
 * new entry, and the caller tells stale entries from live ones when they
 * surface (lazy deletion); block_heap_keep drops the stale ones in bulk.
 */
#ifndef UMKIT_BLOCK_HEAP_H
#define UMKIT_BLOCK_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct block_key {
	uint64_t key;
	size_t block;
};

struct block_heap {
	struct block_key *e;
	size_t n, cap;
};

/* Adds (key, block). Returns 0, or -1 when out of memory (the heap is
 * unchanged). */
int block_heap_push(struct block_heap *h, uint64_t key, size_t block);

/* The least entry into *out; false when the heap is empty. */
bool block_heap_top(const struct block_heap *h, struct block_key *out);

/* Removes the least entry (nothing when empty). */
void block_heap_pop(struct block_heap *h);

/* Keeps only the entries live(ctx, entry) accepts, in O(n). */
void block_heap_keep(struct block_heap *h, bool (*live)(const void *ctx, struct block_key entry),
		     const void *ctx);

void block_heap_free(struct block_heap *h);

#endif
