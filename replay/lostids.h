/*
 * lostids.h: the execution IDs the replay could not place in the plan in
 * its steady iterations (every completed one but the first), with how often
 * (umreplay --stats, "measured.lost_kernels"): kernels of the steady state
 * that the plan does not hold, or holds elsewhere, so they show where a run
 * drifts from its plan. Lost launches are held as pending until their
 * iteration completes, then kept (a steady iteration) or dropped (the
 * first); launches after the last completed iteration (the program's own
 * end-of-run work) never count.
 *
 * Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_LOSTIDS_H
#define UMKIT_REPLAY_LOSTIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Distinct IDs counted at most, and pending launches held at most; further
 * ones count only in the total. */
#define LOSTIDS_CAP 1024
#define LOSTIDS_PENDING 4096

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

/* A launch of exec_id was lost in the iteration under way. */
void lostids_count(lostids *l, uint64_t exec_id);

/* The iteration under way completed: its lost launches are kept when keep
 * (a steady iteration), else dropped. */
void lostids_iteration_end(lostids *l, bool keep);

/* The max IDs with the most launches, most first (ties by ID), into out;
 * returns how many were written. */
size_t lostids_top(const lostids *l, struct lost_id *out, size_t max, struct lost_totals *tot);

#endif
