/*
 * marks.h: the markers the executor recorded behind launches, so that an
 * eviction or discard can wait for the last kernel that used its range.
 *
 * A marker is known by the launch sequence number (1, 2, ... per launch)
 * it follows. Two indexes: the most recent launches (a ring, for the
 * budget's evictions, which wait for a block's last use), and per plan
 * position the most recent launch of that kernel (for ops' `after`).
 * Positions get a marker only when an op names them as `after`
 * (marks_position_wanted), so a plan run records few markers.
 * Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_MARKS_H
#define UMKIT_REPLAY_MARKS_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"

/* Launches the ring remembers. A block unused for longer is evicted without
 * waiting: its kernel is this many launches old, far beyond the depth of a
 * CUDA launch queue, and an early eviction only costs a refault. */
#define MARKS_RING 4096u

/* A marker and the launch it follows; {0, 0}: nothing to wait for. */
struct wait_ref {
	uint64_t seq, mark;
};

/* The later of two waits: on one stream, a marker behind a later launch
 * implies the earlier ones; behind the same launch, the later recorded
 * marker (markers increase) covers what the earlier did and the calls in
 * between (two frees after one launch). */
static inline struct wait_ref wait_later(struct wait_ref a, struct wait_ref b)
{
	if (!a.mark)
		return b;
	if (!b.mark)
		return a;
	return b.seq > a.seq || (b.seq == a.seq && b.mark > a.mark) ? b : a;
}

typedef struct marks marks;

/* Marker indexes for plan (NULL: no positions). NULL when out of memory. */
marks *marks_create(const struct plan *plan);
void marks_destroy(marks *m);

/* True when some op of the plan waits for kernel #pos. */
bool marks_position_wanted(const marks *m, uint32_t pos);

/* Marker `mark` was recorded behind launch seq, which ran plan position pos
 * (PLAN_POS_NONE: none known). */
void marks_note(marks *m, uint64_t seq, uint32_t pos, uint64_t mark);

/* The marker behind launch seq, if still remembered, else {0, 0}. */
struct wait_ref marks_of_launch(const marks *m, uint64_t seq);

/* The marker behind the most recent launch of position pos ({0, 0}: none
 * yet, or pos is PLAN_POS_NONE). */
struct wait_ref marks_of_position(const marks *m, uint32_t pos);

#endif
