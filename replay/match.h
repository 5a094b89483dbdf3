/*
 * match.h: where the program is in the plan's kernel sequence.
 *
 * Each launch's execution ID is compared with the plan's ID at the expected
 * position. Equal: matched, the position advances (wrapping after the last
 * kernel). Otherwise the matcher resynchronises: the candidates are the
 * plan positions holding this ID (found by binary search in a sorted
 * (ID, position) index), and each is scored by how well the plan's kernels
 * before it agree with the last launches seen (a ring of MATCH_HISTORY
 * IDs). Execution IDs repeat within an iteration (the same kernel shape in
 * every layer), so the history, not the ID alone, picks the position.
 *
 * Scoring a candidate p: the length of the run of agreeing predecessors
 * (history[-1] against plan[p-1], history[-2] against plan[p-2], ...), and
 * the same with one kernel of slack right before p: one extra launch in the
 * history (a kernel inserted), one extra plan kernel (a kernel removed), or
 * one of each (a kernel replaced). An exact run of r scores 2r, a run with
 * slack 2r - 1. The best score wins, ties go to the candidate nearest the
 * expected position, ahead or back, and a resync needs a score of at least 2 (one
 * exact predecessor, or two with slack). At most MATCH_CANDIDATES
 * candidates, the nearest ahead or back, are scored. While the matcher is on track
 * it moves at most MATCH_NEAR positions, ahead or back, from the expected
 * position: identical layers have identical histories, and a kernel whose
 * ID varies from run to run, or one the program inserted, must not send the
 * matcher to another layer, or back across the iteration's start, from
 * where it was right. Farther moves wait until the place is lost (below).
 * Where the expected position is the plan's first, a move to at most
 * MATCH_NEAR past the entry (below) is near as well.
 *
 * Where a launch's ID is neither at the expected position nor resyncs, but
 * the plan gives its shape (kernel, grid, block, shared memory: the ID
 * without the arguments) and the launch has the expected position's shape,
 * it is placed there, matched by shape. Some IDs drift between runs: a
 * multi-tensor optimizer kernel's argument struct holds stale pointer words
 * left from earlier launches, which point into different allocations in
 * every run; such a launch is still the kernel the plan expects. Only on
 * track and only at the expected position: a shape alone (every layer has
 * the same) never moves the matcher. The history then takes the plan's ID
 * for the launch, so the predecessors of later launches agree.
 *
 * A launch neither matched nor resynced is lost; the expected position
 * stays, so a program that ran one unknown kernel matches again at once.
 * After MATCH_LOST_AFTER lost launches in a row the matcher has lost its
 * place, and only a resync (history evidence) brings it back.
 *
 * The very first launch matches position 0 when its ID is the plan's first.
 * An iteration starts when the position wraps: a new position, less the
 * launches lost right before it, at least half an iteration (rounded down)
 * before the last one (a short backward jump is a repeated kernel, not a
 * new iteration) and at most MATCH_NEAR past the entry (a
 * place found again mid-iteration after being lost, farther than that from
 * the entry, is no new iteration), or a first placement at position 0. The
 * entry is the lowest position placed with support (matched on track or
 * resynced: not the very first launch's match at 0, which a warm-up kernel
 * with the plan's first ID could make), 0 once the program runs the plan's
 * first kernel in an iteration. A program whose iterations lack the plan's
 * first kernels enters where it is first placed, and its iterations start
 * there; one that lacks half of the plan or more never starts one. A place
 * found again that would start one but for the entry is found_back: the
 * matcher cannot tell a program that went on into its next iteration while
 * lost from a wrong placement before the loss, its allocations can.
 * Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_MATCH_H
#define UMKIT_REPLAY_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#define MATCH_HISTORY 8
#define MATCH_CANDIDATES 64
#define MATCH_LOST_AFTER 4
#define MATCH_NEAR 8

enum match_how { MATCH_MATCHED, MATCH_SHAPED, MATCH_RESYNCED, MATCH_LOST };

struct match_step {
	enum match_how how;
	uint32_t position;    /* this launch's plan position (PLAN_POS_NONE when lost) */
	uint32_t skipped;     /* positions jumped over by a resync forward
				 within the iteration, nearer ahead than
				 back (0 otherwise) */
	bool iteration_start; /* this launch begins a pass over the plan */
	bool found_back;      /* no iteration start, but the place, lost
				 before this launch, was found again at
				 least half an iteration before the last
				 position placed: the program may have
				 begun its next iteration while lost
				 (engine.c asks its allocations) */
	bool lost;            /* the matcher has lost its place (after this launch) */
	bool moved;           /* set by the engine, never the matcher: the place
				 was moved to another step of a ring of buffers
				 (match_move) */
};

typedef struct match match;

/* A matcher for the sequence exec_ids[0 .. n) (n >= 1), with each
 * position's shape ID in shape_ids (NULL: match by ID alone). The arrays
 * must outlive the matcher. NULL when out of memory. */
match *match_create(const uint64_t *exec_ids, const uint64_t *shape_ids, uint32_t n);
void match_destroy(match *m);

/* Places the launch of exec_id and shape_id (0: unknown, never matches).
 * O(1) when it matches; a resync costs O(log n + MATCH_CANDIDATES *
 * MATCH_HISTORY). */
void match_launch(match *m, uint64_t exec_id, uint64_t shape_id, struct match_step *out);

/* Moves the place of the launch just placed to position p, one with the
 * same execution ID: its caller found from the launch's memory that the
 * program is at another step of a ring of buffers, whose steps share IDs
 * and histories (engine.c, ring_step). The next launch is expected after
 * p. The memory is support: the entry becomes the lower of p and the
 * entry before the launch (even where the launch was the very first,
 * whose match at 0 alone does not set it). */
void match_move(match *m, uint32_t p);

#endif
