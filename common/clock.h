/*
 * clock.h: the monotonic clock, in nanoseconds, for host-side timings.
 */
#ifndef UMKIT_CLOCK_H
#define UMKIT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t um_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif
