/*
 * trials.h: what the CUDA benchmark programs (bench's .cu files) share: their
 * first two arguments, COUNT and TRIALS; a check of each CUDA call; a
 * monotonic clock; and the fastest and median of a set of timed trials.
 */
#ifndef UMKIT_BENCH_TRIALS_H
#define UMKIT_BENCH_TRIALS_H

#include <cuda_runtime.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The program's name, for its messages: trials_args sets it. */
static const char *trials_program = "bench";

/* Reads COUNT and TRIALS, the arguments every benchmark starts with
 * (defaults default_count and 9): false unless COUNT is at least 1 and
 * TRIALS 1 to 1000. The caller judges any further arguments. */
static inline bool trials_args(int argc, char **argv, long default_count, long *count, int *trials)
{
	const char *slash = strrchr(argv[0], '/');
	trials_program = slash ? slash + 1 : argv[0];
	*count = argc > 1 ? atol(argv[1]) : default_count;
	*trials = argc > 2 ? atoi(argv[2]) : 9;
	return *count >= 1 && *trials >= 1 && *trials <= 1000;
}

/* Says how the program is called; returns a usage error's exit status. */
static inline int trials_usage(const char *usage)
{
	fprintf(stderr, "usage: %s\n", usage);
	return 64;
}

/* 0 when e is cudaSuccess; else 1, after saying which call failed. */
static inline int trials_check(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 0;
	fprintf(stderr, "%s: %s: %s\n", trials_program, what, cudaGetErrorString(e));
	return 1;
}

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
