/*
 * path_args.h: what the programs timing the replayer's paths outside any
 * program (bench/alloc_path.c, bench/launch_path.c) share: their
 * arguments, TRACE PLAN BUDGET [REPS [TOUCH_KB [STRIDE]]], and the memory
 * they touch before each timed call, TOUCH_KB KiB STRIDE bytes apart
 * (default 0 and 64), standing in for the program's own work, which cools
 * the caches (stride 64) or the TLB (stride 4096) that the path then
 * finds cold.
 */
#ifndef UMKIT_BENCH_PATH_ARGS_H
#define UMKIT_BENCH_PATH_ARGS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "size.h"

struct path_args {
	const char *trace, *plan;
	uint64_t budget;
	int reps; /* default 5 */
	volatile unsigned char *touched;
	size_t touch_bytes, stride;
};

/* Reads program's arguments into a: 0, or the exit status with the
 * problem said: 2 for a usage error, 1 when the memory to touch cannot be
 * had. path_args_free gives that memory back. */
static inline int path_args_parse(const char *program, int argc, char **argv, struct path_args *a)
{
	if (argc < 4 || argc > 7) {
		fprintf(stderr, "usage: %s TRACE PLAN BUDGET [REPS [TOUCH_KB [STRIDE]]]\n", program);
		return 2;
	}
	a->trace = argv[1];
	a->plan = argv[2];
	int size_status = um_size_parse(argv[3], &a->budget);
	if (size_status != UM_SIZE_OK) {
		fprintf(stderr, "%s: BUDGET '%s' is %s\n", program, argv[3],
			size_status == UM_SIZE_TOO_LARGE ? "too large" : "not a size");
		return 2;
	}
	a->reps = argc > 4 ? atoi(argv[4]) : 5;
	a->touch_bytes = argc > 5 ? strtoull(argv[5], NULL, 10) * 1024 : 0;
	a->stride = argc > 6 ? strtoull(argv[6], NULL, 10) : 64;
	if (a->reps < 1 || !a->stride) {
		fprintf(stderr, "%s: REPS and STRIDE must be positive\n", program);
		return 2;
	}
	a->touched = a->touch_bytes ? calloc(1, a->touch_bytes) : NULL;
	if (a->touch_bytes && !a->touched) {
		fprintf(stderr, "%s: out of memory\n", program);
		return 1;
	}
	return 0;
}

/* Touches the memory, before a timed call. */
static inline void path_args_cool(const struct path_args *a)
{
	for (size_t i = 0; i < a->touch_bytes; i += a->stride)
		a->touched[i]++;
}

static inline void path_args_free(struct path_args *a)
{
	free((void *)a->touched);
	a->touched = NULL;
}

#endif
