/*
 * planner.h: the umplan pipeline as one call: load the trace, find the
 * iterations, build the chosen iteration's tensors, access sets and
 * vitality, choose what stays in host memory, schedule, and build the plan (with its correlation tables).
 * umplan is a thin main over this; tests call it directly.
 *
 * Everything is deterministic: the same trace and options give the same
 * analysis and a byte-identical plan.
 */
#ifndef UMKIT_PLANNER_H
#define UMKIT_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "corr.h"
#include "floor.h"
#include "iter.h"
#include "plan.h"
#include "sched.h"
#include "tensor.h"
#include "trace_load.h"
#include "vital.h"

/* Defaults from h100-facts.md: cudaMemPrefetchAsync to the GPU, to the CPU
 * (eviction), and the fixed cost of one call. */
#define PLANNER_HTOD_BPS 48800000000ULL
#define PLANNER_DTOH_BPS 8600000000ULL
#define PLANNER_CALL_NS 100000ULL
/* One pass, read and written, over host memory mapped for the GPU: 1 GiB
 * in 28.7 ms on the H100 (tests/gpu/um_costs.py, round_trip_ms). */
#define PLANNER_REMOTE_BPS 37400000000ULL

struct planner_options {
	uint64_t capacity;         /* bytes; 0: the trace's device memory, else
				      the peak residency without a plan */
	uint64_t htod_bytes_per_s;
	uint64_t dtoh_bytes_per_s;
	uint64_t call_cost_ns;
	uint64_t remote_bytes_per_s; /* host placement (host.h); 0: off */
	uint32_t headroom_pct;     /* of the capacity, left free (sched.h) */
	struct iter_options iter;
	struct corr_config corr;
};

/* Fills o with the defaults above, automatic iteration detection and the
 * correlation tables' defaults. */
void planner_options_default(struct planner_options *o);

enum planner_capacity_source {
	PLANNER_CAPACITY_OPTION = 1, /* --capacity */
	PLANNER_CAPACITY_DEVICE,     /* the trace's meta.device_memory, less
					meta.driver_alloc_peak_bytes */
	PLANNER_CAPACITY_PEAK,       /* unknown: the unplanned peak */
};

struct planner {
	struct planner_options opt;
	struct trace *trace;
	struct iter_result iter;
	struct tensor_set tensors;
	struct access_set access;
	struct vital vital;
	struct sched_options sched_opt;
	struct sched_result sched;
	uint64_t host_bytes;       /* kept in host memory (host.h) */
	uint64_t host_ns;          /* their passes per iteration (host_pass_ns) */
	struct plan *plan;
	enum planner_capacity_source capacity_source;
	uint64_t budget;           /* the capacity before the headroom */
	struct capacity_floor floor; /* at the budget and the planner's DtoH */
};

/*
 * Runs the pipeline on the trace at path. Returns 0 and the result in *out
 * (free with planner_free), or -1 with err naming the file and the problem.
 */
int planner_run(const char *path, const struct planner_options *o, struct planner **out,
		char *err, size_t errlen);

/* Frees p and every stage's result; NULL is a no-op. */
void planner_free(struct planner *p);

#endif
