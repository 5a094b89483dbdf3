/*
 * launch_path.c: what the replay engine's launch path costs the program's
 * thread, measured outside any program.
 *
 * Usage: launch_path TRACE PLAN BUDGET [REPS [TOUCH_KB [STRIDE]]]
 *
 * Feeds TRACE's allocations, frees and launches in the recorded order
 * (replay/dryrun.h's events) to an engine under each policy, as
 * libumreplay.so's hooks do, over the recording executor (no CUDA), and
 * times the launches alone: engine_on_launch with the kernel's arguments,
 * then engine_after_launch, for each launch the engine follows. ideal runs
 * without a plan or budget, as umreplay --policy ideal does; the others
 * with PLAN under BUDGET (a size: 2G, 2174628864). The fastest of REPS
 * (default 5) repetitions, each on a new engine, configured as umreplay
 * configures it without --stats. Before each launch it touches TOUCH_KB
 * KiB of memory STRIDE bytes apart (bench/path_args.h), standing in for
 * the program's own work between launches: on the H200 the engine's part
 * of a steady DLRM launch took 0.64-0.74 us in place, leaving out the few
 * calls over 20 us (session 70), where this program, on the development
 * machine's CPU, reads 0.44 with nothing touched and 0.7-0.8 with 1-4 MiB
 * (session 69).
 *
 * Prints a line per policy: launches followed and the mean time per
 * launch. What it leaves out, which the program's thread pays too: CUPTI's
 * dispatch of the callback, and decoding the launch's parameters into its
 * execution ID and arguments (replay/cuda/rp_callbacks.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "path_args.h"
#include "plan.h"
#include "plan/trace_load.h"
#include "replay/dryrun.h"
#include "replay/oplog.h"

struct timing {
	uint64_t launches, ns;
};

/* One repetition under cfg: the events ev[0 .. n) of t fed to a new engine,
 * args' memory touched before each launch. Returns 0, or -1 with the error
 * printed. */
static int feed(const struct trace *t, const struct dryrun_event *ev, size_t n,
		const struct engine_config *cfg, const struct path_args *args, struct engine_access *acc,
		struct timing *out)
{
	char err[256];
	oplog *log = oplog_create();
	struct engine_executor x = log ? oplog_executor(log) : (struct engine_executor){ 0 };
	engine *e = log ? engine_create(cfg, &x, err, sizeof err) : NULL;
	if (!e) {
		fprintf(stderr, "launch_path: %s\n", log ? err : "out of memory");
		oplog_destroy(log);
		return -1;
	}
	*out = (struct timing){ 0, 0 };
	for (size_t i = 0; i < n; i++) {
		oplog_set_time(log, (uint64_t)(ev[i].ns - ev[0].ns));
		if (ev[i].kind == DRYRUN_ALLOC) {
			const struct trace_alloc *a = &t->allocs[ev[i].index];
			engine_on_alloc(e, a->id, a->address, a->size);
		} else if (ev[i].kind != DRYRUN_LAUNCH) {
			engine_on_free(e, t->allocs[ev[i].index].id);
		} else if (engine_follows_launches(e)) {
			uint32_t k = ev[i].index;
			size_t m = 0;
			for (uint32_t j = t->arg_first[k]; j < t->arg_first[k + 1]; j++)
				acc[m++] = (struct engine_access){ t->allocs[t->arg_alloc[j]].id };
			path_args_cool(args);
			uint64_t t0 = um_now_ns();
			engine_on_launch(e, t->kernels[k].exec_id, t->kernels[k].shape_id, acc, m);
			engine_after_launch(e);
			out->ns += um_now_ns() - t0;
			out->launches++;
		}
		oplog_clear(log); /* nothing reads the ops */
	}
	engine_destroy(e);
	oplog_destroy(log);
	return 0;
}

int main(int argc, char **argv)
{
	struct path_args args;
	int status = path_args_parse("launch_path", argc, argv, &args);
	if (status)
		return status;
	char err[512];
	struct trace *t = trace_load(args.trace, err, sizeof err);
	struct plan *p = t ? plan_load(args.plan, err, sizeof err) : NULL;
	if (!p) {
		fprintf(stderr, "launch_path: %s\n", err);
		trace_free(t);
		path_args_free(&args);
		return 1;
	}
	size_t n = 0;
	struct dryrun_event *ev = dryrun_events(t, &n);
	struct engine_access *acc = malloc((t->n_args + 1) * sizeof *acc);
	int rc = ev && acc ? 0 : 1;
	if (rc)
		fprintf(stderr, "launch_path: out of memory\n");
	for (int policy = ENGINE_IDEAL; !rc && policy <= ENGINE_PLAN; policy++) {
		bool ideal = policy == ENGINE_IDEAL;
		struct engine_config cfg = { .policy = policy, .gpu_budget = ideal ? 0 : args.budget,
					     .plan = ideal ? NULL : p };
		struct timing best = { 0, UINT64_MAX }, one;
		for (int r = 0; !rc && r < args.reps; r++) {
			rc = feed(t, ev, n, &cfg, &args, acc, &one) ? 1 : 0;
			if (!rc && one.ns < best.ns)
				best = one;
		}
		if (!rc)
			printf("%-8s launches %llu, %.3f us per launch\n", engine_policy_name(policy),
			       (unsigned long long)best.launches,
			       best.launches ? (double)best.ns / 1e3 / (double)best.launches : 0.0);
	}
	free(acc);
	path_args_free(&args);
	free(ev);
	plan_destroy(p);
	trace_free(t);
	return rc;
}
