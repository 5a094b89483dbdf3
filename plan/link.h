/*
 * link.h: the occupancy of the host-GPU link over one iteration, for the
 * scheduler: the transfers the driver makes one at a time (sched.h).
 *
 * The iteration repeats, so time is a circle of cycle_ns: a transfer that
 * runs past the end occupies the start of the next cycle, which is the start
 * of this one. Callers pass unwrapped times (any value; t mod cycle_ns is
 * the place on the circle) and get unwrapped times back, on the same lap as
 * the time they passed. Transfers on one link never overlap.
 */
#ifndef UMKIT_LINK_H
#define UMKIT_LINK_H

#include <stddef.h>
#include <stdint.h>

#define LINK_NONE INT64_MIN

struct link {
	int64_t cycle_ns;
	size_t n, cap;
	int64_t *s, *e; /* busy intervals [s, e) in [0, cycle_ns), sorted, disjoint */
};

/* An idle link over a cycle of cycle_ns (> 0). */
void link_init(struct link *l, int64_t cycle_ns);
/* Frees the interval lists and zeroes l. */
void link_free(struct link *l);

/* The earliest start >= t at which d ns fit, or LINK_NONE (d > cycle, or
 * no idle stretch of d ns). d == 0 fits anywhere. */
int64_t link_earliest(const struct link *l, int64_t t, int64_t d);

/* The latest start with start + d <= t at which d ns fit, or LINK_NONE. */
int64_t link_latest(const struct link *l, int64_t t, int64_t d);

/* Marks [start, start + d) busy; it must be idle (found by the calls above).
 * Returns 0, or -1 when out of memory. */
int link_reserve(struct link *l, int64_t start, int64_t d);

#endif
