/*
 * batch.h: the ops the engine decides while handling one event (a launch,
 * a free), gathered per kind as 2 MB block numbers, then issued as one
 * batch call per kind: ranges sorted and coalesced, each batch behind the
 * latest marker any of its blocks waits for.
 *
 * Kinds are issued in the plan's order (common/plan.h): discard, evict,
 * discard_prefetch, prefetch, so room is made before data is brought in.
 * Buffers grow to the largest batch seen and are then reused: no memory is
 * allocated per launch in a steady state, and none at a flush. Not
 * thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_BATCH_H
#define UMKIT_REPLAY_BATCH_H

#include "engine.h"
#include "marks.h"

typedef struct batch batch;

/* An empty batch, or NULL when out of memory. */
batch *batch_create(void);
void batch_destroy(batch *b);

/* Adds block number no to the op's batch, which will wait for w (and for
 * the waits of the other blocks). Returns 0, or -1 when out of memory (the
 * block is not added): the room its flush needs is made here. */
int batch_add(batch *b, enum engine_op op, uint64_t no, struct wait_ref w);

/* Issues what was added through x, each kind's call with ticket and room
 * (see engine_executor), and empties the batch; counts each call and its
 * bytes in st->ops / st->bytes. Allocates nothing, so every block added is
 * issued. */
void batch_flush(batch *b, const struct engine_executor *x, struct engine_stats *st, uint64_t ticket,
		 uint64_t room);

#endif
