/*
 * minmax.h: the smaller and the larger of two unsigned 64-bit values, and
 * their sum held at UINT64_MAX where it would wrap.
 */
#ifndef UMKIT_MINMAX_H
#define UMKIT_MINMAX_H

#include <stdint.h>

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline uint64_t add_sat_u64(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

#endif
