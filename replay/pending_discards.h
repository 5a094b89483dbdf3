/*
 * pending_discards.h: discards waiting for the GPU to finish with a range.
 *
 * A discard of a freed range may be issued only once the marker recorded at
 * its free has completed (every kernel queued before the free is done). The
 * executor keeps such discards here and takes the ready ones at later calls.
 *
 * A pending discard belongs to the range's *previous* owner. If the range
 * is allocated again meanwhile, the 2 MB blocks the new owner touches are
 * forgotten, even if the new owner is freed before the old marker
 * completes: the old marker says nothing about the new owner's kernels,
 * which may still be reading the range. (Issuing it then changed
 * ViT-B/16's losses under capacity emulation on the H100.) The rest of the
 * range, blocks freed together with them, is still discarded.
 *
 * Thread-safe: allocations arrive on any of the program's threads.
 */
#ifndef UMKIT_REPLAY_PENDING_DISCARDS_H
#define UMKIT_REPLAY_PENDING_DISCARDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay/engine.h"

typedef struct pending_discards pending_discards;

/* At most cap discards wait at once. NULL if out of memory. */
pending_discards *pending_discards_create(size_t cap);
void pending_discards_destroy(pending_discards *p);

/* Queues a discard of r behind mark; false if full (the discard is then
 * not made: discards only save work). */
bool pending_discards_add(pending_discards *p, uint64_t mark, struct engine_range r);

/* Forgets the pending discards of the 2 MB blocks [address, address +
 * bytes) overlaps: they have a new owner. The other blocks of a discard
 * stay pending (a discard cut in two takes a second slot; with none free,
 * its part after them is forgotten too). Returns how many runs of blocks
 * go undiscarded: one per discard that lost blocks, two where its part
 * after them was forgotten too. */
size_t pending_discards_forget(pending_discards *p, uint64_t address, uint64_t bytes);

/* Moves up to max discards whose marker done() says completed into out;
 * returns how many. The others stay, in order. */
size_t pending_discards_take_ready(pending_discards *p, bool (*done)(uint64_t mark),
				   struct engine_range *out, size_t max);

/* Forgets every pending discard: none will be made (the replayer stopped).
 * Returns how many there were, each a run of blocks left undiscarded. */
size_t pending_discards_clear(pending_discards *p);

/* How many wait (a hint: another thread may add or take meanwhile). */
size_t pending_discards_count(pending_discards *p);

#endif
