/*
 * rp_inject.c: libumreplay.so's entry and exit.
 *
 * umreplay sets CUDA_INJECTION64_PATH and LD_PRELOAD to this library and
 * passes its settings in the environment (UMKIT_POLICY, UMKIT_PLAN,
 * UMKIT_GPU_BUDGET, UMKIT_STATS, UMKIT_KERNEL_TIMES, UMKIT_FRAMEWORK_CACHE).
 * Whatever goes wrong here, the program runs on: a plan that cannot be
 * used, or CUPTI held by another tool (Nsight Systems), gives one warning
 * and a plain run.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cupti.h>

#include "common/cuda/cupti_guard.h"
#include "common/cuda/um_alloc.h"
#include "common/cuda/um_backend.h"
#include "log.h"
#include "plan.h"
#include "replay/device_fit.h"
#include "replay/stats.h"
#include "rp.h"
#include "size.h"

engine *rp_engine;
atomic_bool rp_active;
char *rp_plan_path;
/* Allocations --stats names as sources of faults, most bytes first. */
#define FAULT_SOURCES_SHOWN 20
/* Execution IDs --stats lists among the steady launches the plan lost. */
#define LOST_KERNELS_SHOWN 20

static struct plan *the_plan;
static enum engine_policy policy;
static uint64_t budget;
static char *stats_path;
static bool kernel_times;
static bool framework_cache;
static uint64_t start_ns;
static pid_t owner; /* the process that replays; forked children do not */

uint64_t rp_now(void)
{
	uint64_t t = 0;
	cuptiGetTimestamp(&t);
	return t;
}

static int parse_settings(char *err, size_t errlen)
{
	const char *name = getenv("UMKIT_POLICY");
	if (engine_policy_parse(name ? name : "plan", &policy) != 0) {
		snprintf(err, errlen, "unknown policy '%s'", name);
		return -1;
	}
	const char *b = getenv("UMKIT_GPU_BUDGET");
	if (b && *b && um_size_parse(b, &budget) != 0) {
		snprintf(err, errlen, "UMKIT_GPU_BUDGET='%s' is not a size", b);
		return -1;
	}
	const char *plan_path = getenv("UMKIT_PLAN");
	if (plan_path && *plan_path) {
		if (!(rp_plan_path = strdup(plan_path)))
			goto oom;
		the_plan = plan_load(plan_path, err, errlen);
		if (!the_plan)
			return -1;
	}
	const char *s = getenv("UMKIT_STATS");
	if (s && *s && !(stats_path = strdup(s)))
		goto oom;
	const char *k = getenv("UMKIT_KERNEL_TIMES");
	kernel_times = k && strcmp(k, "1") == 0;
	const char *c = getenv("UMKIT_FRAMEWORK_CACHE");
	framework_cache = c && strcmp(c, "1") == 0;
	return 0;
oom:
	snprintf(err, errlen, "out of memory reading umreplay's settings");
	return -1;
}

/* Whether this process replays the run: the first of the run's processes
 * to start CUDA does, as umrec records the first alone (the plan is that
 * process's). It binds an abstract socket named after the run (UMKIT_RUN)
 * and keeps it while it lives; a process it starts later (a rank, a
 * worker, a tool's subprocess, with a copy of the environment as Python's
 * os.environ is) finds the name taken, and runs without the plan instead
 * of applying the plan and budget to another program and writing the
 * same stats file (its allocations still come from managed memory, under
 * --max-managed's cap). */
static bool claim_run(void)
{
	const char *run = getenv("UMKIT_RUN");
	if (!run || !*run)
		return true;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "umkit-replay-%s", run);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || n < 0 || (size_t)n >= sizeof a.sun_path - 1) {
		if (fd >= 0)
			close(fd);
		return true; /* cannot tell: replay */
	}
	if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) != 0) {
		int e = errno;
		close(fd);
		return e != EADDRINUSE;
	}
	return true; /* fd stays open, holding the name, until the process ends */
}

/* What a run the library gives up on still is: the allocator shim has
 * been preloaded and keeps serving the program. */
static const char without_plan[] = "running the program without a plan (its allocations still come from "
				   "managed memory; no budget is kept and no stats are written)";

/* The measurements per completed iteration (ends[0 .. n_ends)): the UM
 * counters binned by the iterations' end times, and the differences of the
 * running totals. NULL (with *n 0) when there are none or memory ran out. */
static struct replay_iteration *measure_iterations(const struct rp_iteration_end *ends, size_t n_ends,
						   size_t *n)
{
	uint64_t *times = calloc(n_ends + 1, sizeof *times);
	struct rp_traffic *traffic = calloc(n_ends + 1, sizeof *traffic);
	struct replay_iteration *per = calloc(n_ends + 1, sizeof *per);

	*n = 0;
	if (times && traffic && per && n_ends) {
		for (size_t i = 0; i < n_ends; i++)
			times[i] = ends[i].ns;
		rp_activity_by_iteration(times, n_ends, traffic);
		struct rp_iteration_end prev = { 0 };
		for (size_t i = 0; i < n_ends; i++) {
			per[i] = (struct replay_iteration){
				.fault_migrations = traffic[i].fault_migrations,
				.speculative_migrations = traffic[i].speculative_migrations,
				.htod_bytes = traffic[i].htod_bytes,
				.dtoh_bytes = traffic[i].dtoh_bytes,
				.callback_ns = ends[i].callback_ns - prev.callback_ns,
				.allocator_ns = ends[i].allocator_ns - prev.allocator_ns,
				.resynced = ends[i].resynced - prev.resynced,
				.lost = ends[i].lost - prev.lost,
				.refault_blocks = ends[i].refault_blocks - prev.refault_blocks,
				.unissued_blocks = ends[i].unissued_blocks - prev.unissued_blocks,
				.unread_evicted_blocks = ends[i].unread_evicted_blocks - prev.unread_evicted_blocks,
				.htod_busy_ns = traffic[i].busy_ns[RP_BUSY_HTOD],
				.dtoh_busy_ns = traffic[i].busy_ns[RP_BUSY_DTOH],
				.kernel_busy_ns = traffic[i].busy_ns[RP_BUSY_KERNELS],
			};
			prev = ends[i];
		}
		*n = n_ends;
	} else {
		free(per);
		per = NULL;
	}
	free(times);
	free(traffic);
	return per;
}

/* The steady iterations' on-demand migrations charged to allocations, into
 * m (the sources into out[0 .. max)); the window as stats.h gives it, from
 * the iterations' ends[0 .. n_ends). */
static void charge_faults(const struct rp_iteration_end *ends, size_t n_ends, struct replay_measured *m,
			  struct fault_source *out, size_t max)
{
	uint64_t from = 0, to = UINT64_MAX;
	if (n_ends > 2) {
		from = ends[0].ns;
		to = ends[n_ends - 1].ns;
	}
	size_t n;
	struct fault_event *ev = rp_activity_faults(from, to, &n);
	m->fault_window_migrations = n;
	m->n_fault_sources = engine_fault_sources(rp_engine, ev, n, out, max, &m->fault_totals);
	m->fault_sources = out;
	free(ev);
}

/* The plan names allocations, and the shim served the program none: its
 * memory came from elsewhere, which an idle replay, with no CUPTI
 * subscription, cannot see (common/cuda/driver_allocs.h), or the plan is
 * another program's. Either way nothing was followed. */
static void warn_if_unserved(const struct um_alloc_stats *as)
{
	if (the_plan && the_plan->n_allocs && !as->allocs)
		um_warn("umkit's allocator served none of the program's memory, where %s names %u allocations: the "
			"program got it elsewhere (PyTorch's expandable segments turned on at run time, say), or the "
			"plan is another program's; the replay moved none of it and kept no budget",
			rp_plan_path, the_plan->n_allocs);
}

static void check_device_fits(void)
{
	CUdevice dev;
	size_t total;
	char name[128], msg[512];
	if (cuCtxGetDevice(&dev) != CUDA_SUCCESS || cuDeviceTotalMem(&total, dev) != CUDA_SUCCESS)
		return;
	if (cuDeviceGetName(name, sizeof name, dev) != CUDA_SUCCESS)
		snprintf(name, sizeof name, "device %d", (int)dev);
	if (device_fit_warning(rp_plan_path, device_fit_capacity(the_plan, policy), budget, name, total, msg,
			       sizeof msg))
		um_warn("%s", msg);
}

void rp_check_device_fits(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, check_device_fits);
}

static void write_stats(const struct engine_stats *st, const uint64_t *iter_ns, size_t n)
{
	struct replay_measured m = { 0 };
	struct rp_traffic total;
	struct rp_iteration_end *ends = calloc(RP_MAX_ITERATIONS, sizeof *ends);
	size_t n_ends = ends ? rp_iteration_ends(ends, RP_MAX_ITERATIONS) : 0;
	/* The records behind them are kept only for the stats. */
	struct replay_iteration *per = stats_path ? measure_iterations(ends, n_ends, &m.n_iterations) : NULL;
	struct fault_source sources[FAULT_SOURCES_SHOWN];
	struct lost_id lost[LOST_KERNELS_SHOWN];

	m.iterations = per;
	if (stats_path) {
		charge_faults(ends, n_ends, &m, sources, FAULT_SOURCES_SHOWN);
		m.n_lost_kernels = engine_lost_kernels(rp_engine, lost, LOST_KERNELS_SHOWN, &m.lost_totals);
		m.lost_kernels = lost;
	}
	rp_activity_totals(&total);
	m.htod_bytes = total.htod_bytes;
	m.dtoh_bytes = total.dtoh_bytes;
	m.fault_migrations = total.fault_migrations;
	m.fault_bytes = total.fault_bytes;
	m.fault_records = total.fault_records;
	m.speculative_migrations = total.speculative_migrations;
	m.speculative_bytes = total.speculative_bytes;
	m.counted = !st->started_idle ? TRAFFIC_WHOLE_RUN : st->woke_at_alloc ? TRAFFIC_FROM_WAKE : TRAFFIC_NONE;
	m.peak_residency_bytes = rp_residency_stop();
	m.budget_bytes = budget;
	struct rp_exec_stats xs;
	rp_exec_get_stats(&xs);
	m.dropped_discards = xs.dropped_discards;
	m.fresh_prefetched = xs.fresh_prefetched;
	m.kernels_timed = kernel_times;
	m.stopped_at_graph = rp_callbacks_stopped_at_graph();
	m.stopped_at_reset = rp_callbacks_stopped_at_reset();
	m.other_context_launches = rp_callbacks_other_context_launches();
	m.dropped_records = rp_activity_dropped();
	m.discard_waits = xs.discard_waits;
	m.discard_wait_ns = xs.discard_wait_ns;
	m.gate_waits = xs.gate_waits;
	m.gates_unissued = xs.gates_unissued;
	m.issue_waits = xs.issue_waits;
	m.issue_waits_expired = xs.issue_waits_expired;
	m.issue_wait_ns = xs.issue_wait_ns;
	m.room_waits = xs.room_waits;
	m.room_waits_expired = xs.room_waits_expired;
	m.room_wait_ns = xs.room_wait_ns;
	m.discard_prefetches_ahead = xs.discard_prefetches_ahead;
	m.discard_prefetches_ahead_in_part = xs.discard_prefetches_ahead_in_part;
	m.discards_ahead = xs.discards_ahead;
	m.migration_queue_peak = xs.queue_peak;
	m.gate_ns = xs.gate_ns;
	m.markers = xs.marks;
	m.marker_ns = xs.mark_ns;
	memcpy(m.driver_calls, xs.kind_calls, sizeof m.driver_calls);
	m.failed_driver_calls = xs.failed_calls;
	memcpy(m.driver_call_ns, xs.kind_ns, sizeof m.driver_call_ns);
	m.callback_ns = rp_callback_ns();
	m.executor_ns = xs.exec_ns;
	um_alloc_get_stats(&m.allocator);
	warn_if_unserved(&m.allocator);
	m.wall_ns = rp_now() - start_ns;
	char err[PATH_MAX + 128];
	if (stats_path && replay_stats_write_file(stats_path, engine_policy_name(policy), st, iter_ns, n, &m, err,
						  sizeof err) != 0)
		um_error("%s", err);
	free(per);
	free(ends);

	char peak[32], cap[32], modelled[32], in[32], out[32], budget_text[96] = "", median[48];
	/* Under a budget the residency that counts is the model's: evictions
	 * do not lower the device memory in use that the sampler reads. */
	if (budget && policy != ENGINE_IDEAL) /* ideal keeps no model and no budget */
		snprintf(budget_text, sizeof budget_text, "modelled residency peaked at %s (budget %s); ",
			 um_size_format(st->modelled_peak_bytes, modelled, sizeof modelled),
			 um_size_format(budget, cap, sizeof cap));
	char progress[256];
	if (st->started_idle && !st->woke_at_alloc)
		snprintf(progress, sizeof progress, "idle, the plan has nothing to do within the %s: kernel "
			 "launches not followed, migrations not counted", budget ? "budget" : "plan's capacity");
	else
		snprintf(progress, sizeof progress, "%llu iterations, %s; plan positions %llu matched, "
			 "%llu by shape, %llu resynced, %llu lost", (unsigned long long)st->iterations,
			 replay_stats_median_text(median, sizeof median, iter_ns, n),
			 (unsigned long long)st->matched, (unsigned long long)st->shaped,
			 (unsigned long long)st->resynced, (unsigned long long)st->lost);
	if (m.stopped_at_graph || m.stopped_at_reset)
		snprintf(progress + strlen(progress), sizeof progress - strlen(progress), "; stopped at %s",
			 m.stopped_at_graph ? "the program's first CUDA graph" : "the program's device reset");
	if (m.other_context_launches)
		snprintf(progress + strlen(progress), sizeof progress - strlen(progress),
			 "; %llu launches in another CUDA context not followed",
			 (unsigned long long)m.other_context_launches);
	um_info("policy %s: %s; moved %s in, %s out, %llu on-demand migrations; %sdevice memory in use up to %s",
		engine_policy_name(policy), progress,
		um_size_format(total.htod_bytes, in, sizeof in), um_size_format(total.dtoh_bytes, out, sizeof out),
		(unsigned long long)total.fault_migrations, budget_text,
		um_size_format(m.peak_residency_bytes, peak, sizeof peak));
}

/* A forked child shares the engine's memory but none of the replayer's
 * threads, and the parent owns the stats file: it stops following. */
static void stop_in_child(void)
{
	atomic_store(&rp_active, false);
}

static void finish(void)
{
	if (!rp_engine || getpid() != owner)
		return;
	/* Before the callbacks stop noting the program's calls on streams:
	 * a free from here on follows no stream, and waits for the whole
	 * context instead. */
	um_backend_launches_unseen();
	/* Before the hooks go quiet: an allocation made from here on still
	 * takes the engine's lock (rp_callbacks.c's on_alloc), and so is
	 * handed out only after a discard of its range that another thread
	 * is issuing has the program's streams wait for it. A thread past its
	 * rp_active check (one launching while the program exits) may still
	 * be in the engine: its calls end here, and no later one queues work
	 * behind the drain. */
	engine_stop(rp_engine);
	atomic_store(&rp_active, false);
	rp_callbacks_stop();
	rp_exec_drain();
	rp_activity_hand_over();

	/* The iteration times off the stack (32 KiB): the exit runs on the
	 * thread that called exit(), whose stack the program may have made
	 * small. Without memory for them the stats say none. */
	struct engine_stats st;
	uint64_t *iter_ns = malloc(ENGINE_ITERATION_TIMES * sizeof *iter_ns);
	engine_get_stats(rp_engine, &st);
	size_t n = iter_ns ? engine_iteration_times(rp_engine, iter_ns, ENGINE_ITERATION_TIMES) : 0;
	write_stats(&st, iter_ns, n);
	free(iter_ns);
}

/* The program runs without the replayer, which needs the plan no more. */
static int run_plain(void)
{
	plan_destroy(the_plan);
	the_plan = NULL;
	return 1;
}

int InitializeInjection(void);
int InitializeInjection(void)
{
	char err[512];
	um_log_init("umreplay");
	if (!getenv("UMKIT_POLICY"))
		return 1; /* not started by umreplay */
	if (!claim_run()) {
		um_info("process %d runs without the plan: another process of this run replays it (the first to "
			"start CUDA)",
			(int)getpid());
		return 1;
	}
	start_ns = rp_now();
	if (parse_settings(err, sizeof err) != 0) {
		um_warn("%s; %s", err, without_plan);
		return run_plain();
	}
	/* The allocation log behind --stats' fault sources only when there
	 * are stats to write: it grows with the run. */
	struct engine_config cfg = { policy, budget, the_plan, .fault_sources = stats_path != NULL,
				     .framework_cache = framework_cache, .may_wake = rp_callbacks_may_wake };
	rp_engine = engine_create(&cfg, rp_exec_get(), err, sizeof err);
	if (!rp_engine) {
		um_warn("%s; %s", err, without_plan);
		return run_plain();
	}
	rp_activity_keep_records(stats_path != NULL);
	CUptiResult r = rp_callbacks_start(kernel_times);
	if (r != CUPTI_SUCCESS) {
		const char *msg = "?";
		cuptiGetResultString(r, &msg);
		um_warn("cannot follow the program's kernels: CUPTI is unavailable (%s; another tool such as "
			"Nsight Systems may hold it); %s",
			msg, without_plan);
		engine_destroy(rp_engine);
		rp_engine = NULL;
		return run_plain();
	}
	cupti_guard_hold("umreplay");
	um_alloc_warn_unserved("the replay sees none of it, so it moves none of it and keeps no budget");
	owner = getpid();
	atomic_store(&rp_active, true);
	pthread_atfork(NULL, NULL, stop_in_child);
	atexit(finish);
	return 1;
}
