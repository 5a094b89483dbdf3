/*
 * blocktab.h: the replayer's table of 2 MB UM blocks, keyed by block number
 * (address / 2 MiB), holding what the engine knows about each block.
 *
 * Blocks are created on first sight (when an allocation covering them is
 * made) and never freed before the table: the arena's address space is
 * bounded by the managed memory it maps, so the table is too. A block's
 * address in memory never changes, so other modules may keep pointers to it
 * (residency.c links blocks into its lists).
 *
 * Lookups of consecutive block numbers (every allocation's range) hit a
 * one-entry chunk cache and cost an index computation; other lookups cost one
 * hash probe. Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_BLOCKTAB_H
#define UMKIT_REPLAY_BLOCKTAB_H

#include <stdint.h>

#define BLOCK_SHIFT 21
#define BLOCK_BYTES ((uint64_t)1 << BLOCK_SHIFT) /* one UM block: 2 MiB */

/* The end of the block address lies in: the next block's first byte. */
static inline uint64_t block_end(uint64_t address)
{
	return (address | (BLOCK_BYTES - 1)) + 1;
}

enum block_state {
	BLOCK_ABSENT = 0,   /* not on the GPU (never touched, or evicted) */
	BLOCK_RESIDENT = 1, /* on the GPU: counts against the budget */
	BLOCK_DISCARDED = 2 /* contents dropped: not resident, never to be
			       evicted (an eviction would undo the discard) */
};

struct block {
	uint64_t no;                  /* block number: address >> BLOCK_SHIFT */
	struct block *prev, *next;    /* residency list links (residency.c) */
	uint64_t use_seq;             /* launch sequence number of the last
					 kernel that used it (0: none); for a
					 block released from host memory, the
					 last launch before (onhost.c) */
	uint64_t dead_seq, dead_mark; /* the marker recorded at the latest free
					 that left it dead, or holding only one
					 allocation nothing has used yet
					 (engine.c, destroyable), and the
					 launch it follows: a discard, or a
					 discard-and-prefetch of the one left,
					 waits for it */
	uint64_t pin;                 /* launch being prepared that needs it
					 resident (no eviction for that one) */
	uint64_t ticket;              /* the flush whose prefetch brought it
					 (executor gate); 0: none since it
					 was last evicted or discarded, or
					 the launch that needed it was gated */
	uint64_t fetch_seq;           /* with ticket: the launch whose ops
					 prefetched it */
	uint64_t keep;                /* prefetched for a kernel expected by
					 this launch: room for other prefetches
					 is not made by evicting it before */
	uint32_t live;                /* live allocations overlapping it */
	uint32_t fresh;               /* of those, the ones nothing has used or
					 written yet (alloc_rec.touched false) */
	uint8_t state;                /* enum block_state */
	uint8_t list;                 /* residency list holding it (residency.c) */
	uint8_t host;                 /* kept in host memory by the plan
					 (onhost.c): never resident, never
					 brought in or evicted */
	uint8_t by_budget;            /* last taken off the GPU by the budget
					 (act_room), not by an op of the policy */
	uint8_t evicted;              /* absent since an eviction copied its
					 bytes to the host (act_evict): any
					 change of state (residency_set)
					 clears it */
	uint8_t used_idle;            /* held by an allocation while the engine
					 was idle (engine.c, wake): used, as far
					 as the engine knows, though use_seq is 0 */
};

typedef struct blocktab blocktab;

/* An empty table, or NULL when out of memory. */
blocktab *blocktab_create(void);
void blocktab_destroy(blocktab *t);

/* The block numbered no, created zeroed (state BLOCK_ABSENT) on first use;
 * NULL only when out of memory. */
struct block *blocktab_get(blocktab *t, uint64_t no);

/* The block numbered no without creating it: NULL when no block near it was
 * ever created; a block never covered by an allocation reads as zeroed (no
 * live allocation, absent). */
struct block *blocktab_find(blocktab *t, uint64_t no);

/* blocktab_find of the run of blocks from no on: block no, and its
 * successors up to *n of them, lie next to each other in memory as far as
 * the returned pointer's *n (cut to where they do) says. NULL when no block
 * near no was ever created; *n then counts the blocks skipped so. For a
 * walk over an allocation's blocks with one lookup per run. */
struct block *blocktab_find_run(blocktab *t, uint64_t no, uint32_t *n);

#endif
