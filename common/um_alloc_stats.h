/*
 * um_alloc_stats.h: what serving the program's allocations has cost
 * (common/cuda/um_alloc.h fills it). Kept apart from um_alloc.h, which
 * needs the CUDA headers, so that the portable stats writer can hold one.
 */
#ifndef UMKIT_UM_ALLOC_STATS_H
#define UMKIT_UM_ALLOC_STATS_H

#include <stdbool.h>
#include <stdint.h>

struct um_alloc_stats {
	uint64_t allocs, frees;  /* calls the arena served */
	uint64_t ns;             /* host time inside them, the hooks included */
	uint64_t fence_waits;    /* allocations that waited for an earlier free's fence */
	uint64_t fence_wait_ns;  /* time blocked in fences (those waits, and a full ring) */
	uint64_t fence_orders;   /* device allocations handed out before their
				    fence completed, the program's later GPU
				    work queued behind it (fence_order.h) */
	uint64_t fence_refusals; /* waits for a fence not made (a capture under
				    way, or the driver refused): the range
				    stayed free, or its segment mapped, or
				    (the last resort's) the allocation failed */
	uint64_t last_resort_waits; /* allocations that would have failed so,
				       served after a synchronize made as the
				       last resort (um_backend.c) */
	uint64_t runtime_allocs, runtime_bytes; /* allocations the runtime served
				    in the arena's stead (common/cuda/um_alloc.c
				    says when), and their bytes */
	uint64_t driver_allocs, driver_bytes; /* GPU memory the program got past
				    the shim, through the driver
				    (common/cuda/driver_allocs.h), and its bytes */
	uint64_t driver_peak_bytes; /* the most of those bytes held at once */
	uint64_t driver_managed_allocs, driver_managed_bytes; /* managed memory
				    got so (cuMemAllocManaged), not in the
				    three above, and its bytes */
	uint64_t driver_managed_peak_bytes; /* the most of those bytes held at once */
	bool one_stream;         /* all work so far in one stream order: fences
				    complete at once (um_backend.c, multi_stream) */
};

#endif
