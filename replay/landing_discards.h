/*
 * landing_discards.h: the discards the replayer has issued that may not
 * have landed yet, by range.
 *
 * The program's own managed memory may be written by the host as soon as
 * the program has it, in no stream's order, so a discard issued onto its
 * range while the range was free must land first (replay/cuda/rp_exec.c,
 * rp_exec_wait_discards). Waiting for every discard in flight would wait
 * behind all the replayer's queued work; this says which one to wait for.
 *
 * Discards are issued in batches on one stream, numbered from 1 in issue
 * order, so a batch has landed once any later one has. At most
 * LANDING_MAX_RANGES ranges are kept: the oldest go first, half the table
 * at a time (a batch larger than the table keeps none), and a query must
 * then wait for the newest batch forgotten so, which covers them.
 *
 * Thread-safe: discards are issued under the engine's lock, the queries
 * come from allocating threads.
 */
#ifndef UMKIT_REPLAY_LANDING_DISCARDS_H
#define UMKIT_REPLAY_LANDING_DISCARDS_H

#include <stddef.h>
#include <stdint.h>

#include "replay/engine.h"

#define LANDING_MAX_RANGES 4096

typedef struct landing_discards landing_discards;

/* NULL if out of memory. */
landing_discards *landing_discards_create(void);
void landing_discards_destroy(landing_discards *l);

/* The n ranges of r were issued as one batch: returns its number. */
uint64_t landing_discards_issued(landing_discards *l, const struct engine_range *r, size_t n);

/* The batch that must land before [address, address + bytes) holds no
 * discard in flight: the newest one overlapping it (or forgotten); 0 when
 * none. */
uint64_t landing_discards_wait_for(landing_discards *l, uint64_t address, uint64_t bytes);

/* Every batch up to number batch has landed: their ranges are dropped. */
void landing_discards_landed(landing_discards *l, uint64_t batch);

#endif
