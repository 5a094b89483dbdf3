/*
 * testplan.h: planning a trace inside a unit test, with the planner's
 * defaults at a capacity (0: the trace's device memory); a planner error
 * fails the test with its message. Include after testutil.h.
 */
#ifndef UMKIT_TESTPLAN_H
#define UMKIT_TESTPLAN_H

#include "plan/planner.h"

static inline struct planner *test_plan(const char *path, uint64_t capacity)
{
	struct planner_options o;
	planner_options_default(&o);
	o.capacity = capacity;
	struct planner *p;
	char err[512];
	if (planner_run(path, &o, &p, err, sizeof err))
		fail_msg("%s", err);
	return p;
}

#endif
