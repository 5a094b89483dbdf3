/*
 * lostids.h: the execution IDs the replay could not place in the plan once
 * an iteration had completed, with how often (umreplay --stats,
 * "engine.lost_kernels"): kernels of the steady state that the plan does
 * not hold, or holds elsewhere. Their launches get correlation prefetch
 * instead of the plan's ops, so they show where a run drifts from its plan.
 *
 * Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_LOSTIDS_H
#define UMKIT_REPLAY_LOSTIDS_H

#include <stddef.h>
#include <stdint.h>

/* Distinct IDs counted at most; launches of further ones count only in
 * the total. */
#define LOSTIDS_CAP 1024

struct lost_id {
	uint64_t exec_id, launches;
};

struct lost_totals {
	uint64_t launches; /* every lost launch counted */
	uint64_t distinct; /* IDs among them (up to LOSTIDS_CAP) */
};

typedef struct lostids lostids;

lostids *lostids_create(void);
void lostids_destroy(lostids *l);

void lostids_count(lostids *l, uint64_t exec_id);

/* The max IDs with the most launches, most first (ties by ID), into out;
 * returns how many were written. */
size_t lostids_top(const lostids *l, struct lost_id *out, size_t max, struct lost_totals *tot);

#endif
