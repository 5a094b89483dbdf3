/*
 * iter.h: finding the iterations of a training run in its kernel sequence,
 * and choosing the steady-state one to plan.
 *
 * Two sources, in this order:
 *  - NVTX ranges: named by --iteration nvtx:NAME, or one of the usual names
 *    ("iteration", "iter", "step", "train_step", "training_step",
 *    "ProfilerStep", "batch"); a name matches a range whose text is the name
 *    or the name followed by a non-letter, in any case ("step 3",
 *    "ProfilerStep#3", "Step 3", "step_3"), but not by '_' and a letter
 *    ("batch_norm", "iteration_count": one word, not the marker).
 *    Iteration i is every kernel launched from range i's start to range
 *    i+1's start (the last one: to its end), so kernels between ranges stay
 *    in the cycle.
 *  - the period of the execution-ID sequence: the smallest period p whose
 *    p-periodic stretch of the sequence is the longest (unknown IDs, 0,
 *    match nothing; a sub-period, such as identical layers, covers less; a
 *    multiple of p covers no more), lengthened to the smallest multiple
 *    over which the persistent allocations each kernel touches repeat too
 *    (a loop over same-sized buffers in turn repeats its IDs every pass
 *    but its memory once around the ring). The
 *    kernels before the stretch are the warm-up, which includes a first
 *    iteration that differs. Iterations are cut at the point of the cycle
 *    where the fewest allocation bytes are live (the end of an optimizer
 *    step), found on the last period of the stretch.
 * Without either, the whole trace is one iteration.
 *
 * The chosen iteration is the latest one, other than the last, whose
 * execution-ID sequence equals its predecessor's (steady state: warm-up and
 * one-time allocations are behind it, and the next iteration shows how the
 * allocations it leaves live are freed), or the one --iteration N names.
 */
#ifndef UMKIT_ITER_H
#define UMKIT_ITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "trace_load.h"

enum iter_mode {
	ITER_MODE_AUTO = 0,
	ITER_MODE_INDEX, /* plan iteration `index` of those detected */
	ITER_MODE_NVTX,  /* iterations are NVTX ranges named nvtx_name */
};

struct iter_options {
	enum iter_mode mode;
	size_t index;
	char nvtx_name[128];
};

/* Parses "auto", "N" (0-based) or "nvtx:NAME". Returns 0, or -1 for text
 * that is none of these. */
int iter_options_parse(const char *text, struct iter_options *out);

enum iter_method {
	ITER_BY_NVTX = 1,
	ITER_BY_PERIOD,
	ITER_WHOLE, /* no repetition found: the whole trace */
};

/* "nvtx", "period" or "whole". */
const char *iter_method_name(enum iter_method m);

struct iter_span {
	size_t first; /* kernel position of the iteration's first kernel */
	size_t n;     /* kernels in it, >= 1 */
};

struct iter_result {
	enum iter_method method;
	char nvtx_name[128];     /* ITER_BY_NVTX: the name used */
	size_t n_iters;
	struct iter_span *iters; /* in launch order */
	size_t warmup;           /* kernels before the first iteration */
	size_t tail;             /* kernels after the last */
	size_t period;           /* ITER_BY_PERIOD: kernels per iteration */
	size_t rotation;         /* ITER_BY_PERIOD: period / the execution
				    IDs' own period; above 1 where persistent
				    buffers rotate (iter.c) */
	uint64_t *ring_keys;     /* [period] where rotation > 1, else NULL:
				    for the kernel at each offset of an
				    iteration, the ordinal of the persistent
				    allocation it uses and the other steps of
				    the ring do not (0: none), which tells the
				    replayer the ring's step */
	size_t chosen;           /* the iteration to plan */
	bool steady;             /* the chosen iteration equals its predecessor */
	/* When it does not (and has one): how many of its positions hold
	 * another execution ID than the predecessor's at the same position
	 * (positions only one of them has count too), and the first. */
	size_t n_differ, first_differ;
};

/* The longest rotation of persistent buffers looked for, in periods of the
 * execution IDs: the most steps a plan's ring may have. */
#define ITER_MAX_ROTATION PLAN_MAX_RING_STEPS

/*
 * Detects the iterations of t and chooses one. Returns 0 and fills out
 * (free with iter_result_free), or -1 with err naming the trace: no kernels,
 * no NVTX range of the requested name, an iteration index out of range.
 */
int iter_detect(const struct trace *t, const struct iter_options *o, struct iter_result *out,
		char *err, size_t errlen);

/* Frees what iter_detect filled (a no-op on a zeroed result). */
void iter_result_free(struct iter_result *r);

/*
 * The period search on its own (tests use it directly): the smallest period
 * p of ids[0..n) with the longest p-periodic stretch holding at least two
 * repetitions. Returns p and the stretch [*first, *end), or 0 when no
 * stretch repeats.
 */
size_t iter_find_period(const uint64_t *ids, size_t n, size_t *first, size_t *end);

#endif
