/*
 * clock.h: the monotonic clock, in nanoseconds, for host-side timings and
 * the deadlines of timed waits.
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

/* The monotonic clock's time ns nanoseconds from now: the deadline of a
 * timed wait on a condition variable that uses that clock. */
static inline struct timespec um_deadline_in(uint64_t ns)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	uint64_t nsec = (uint64_t)t.tv_nsec + ns % 1000000000u;
	t.tv_sec += (time_t)(ns / 1000000000u + nsec / 1000000000u);
	t.tv_nsec = (long)(nsec % 1000000000u);
	return t;
}

#endif
