/*
 * inflight.h: the migrations not yet known complete, and the ranges each
 * one moves, so that a discard can be ordered after exactly those of its
 * own range.
 *
 * Migrations run on the replayer's migration stream in the order of their
 * sequence numbers; discards run on a stream of their own. A discard that
 * ran while an earlier migration of its range was pending or copying
 * changed the PyTorch MLP's losses on the H100 (docs/replay.md, "What
 * discard may touch"), so the executor orders each discard after the
 * newest migration in flight that overlaps it, and only that one: the
 * stream is FIFO, so the older ones are done by then.
 *
 * Not thread-safe: the executor calls it with the engine's lock held.
 */
#ifndef UMKIT_REPLAY_INFLIGHT_H
#define UMKIT_REPLAY_INFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay/engine.h"

typedef struct inflight inflight;

/* At most max_ranges ranges are kept; NULL if out of memory. */
inflight *inflight_create(size_t max_ranges);
void inflight_destroy(inflight *f);

/* Notes migration seq over r[0..n). Sequence numbers start at 1 and
 * increase. Past max_ranges (or out of memory) its ranges are not kept
 * and it counts as overlapping every range until it retires: a discard
 * then waits longer, never shorter. false in that case. */
bool inflight_add(inflight *f, uint64_t seq, const struct engine_range *r, size_t n);

/* Migrations up to and including seq completed: forgets them. */
void inflight_retire(inflight *f, uint64_t seq);

/* The oldest migration not retired; 0 if none. */
uint64_t inflight_oldest(const inflight *f);

/* The newest migration not retired that overlaps any of r[0..n); 0 if none. */
uint64_t inflight_newest(const inflight *f, const struct engine_range *r, size_t n);

#endif
