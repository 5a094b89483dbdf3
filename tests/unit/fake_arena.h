/*
 * fake_arena.h: an arena backend over addresses nothing maps, for tests
 * that only look allocations up (launch decoding) or hand their ranges to
 * the executor: segments are laid out from *next_base on, and every fence
 * has passed at once.
 */
#ifndef UMKIT_FAKE_ARENA_H
#define UMKIT_FAKE_ARENA_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"

static inline int fake_map(void *next_base, uint64_t bytes, uint64_t *base)
{
	uint64_t *next = next_base;
	*base = *next;
	*next += bytes;
	return 0;
}

static inline bool fake_unmap(void *ctx, uint64_t base, uint64_t bytes)
{
	return true;
}

static inline uint64_t fake_fence(void *ctx)
{
	return 1;
}

static inline bool fake_fence_passed(void *ctx, uint64_t token)
{
	return true;
}

/* An arena whose segments start at *next_base; NULL without memory. */
static inline arena *fake_arena_create(uint64_t *next_base)
{
	struct arena_backend b = { next_base, fake_map, fake_unmap, fake_fence, fake_fence_passed, fake_fence_passed,
				   NULL, NULL };
	return arena_create(NULL, &b);
}

#endif
