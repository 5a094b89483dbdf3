/*
 * dryrun.h: the replay engine driven through a recorded trace with no GPU
 * (umreplay --dry-run): the trace's allocations, frees and kernel launches
 * are fed to the engine in the order the recorded run made them, as
 * libumreplay.so would feed them, with the recording executor (oplog.h),
 * so a policy's decisions on that run can be shown without running it.
 *
 * What it models is the engine's view: its residency model, its ops, the
 * blocks it expects to fault back in. Not the GPU's timing: the clock is the
 * recording's (each event's recorded time), so iteration times are the
 * recorded run's, whatever the policy would have cost.
 */
#ifndef UMKIT_REPLAY_DRYRUN_H
#define UMKIT_REPLAY_DRYRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plan/trace_load.h"
#include "replay/engine.h"

/* Among events at one time, in this order: frees first (memory given back
 * may be handed out again at that time), then allocations, then the
 * launch; last the frees of allocations freed at the time they were made
 * (free_ns == alloc_ns, which trace_load also makes of a free recorded
 * before its allocation), since they must follow their allocation. */
enum dryrun_event_kind { DRYRUN_FREE, DRYRUN_ALLOC, DRYRUN_LAUNCH, DRYRUN_LATE_FREE };

/* One program event of the recorded run. */
struct dryrun_event {
	int64_t ns;                   /* recorded CPU time */
	enum dryrun_event_kind kind;
	uint32_t index;               /* kernel position (launches) or
					 allocation index (the others) */
};

/* The events of t sorted by time, then kind, then index, in a malloc'ed
 * array of *n the caller frees; NULL when out of memory. */
struct dryrun_event *dryrun_events(const struct trace *t, size_t *n);

/* What the engine did over a stretch of the run: differences of
 * engine_stats' counters of the same names. */
struct dryrun_counts {
	uint64_t launches;
	uint64_t matched, shaped, resynced, lost;
	uint64_t ops[4], bytes[4]; /* by enum engine_op: batch calls and bytes */
	uint64_t budget_evictions;
	uint64_t refault_blocks, refault_budget_blocks, refault_shared_blocks;
	uint64_t unread_evicted_blocks;
};

struct dryrun_result {
	struct engine_stats stats;       /* the engine's at the end */
	/* Per completed iteration, oldest first, as libumreplay.so counts
	 * them: a row ends with the launch that starts the next iteration,
	 * and the first holds everything before (start-up, warm-up). */
	size_t n_iterations;
	struct dryrun_counts *iterations;
	struct dryrun_counts tail;       /* after the last completed iteration */
	struct dryrun_counts total;      /* the whole run: the rows and the tail */
	/* The iterations' recorded wall times (engine_iteration_times), as
	 * many as the engine kept. */
	size_t n_iteration_ns;
	uint64_t *iteration_ns;
	/* The launch (1, 2, ... of those followed) that brought the verdict
	 * that the plan is not this program's (stats.signature_mismatch);
	 * nothing after it was fed to the engine. 0: no such verdict. */
	uint64_t foreign_at;
};

/*
 * Creates an engine with cfg over the recording executor and feeds it t's
 * events: an allocation to engine_on_alloc, a free to engine_on_free, a
 * launch (when engine_follows_launches says so) to engine_on_launch with
 * its arguments' allocations at offset 0, then engine_after_launch. The
 * executor's clock is each event's recorded time since the first event.
 * Returns 0 with *out filled (release it with dryrun_result_free), or -1
 * with err set (an unusable configuration, out of memory).
 */
int dryrun_run(const struct trace *t, const struct engine_config *cfg, struct dryrun_result *out,
	       char *err, size_t errlen);
void dryrun_result_free(struct dryrun_result *r);

/*
 * Prints r, the dry run of t under cfg (plan_path: the plan's file, NULL
 * when there is none), to f as umreplay --dry-run does: a summary line and
 * notes on what limited the run (an idle engine, a foreign plan, kernels
 * over the budget, CUDA graphs the recorded run used); then, unless
 * summary_only, a table with a row per completed iteration, the tail and
 * the total. Returns 0, or -1 when writing failed.
 */
int dryrun_print(FILE *f, const struct trace *t, const struct engine_config *cfg, const char *plan_path,
		 const struct dryrun_result *r, bool summary_only);

#endif
