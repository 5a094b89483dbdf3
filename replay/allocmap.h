/*
 * allocmap.h: the program's live allocations, and which of them each
 * allocation of the plan names (common/plan.h, struct plan_alloc).
 *
 * Live allocations are kept by id (the arena's ordinal) with their address
 * and 2 MB block range. A plan allocation is found at run time by its
 * ordinal, never by address:
 *   persistent  the allocation whose id is the ordinal;
 *   iteration   the ordinal-th allocation made since the current iteration
 *               started (allocmap_iteration_start, called when the
 *               matcher starts an iteration). Until this iteration makes
 *               it, the previous iteration's instance stands in: an op placed
 *               before the allocation (an eviction or discard that wraps
 *               around the iteration end) means that one, and the arena is
 *               deterministic, so addresses repeat.
 *   previous    the previous iteration's instance of that ordinal, never
 *               this iteration's: one the program frees after making its
 *               successor, so that both are live for a while.
 * An iteration that starts at a later kernel than the plan's first (the
 * program no longer launches it) counts on from the number of allocations
 * the plan made before that kernel (signature.alloc_before), so the
 * allocations after it are numbered as the plan's. Within an iteration the
 * count just runs on, a resync included: the program may or may not have
 * made the allocations of kernels it skipped or repeated, and which of two
 * threads allocates or launches first varies from run to run; counting on
 * is right whenever the allocations are the plan's.
 * While the matcher has lost its place it starts no iteration, and the
 * program may cross into its next one meanwhile: the allocation after an
 * iteration has made all of the plan's iteration allocations is the next
 * iteration's first (the plan counts them from one launch of its first
 * kernel to the next), and starts its instances as a start would. When the
 * matcher then finds the start of that iteration, its instances stay; when
 * it finds the next one's, the allocations the program made there before
 * it are no instances of the iteration before.
 * A plan allocation is mapped only when the sizes agree (a program that
 * drifted from the plan gets fewer ops, never ops on the wrong sizes). An
 * iteration that did not map an iteration ordinal leaves the next one no
 * previous instance of it (UNSEEN), to stand in or as the previous one,
 * never an older one: the arena has likely handed that one's range out
 * again, and an op meant for the previous instance would land on whatever
 * holds it now.
 * Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_ALLOCMAP_H
#define UMKIT_REPLAY_ALLOCMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"

struct alloc_rec {
	uint64_t id, address, size;
	uint64_t first_block; /* block number of the first byte */
	uint32_t n_blocks;    /* blocks [address, address + size) overlaps */
	uint32_t gpu_blocks;  /* of those, the ones before the tail the plan
				 keeps in host memory (onhost.c): all of them
				 unless that tail was placed there */
	bool touched;         /* a kernel used it or the program wrote it since
				 it was made: its contents may matter */
	int32_t plan_pers, plan_iter; /* plan allocations mapped to it, or -1 */
	int32_t plan_prev;     /* the PREVIOUS plan allocation it will be, as
				  the next iteration's previous instance, or -1 */
	uint64_t iter_ordinal; /* its iteration ordinal (above); 0: made
				  before the first iteration started, or no
				  plan */
};

enum allocmap_state { ALLOCMAP_UNSEEN = 0, ALLOCMAP_LIVE = 1, ALLOCMAP_FREED = 2 };

/* Where a plan allocation is now. */
struct allocmap_where {
	enum allocmap_state state; /* UNSEEN: not made (yet); address unset */
	uint64_t address, size;
	struct alloc_rec *rec;     /* the live allocation when LIVE, else NULL */
};

typedef struct allocmap allocmap;

/* An empty map resolving the allocations of plan (NULL: no plan). NULL when
 * out of memory. The plan must outlive the map. */
allocmap *allocmap_create(const struct plan *plan);
void allocmap_destroy(allocmap *m);

/* The program made allocation id at [address, address + size). Maps it to
 * the plan allocation it is, if any. Returns the record (valid until the
 * next add or remove), or NULL when out of memory, id is 0 or live, or the
 * range passes the end of the address space or spans 2^32 blocks or more
 * (only a corrupt trace's: the model does not follow it). */
struct alloc_rec *allocmap_add(allocmap *m, uint64_t id, uint64_t address, uint64_t size);

/* The program freed allocation id: copies its record to *out and forgets
 * it. Returns false when id is not live. */
bool allocmap_remove(allocmap *m, uint64_t id, struct alloc_rec *out);

/* The live allocation id, or NULL. Valid until the next add or remove. */
struct alloc_rec *allocmap_live(allocmap *m, uint64_t id);

/* The live allocations, in no particular order: the first at or after
 * *cursor (start at 0), which moves past it; NULL after the last. Valid
 * until the next add or remove. */
struct alloc_rec *allocmap_next_live(allocmap *m, size_t *cursor);

/* The launch at plan position pos (< the plan's n_kernels) starts an
 * iteration: this iteration's instances become the previous ones, and
 * ordinals count on from the allocations the plan made before pos (from 0
 * when the plan does not say). Where the count began this iteration while
 * the matcher was lost (allocmap_place_lost) and its allocations since are
 * nearer the plan's count at pos than a whole iteration past it, the
 * iteration is that one: its instances stay, and the count runs on, as
 * within an iteration. Where they are farther, the program went on into
 * the next iteration: the last allocations counted, as many as the plan
 * made before pos, were made in it, and become no previous instance.
 * Returns how many allocations the program made in this iteration before
 * its start was found, which it keeps as this iteration's (those the count
 * took past the plan's before the loss was noticed included): 0 but where
 * the count began it. */
uint64_t allocmap_iteration_start(allocmap *m, uint32_t pos);

/* Whether the count began the iteration it is in while the matcher was
 * lost (above), with no launch placed since: the program's allocations say
 * it went on into its next iteration. Asked before the launch's
 * allocmap_place_lost. */
bool allocmap_began_while_lost(const allocmap *m);

/* Whether the matcher has lost its place (match_step.lost), told after
 * each launch's iteration start: while it is lost, the iteration's
 * allocations past the plan's begin the next iteration (above). */
void allocmap_place_lost(allocmap *m, bool lost);

/* The launch placed at plan position from is at position to of the same
 * iteration instead (to > from; engine.c, ring_step): ordinals count on as
 * from to's place. */
void allocmap_position_moved(allocmap *m, uint32_t from, uint32_t to);

/* Where plan allocation index (< plan->n_allocs) is now: this iteration's
 * instance once made, else the previous one (iteration origin), the
 * previous one (previous origin), or the allocation with that id
 * (persistent origin). */
void allocmap_resolve(allocmap *m, uint32_t index, struct allocmap_where *out);

/* Where plan allocation index will be when the next iteration starts, for
 * a kernel predicted past this iteration's end: a previous one is then
 * this iteration's instance (UNSEEN until this iteration makes it); the
 * others resolve as allocmap_resolve says (an iteration one's instance
 * stands in until the next iteration makes its own). */
void allocmap_resolve_next(allocmap *m, uint32_t index, struct allocmap_where *out);

#endif
