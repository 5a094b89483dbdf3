/*
 * plan_build.h: turning the analysis of one iteration and its schedule into
 * the plan umreplay reads (common/plan.h).
 *
 * The plan names every tensor that an op or the correlation tables refer
 * to, persistent ones first, each group in ordinal order, so equal inputs
 * give equal plans. The correlation tables are built from the planned
 * iteration's execution IDs and, per kernel, the 2 MB blocks of the tensors
 * it uses (allocation-relative), wrapping from the last kernel to the first;
 * tensors kept in host memory (tensor.host) are listed in plan.host and
 * left out of the tables (nothing prefetches them).
 */
#ifndef UMKIT_PLAN_BUILD_H
#define UMKIT_PLAN_BUILD_H

#include <stddef.h>

#include "access.h"
#include "corr.h"
#include "iter.h"
#include "plan.h"
#include "sched.h"
#include "tensor.h"
#include "trace_load.h"
#include "vital.h"

struct plan_build_input {
	const struct trace *trace;
	const struct iter_result *iter;
	const struct tensor_set *tensors;
	const struct access_set *access;
	const struct vital *vital;
	const struct sched_options *sched_options;
	const struct sched_result *sched;
	const struct corr_config *corr; /* NULL: no correlation tables */
	uint64_t host_ns;               /* added to the predicted iteration:
					   kernels' passes over host memory */
	uint64_t floor_ns;              /* the capacity floor (floor.h): the
					   predicted iteration is never less */
};

/* Builds, finalizes and validates the plan. Returns it, or NULL with err set
 * (out of memory, a correlation-table configuration out of range, a plan
 * that fails plan_validate: a bug, reported rather than written). */
struct plan *plan_build(const struct plan_build_input *in, char *err, size_t errlen);

#endif
