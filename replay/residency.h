/*
 * residency.h: the engine's model of which 2 MB blocks are on the GPU, for
 * the budget (design.md, "Capacity emulation") and for skipping prefetches
 * of blocks already there.
 *
 * The model owns the block table (blocktab.h) and keeps each block's count
 * of live allocations, its state (absent, resident, discarded) and two
 * recency lists of the resident blocks:
 *   live  blocks holding at least one live allocation, least recently used
 *         at the tail: the budget's LRU eviction order;
 *   dead  resident blocks whose allocations were all freed: their contents
 *         are dead, so they are the first to go, by discard (no copy).
 * Discarded blocks count as not resident (the driver reclaims them first,
 * without a copy). Resident bytes and their peak are tracked.
 *
 * The model decides nothing: the engine changes states as it issues ops and
 * as kernels run. Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_RESIDENCY_H
#define UMKIT_REPLAY_RESIDENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "blocktab.h"

typedef struct residency residency;

/* An empty model, or NULL when out of memory. */
residency *residency_create(void);
void residency_destroy(residency *r);

/* The block numbered no, created absent on first use (NULL only when out of
 * memory) / without creating it (NULL when unknown; see blocktab_find). */
struct block *residency_block(residency *r, uint64_t no);
struct block *residency_find(residency *r, uint64_t no);
/* The run from no on, as blocktab_find_run. */
struct block *residency_find_run(residency *r, uint64_t no, uint32_t *n);

/* A live allocation now covers b / no longer does. live_drop returns true
 * when b has no live allocation left (its contents are dead). */
void residency_live_add(residency *r, struct block *b);
bool residency_live_drop(residency *r, struct block *b);

/* Moves b to state s. A block becoming resident, or resident already, goes
 * to the most recently used end of its list. */
void residency_set(residency *r, struct block *b, enum block_state s);

/* b, if resident, becomes the most recently used. */
void residency_touch(residency *r, struct block *b);

/* The block to give up first for room at launch seq: the oldest dead
 * resident block, else the least recently used live one that is not pinned
 * by seq nor, when honour_keep, kept through seq. Passed-over blocks move
 * to the most recently used end (a second chance, as in CLOCK), so repeated
 * calls stay cheap. NULL when every resident block is passed over. */
struct block *residency_victim(residency *r, uint64_t seq, bool honour_keep);

/* The oldest dead resident block, or NULL when there is none. */
struct block *residency_dead_victim(residency *r);

/* Bytes modelled resident now, and the most there have been. */
uint64_t residency_bytes(const residency *r);
uint64_t residency_peak(const residency *r);

#endif
