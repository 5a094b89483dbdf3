/*
 * trials.h: what the CUDA benchmark programs (bench/*.cu) share: a
 * monotonic clock, and the fastest and median of a set of timed trials.
 */
#ifndef UMKIT_BENCH_TRIALS_H
#define UMKIT_BENCH_TRIALS_H

#include <stdlib.h>
#include <time.h>

static inline double trials_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static inline int trials_by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts ns[0 .. n) in place: the fastest is ns[0], the median ns[n / 2]. */
static inline void trials_sort(double *ns, int n)
{
	qsort(ns, n, sizeof *ns, trials_by_value);
}

#endif
