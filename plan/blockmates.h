/*
 * blockmates.h: the tensors that share a 2 MB block, for the scheduler's
 * evictions (sched.h): the replayer moves whole blocks, so evicting a
 * tensor moves whatever shares its blocks too.
 *
 * Only a tensor whose footprint starts or ends inside a block shares one
 * (the arena packs allocations of up to 1 MiB into blocks of their own,
 * and gives larger ones whole blocks: common/arena.h), and only its first
 * and last block, since the blocks between are all its own while it
 * lives. Those blocks are listed once per tensor, sorted, so the tensors
 * in one are found by binary search.
 */
#ifndef UMKIT_BLOCKMATES_H
#define UMKIT_BLOCKMATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

struct blockmate {
	uint64_t block;  /* address >> 21 */
	uint32_t tensor;
};

struct blockmates {
	size_t n;
	struct blockmate *m; /* by block, then tensor */
};

/* Lists the shared-block candidates of ts. Returns 0, or -1 when out of
 * memory. */
int blockmates_build(const struct tensor_set *ts, struct blockmates *out);

/* Frees what blockmates_build filled and zeroes m. */
void blockmates_free(struct blockmates *m);

/* Whether a tensor other than t and except shares a block with t and is
 * live at one of the n positions from `from` on (cyclic). False for a
 * tensor that covers its blocks whole. */
bool blockmates_live(const struct blockmates *m, const struct tensor_set *ts, uint32_t t, uint32_t except,
		     uint32_t from, uint32_t n);

#endif
