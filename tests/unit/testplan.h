/*
 * testplan.h: planning a trace inside a unit test, with the planner's
 * defaults at a capacity (0: the trace's device memory), or with host
 * placement set apart; a planner error fails the test with its message. Include after testutil.h.
 */
#ifndef UMKIT_TESTPLAN_H
#define UMKIT_TESTPLAN_H

#include "plan/planner.h"

/* remote_bps: host placement's pass bandwidth (0: host placement off);
 * headroom_pct: the share of capacity left free (sched.h). */
static inline struct planner *test_plan_full(const char *path, uint64_t capacity, uint64_t remote_bps,
					     uint32_t headroom_pct)
{
	struct planner_options o;
	planner_options_default(&o);
	o.capacity = capacity;
	o.remote_bytes_per_s = remote_bps;
	o.headroom_pct = headroom_pct;
	struct planner *p;
	char err[512];
	if (planner_run(path, &o, &p, err, sizeof err))
		fail_msg("%s", err);
	return p;
}

static inline struct planner *test_plan_host(const char *path, uint64_t capacity, uint64_t remote_bps)
{
	return test_plan_full(path, capacity, remote_bps, SCHED_HEADROOM_PCT);
}

static inline struct planner *test_plan(const char *path, uint64_t capacity)
{
	return test_plan_host(path, capacity, PLANNER_REMOTE_BPS);
}

/* The iteration's peak without a plan (the planner's baseline), for
 * budgets given as a share of it. */
static inline uint64_t test_unplanned_peak(const char *path)
{
	struct planner *p = test_plan(path, 1ULL << 50);
	uint64_t peak = p->sched.baseline_peak;
	planner_free(p);
	return peak;
}

#endif
