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
 * budgets given as a share of it. A fixture's is planned once per test
 * binary and kept: the suites ask for the same fixtures' peaks again and
 * again, and each ask loaded and planned the whole trace anew (a quarter
 * of test_replay_dryrun's time). Only a fixture's: no test writes one,
 * while a scratch path may hold another trace at each ask. */
static inline uint64_t test_unplanned_peak(const char *path)
{
	static struct {
		char path[512];
		uint64_t peak;
	} kept[64];
	static size_t n_kept;
	char dir[512];
	test_fixture(dir, sizeof dir, "");
	bool fixture = strncmp(path, dir, strlen(dir)) == 0 && strlen(path) < sizeof kept[0].path;
	for (size_t i = 0; fixture && i < n_kept; i++)
		if (strcmp(kept[i].path, path) == 0)
			return kept[i].peak;
	struct planner *p = test_plan(path, 1ULL << 50);
	uint64_t peak = p->sched.baseline_peak;
	planner_free(p);
	if (fixture && n_kept < sizeof kept / sizeof kept[0]) {
		strcpy(kept[n_kept].path, path);
		kept[n_kept++].peak = peak;
	}
	return peak;
}

#endif
