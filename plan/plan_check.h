/*
 * plan_check.h: an independent check of a plan against the analysis of the
 * iteration it was made for, by simulating residency at kernel granularity.
 *
 * The checker replays two cycles of the iteration (the first settles the
 * state a steady run starts the second with) and, in the second, verifies:
 *  1. capacity: after each kernel the resident bytes are at most the
 *     capacity, or the kernel's own working set where that alone exceeds
 *     the capacity;
 *  2. every evicted range is prefetched back before its next use;
 *  3. a DISCARD comes only where the program frees the allocation, after
 *     its last use (and names that last use in `after`);
 *  4. every op names a live allocation (a DISCARD: the one freed there).
 * It knows the plan's allocations only by (origin, ordinal), so it checks a
 * plan read back from disk as well as one just built, and follows whole
 * allocations: an op on a part of one (the scheduler makes none) counts
 * as moving nothing out, and as bringing nothing evicted back. Allocations the plan
 * keeps in host memory (plan.host) are never resident and count in no
 * working set; of one kept there from an offset on (plan.host_offset), only
 * the part before the offset is.
 *
 * Model per position k: frees due at k, then allocations (an iteration
 * tensor starts empty, a persistent one freed during the iteration starts
 * as it started the iteration), then the ops at k in plan order, then
 * kernel k's uses (an empty tensor becomes resident on first touch).
 */
#ifndef UMKIT_PLAN_CHECK_H
#define UMKIT_PLAN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "plan.h"
#include "tensor.h"
#include "vital.h"

struct plan_check_result {
	size_t violations;        /* 0: the plan has all four properties */
	size_t capacity_violations, use_violations, discard_violations, liveness_violations;
	uint64_t peak;            /* simulated peak residency (second cycle) */
	char first[512];          /* the first violation, in words ("" if none) */
};

/* Checks plan pl against the analysis. Never fails: an op naming an
 * allocation the analysis does not know counts as a liveness violation. */
void plan_check(const struct tensor_set *ts, const struct access_set *a, const struct vital *v,
		const struct plan *pl, struct plan_check_result *out);

/* As plan_check, and fills residency[k] (OUT, ts->n_pos entries) with the
 * bytes resident during kernel k of the second cycle: after the ops at k
 * and k's uses, what the capacity is checked against, the quantity the
 * scheduler models as sched_result.residency. All zero where the check
 * could not simulate (out of memory, a plan for another kernel count). */
void plan_check_residency(const struct tensor_set *ts, const struct access_set *a,
			  const struct vital *v, const struct plan *pl, struct plan_check_result *out,
			  uint64_t *residency);

#endif
