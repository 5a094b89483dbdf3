/*
 * calls.h: cutting an op's coalesced ranges into driver calls. The CUDA
 * executor (replay/cuda/rp_exec.c) issues each call; the cutting is
 * portable so it is unit-tested without a GPU.
 *
 * A call holds at most CALLS_MAX_RANGES ranges and max_bytes bytes, and
 * each of its ranges lies within one mapping of managed memory: a driver
 * call on a range that spans two cudaMallocManaged allocations fails, even
 * when they are neighbours in the address space, and memory unmapped since
 * the op was decided is skipped.
 */
#ifndef UMKIT_REPLAY_CALLS_H
#define UMKIT_REPLAY_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

#define CALLS_MAX_RANGES 1024

struct calls_target {
	void *ctx;
	/* How many of the bytes [address, address + bytes) lie in the mapping
	 * that holds address; 0 when address is not mapped. NULL: everything
	 * is mapped, in one piece. */
	uint64_t (*extent)(void *ctx, uint64_t address, uint64_t bytes);
	/* Makes one call on ranges[0 .. n), which lie in piece. */
	void (*emit)(void *ctx, const struct engine_range *ranges, size_t n);
	/* Room for CALLS_MAX_RANGES ranges, where each call's are gathered:
	 * the caller's, as the 16 KiB would not fit every stack the calls
	 * are made on (a launch callback's, on the program's thread). */
	struct engine_range *piece;
};

/* Cuts ranges[0 .. n) (2 MB-aligned, ascending) into calls of at most
 * max_bytes bytes (max_bytes a multiple of 2 MB, or UINT64_MAX) and hands
 * each to t->emit. Returns the bytes skipped as unmapped. */
uint64_t calls_split(const struct engine_range *ranges, size_t n, uint64_t max_bytes,
		     const struct calls_target *t);

#endif
