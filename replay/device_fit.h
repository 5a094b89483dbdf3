/*
 * device_fit.h: whether the GPU a replay runs on has the memory its plan
 * keeps residency under.
 *
 * A plan is made for a capacity, by default the recording GPU's memory
 * (umplan), and replayed under it or under --gpu-budget. Replayed on a
 * smaller GPU (recorded on an H200, run on an H100), the room the plan
 * counts on is not there: the driver evicts and faults on its own where
 * the plan expected none. Slower, not wrong, so the replay goes on and
 * says so once, at the program's first allocation (its context exists).
 */
#ifndef UMKIT_REPLAY_DEVICE_FIT_H
#define UMKIT_REPLAY_DEVICE_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "plan.h"

/* The capacity a replay under policy keeps residency under: plan's under
 * the plan policy; 0 without a plan, or under another policy, which uses
 * a plan only to place launches (deepum its tables too). */
static inline uint64_t device_fit_capacity(const struct plan *plan, enum engine_policy policy)
{
	return plan && policy == ENGINE_PLAN ? plan->assume.capacity_bytes : 0;
}

/* Whether the limit that applies, budget if set (non-zero), else capacity
 * (device_fit_capacity), is more than device_bytes, the
 * memory of device_name; if so, writes the warning, naming plan_path,
 * into msg. */
bool device_fit_warning(const char *plan_path, uint64_t capacity, uint64_t budget, const char *device_name,
			uint64_t device_bytes, char *msg, size_t len);

#endif
