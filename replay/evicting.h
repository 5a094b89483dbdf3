/*
 * evicting.h: the evictions the replayer has queued that may not have left
 * the GPU yet, by range, so that a discard-and-prefetch can tell whether it
 * may land ahead of them.
 *
 * A discard-and-prefetch of a fresh allocation moves nothing, yet on the
 * replayer's one stream it waits for every eviction queued before it, each
 * of which waits for its marker and then for the driver's eviction work;
 * the program's stream waits for it in turn, so its next kernel waits for
 * evictions whose room it may not need (docs/benchmarks.md, "A
 * discard-and-prefetch ahead of the evictions"). It may land ahead of the
 * newest of them when the GPU would hold no more than the model's limit
 * meanwhile, their bytes fitting the room the model leaves, and none of
 * them touches its 2 MB blocks (one would move the new tensor's pages out
 * again); it waits for the older ones, which make its room.
 *
 * Evictions go in jobs numbered 1, 2, ... in queue order, and land in that
 * order (one stream). Not thread-safe: the executor's queue lock covers it.
 */
#ifndef UMKIT_REPLAY_EVICTING_H
#define UMKIT_REPLAY_EVICTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay/engine.h"

typedef struct evicting evicting;

/* NULL if out of memory. */
evicting *evicting_create(void);
void evicting_destroy(evicting *v);

/* An eviction job of the n ranges of r was queued; returns its number. Out
 * of memory, the job's ranges are not kept, and evicting_must_land names
 * it (or a later job) until it has landed. */
uint64_t evicting_queued(evicting *v, const struct engine_range *r, size_t n);

/* Forgets the jobs, oldest first, that landed(ctx, job) says have left the
 * GPU; stops at the first that has not. */
void evicting_drop_landed(evicting *v, bool (*landed)(void *ctx, uint64_t job), void *ctx);

/* Bytes of the jobs not known to have landed. */
uint64_t evicting_bytes(const evicting *v);

/* The newest job that must land before the n ranges of r may: of the jobs
 * not known to have landed, those after it fit in room and none shares a
 * 2 MB block with r. 0 when none must. */
uint64_t evicting_must_land(const evicting *v, const struct engine_range *r, size_t n, uint64_t room);

#endif
