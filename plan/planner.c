/* planner.c: the umplan pipeline (see planner.h). */
#include "planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "host.h"
#include "plan_build.h"

void planner_options_default(struct planner_options *o)
{
	memset(o, 0, sizeof *o);
	o->htod_bytes_per_s = PLANNER_HTOD_BPS;
	o->dtoh_bytes_per_s = PLANNER_DTOH_BPS;
	o->call_cost_ns = PLANNER_CALL_NS;
	o->remote_bytes_per_s = PLANNER_REMOTE_BPS;
	o->headroom_pct = SCHED_HEADROOM_PCT;
	iter_options_parse("auto", &o->iter);
	corr_config_default(&o->corr);
}

/* Where the schedule leaves residency above the capacity, keeps tensors in
 * host memory (host.h) and schedules again without them. */
static int place_on_host(struct planner *p, char *err, size_t errlen)
{
	uint64_t peak = p->sched.baseline_peak, cap = p->sched_opt.capacity;
	struct host_options ho = {
		.excess = peak > cap ? peak - cap : 0,
		.remote_bytes_per_s = p->opt.remote_bytes_per_s,
		.htod_bytes_per_s = p->opt.htod_bytes_per_s,
		.dtoh_bytes_per_s = p->opt.dtoh_bytes_per_s,
		.operand_bytes = p->access.ws_bytes,
	};
	p->host_bytes = host_choose(&p->tensors, &p->vital, &ho);
	if (p->host_bytes == (uint64_t)-1) {
		p->host_bytes = 0;
		snprintf(err, errlen, "%s: out of memory choosing what stays in host memory", p->trace->path);
		return -1;
	}
	if (!p->host_bytes)
		return 0;
	p->host_ns = host_pass_ns(&p->tensors, &p->vital, p->opt.remote_bytes_per_s);
	/* The residency without a plan (the reports' "active" memory and
	 * peak) is the program's, host tensors included: the first run's. */
	uint64_t *baseline = p->sched.baseline;
	p->sched.baseline = NULL;
	sched_result_free(&p->sched);
	int rc = sched_run(&p->tensors, &p->access, &p->vital, &p->sched_opt, &p->sched, err, errlen);
	free(p->sched.baseline);
	p->sched.baseline = baseline;
	p->sched.baseline_peak = peak;
	return rc ? -1 : 0;
}

static int schedule(struct planner *p, char *err, size_t errlen)
{
	p->sched_opt = (struct sched_options){
		.capacity = p->opt.capacity,
		.htod_bytes_per_s = p->opt.htod_bytes_per_s,
		.dtoh_bytes_per_s = p->opt.dtoh_bytes_per_s,
		.call_cost_ns = p->opt.call_cost_ns,
	};
	p->capacity_source = PLANNER_CAPACITY_OPTION;
	if (!p->sched_opt.capacity && p->trace->device_memory) {
		/* What the program held past umkit (cuBLAS's workspaces) is
		 * the device's memory, never the budget's. */
		p->sched_opt.capacity = p->trace->device_memory - p->trace->driver_alloc_peak_bytes;
		p->capacity_source = PLANNER_CAPACITY_DEVICE;
	}
	if (!p->sched_opt.capacity) {
		/* Unknown device: measure the unplanned peak with no limit,
		 * then plan against it (a capacity that does not bind: the
		 * plan has no ops, only the tables and the signature). */
		p->sched_opt.capacity = UINT64_MAX / 4;
		if (sched_run(&p->tensors, &p->access, &p->vital, &p->sched_opt, &p->sched, err, errlen))
			return -1;
		p->sched_opt.capacity = p->sched.baseline_peak ? p->sched.baseline_peak : 1;
		sched_result_free(&p->sched);
		p->capacity_source = PLANNER_CAPACITY_PEAK;
	}
	/* A capacity that does not bind needs no room left: its plan moves
	 * nothing. */
	p->budget = p->sched_opt.capacity;
	if (p->capacity_source != PLANNER_CAPACITY_PEAK)
		p->sched_opt.capacity = sched_headroom(p->budget, p->opt.headroom_pct);
	if (sched_run(&p->tensors, &p->access, &p->vital, &p->sched_opt, &p->sched, err, errlen))
		return -1;
	return place_on_host(p, err, errlen);
}

/* An ITERATION tensor whose previous instance is a PREVIOUS tensor is that
 * tensor in the next iteration: the same memory, so the one must end the
 * iteration as the other starts it. Where a kernel uses the first, it
 * ends resident unless the plan evicts it, in one period with the second's
 * start (vital.c), which so starts resident too; where none does, it ends
 * empty, and so does the second start, whatever touched it before the
 * iteration; plan_check carries the state across and tells any
 * difference. Where the program frees the first within the iteration, its
 * memory goes on as nothing: the second starts as the trace had it. */
static int hand_on(struct planner *p, char *err, size_t errlen)
{
	struct tensor_set *ts = &p->tensors;
	const struct access_set *a = &p->access;
	if (!ts->n_previous)
		return 0;
	bool *used = calloc(ts->n, sizeof *used);
	if (!used) {
		um_errmsg(err, errlen, "%s: out of memory", p->trace->path);
		return -1;
	}
	for (size_t j = 0; j < a->n_refs; j++)
		used[a->tensor[j]] = true;
	for (size_t x = ts->n_persistent - ts->n_previous; x < ts->n_persistent; x++) {
		struct tensor *y = &ts->t[ts->t[x].twin];
		y->hands_on = used[y - ts->t] && tensor_hands_on_memory(ts, y);
		if (!y->freed)
			ts->t[x].resident_at_start = y->hands_on;
	}
	free(used);
	return 0;
}

int planner_run(const char *path, const struct planner_options *o, struct planner **out,
		char *err, size_t errlen)
{
	*out = NULL;
	char corr_err[256];
	if (corr_config_check(&o->corr, corr_err, sizeof corr_err)) {
		snprintf(err, errlen, "bad correlation-table option: %s", corr_err);
		return -1;
	}
	struct planner *p = calloc(1, sizeof *p);
	if (!p) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	p->opt = *o;
	if (!(p->trace = trace_load(path, err, errlen)) ||
	    iter_detect(p->trace, &o->iter, &p->iter, err, errlen) ||
	    tensor_build(p->trace, &p->iter, &p->tensors, err, errlen) ||
	    access_build(p->trace, &p->tensors, &p->access, err, errlen) ||
	    hand_on(p, err, errlen) ||
	    vital_build(p->trace, &p->tensors, &p->access, &p->vital, err, errlen) ||
	    schedule(p, err, errlen)) {
		planner_free(p);
		return -1;
	}
	if (capacity_floor(&p->tensors, &p->access, &p->vital, p->budget, p->sched_opt.dtoh_bytes_per_s, &p->floor)) {
		um_errmsg(err, errlen, "%s: out of memory", p->trace->path);
		planner_free(p);
		return -1;
	}
	struct plan_build_input in = {
		.trace = p->trace, .iter = &p->iter, .tensors = &p->tensors, .access = &p->access,
		.vital = &p->vital, .sched_options = &p->sched_opt, .sched = &p->sched,
		.corr = &p->opt.corr,
		.host_ns = p->host_ns,
		.floor_ns = p->floor.ns,
	};
	if (!(p->plan = plan_build(&in, err, errlen))) {
		planner_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

void planner_free(struct planner *p)
{
	if (!p)
		return;
	plan_destroy(p->plan);
	sched_result_free(&p->sched);
	vital_free(&p->vital);
	access_set_free(&p->access);
	tensor_set_free(&p->tensors);
	iter_result_free(&p->iter);
	trace_free(p->trace);
	free(p);
}
