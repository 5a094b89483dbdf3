/*
 * umreplay.c: the umreplay command. Runs the user's program with
 * libumreplay.so injected (CUPTI injection + LD_PRELOAD), which replays the
 * plan made by umplan under the chosen policy; the library prints its own
 * summary and writes --stats, and umreplay exits with the program's status.
 *
 * A plan that cannot be used (missing, unreadable, corrupt, truncated, a
 * newer format, not a plan) never stops the user's program: umreplay warns
 * once and runs the command exactly as it would run without umreplay, with
 * no injection, no UMKIT_* variables and no GPU driver check.
 *
 * The contract with libumreplay.so is the environment:
 *   UMKIT_PLAN         absolute path of a plan that loaded (only then)
 *   UMKIT_POLICY       plan, deepum, ondemand or ideal
 *   UMKIT_GPU_BUDGET   residency budget, bytes in decimal (only if given)
 *   UMKIT_MAX_MANAGED  cap on managed memory, bytes in decimal (only if given)
 *   UMKIT_STATS        absolute path of the statistics file (only if given)
 *   UMKIT_KERNEL_TIMES 1 with --kernel-times
 *   UMKIT_FRAMEWORK_CACHE 1 when PyTorch's caching allocator was kept on
 *   UMKIT_LOG          quiet with -q (otherwise the user's setting is kept)
 *   UMKIT_COMMAND      the command line, for the summary and the statistics
 *   UMKIT_RUN          names the run (umreplay's pid and start time): its
 *                      first process to start CUDA replays, the others run
 *                      without the plan (rp_inject.c)
 * plus CUDA_INJECTION64_PATH, LD_PRELOAD and PyTorch's allocator settings
 * (common/launch_env.h). Every other UMKIT_* variable inherited from the
 * user's shell is removed but UMKIT_LOG, UMKIT_LIBDIR and UMKIT_CUPTI.
 *
 * PyTorch's caching allocator is turned off (PYTORCH_NO_CUDA_MEMORY_CACHING)
 * so that every tensor reaches the arena, as when the run was recorded: the
 * plan names tensors. The user's value decides when set (choose_cache), but
 * for 1 under a plan recorded with the cache on, which is warned about.
 * Otherwise the cache stays on in two cases. When the plan was recorded
 * with it on (umrec --framework-cache), under every policy: the plan's
 * allocations are the cache's segments, and a program that captures CUDA
 * graphs needs the cache. And when the policy
 * is plan and the plan has nothing to do within the budget
 * (plan_idle_limit): serving each tensor from the arena took DLRM's thread
 * 84-143 ms of a 200-step run, 5-10 % of it (docs/benchmarks.md), for a
 * plan that does nothing with them. The replayer then sees the cache's
 * segments, not tensors; should they outgrow the budget, it keeps the
 * budget by them (docs/replay.md).
 *
 * --dry-run TRACE runs no program: the engine is fed the recorded run
 * (replay/dryrun.h) and umreplay prints what the policy would do. With no
 * program to protect, a plan that cannot be used is an error there.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launch_env.h"
#include "launch_find.h"
#include "launcher.h"
#include "log.h"
#include "plan.h"
#include "plan/trace_load.h"
#include "replay/device_fit.h"
#include "replay/dryrun.h"
#include "replay/engine.h"
#include "replay/stats.h"
#include "set_aside.h"
#include "size.h"

extern char **environ;

#define EXIT_USAGE 2
#define EXIT_SETUP 3
/* Metadata only: kept well below the kernel's 128 KiB limit per
 * environment string so a long command line can never stop the exec. */
#define MAX_COMMAND_TEXT (16 * 1024)

static const char usage_text[] =
	"Usage: umreplay --plan PLAN [options] [--] command [args...]\n"
	"       umreplay --dry-run TRACE [--plan PLAN] [--policy NAME] [--gpu-budget SIZE]\n"
	"                [--stats FILE] [-q]\n"
	"Runs command with the umkit replayer injected: at each kernel launch it\n"
	"prefetches, evicts and discards Unified Memory as the plan made by umplan\n"
	"says, so the program waits less on page faults. The program is not\n"
	"changed; umreplay exits with its status. Options end at the first word\n"
	"that is not one, so 'umreplay --plan plan.bin python train.py --lr 3'\n"
	"works; '--' is optional. --dry-run shows, without a GPU, what the replayer\n"
	"would do to a run recorded by umrec.\n"
	"\n"
	"Options:\n"
	"      --plan FILE          the plan to replay (from umplan); required for\n"
	"                           --policy plan. A plan that cannot be used\n"
	"                           (missing, corrupt, truncated, a newer format, not\n"
	"                           a plan) is not an error: umreplay warns and runs\n"
	"                           the command without umkit (with --dry-run it is)\n"
	"      --policy NAME        what decides the migrations:\n"
	"                             plan      the plan's schedule, with correlation\n"
	"                                       prefetching when the run drifts from it\n"
	"                                       (default); a plan with nothing to do\n"
	"                                       leaves the kernel launches alone while\n"
	"                                       the program's memory fits the budget,\n"
	"                                       and PyTorch's caching allocator on\n"
	"                             deepum    correlation prefetching, pre-eviction\n"
	"                                       and discard of dead data; learns online,\n"
	"                                       or starts from the plan's tables\n"
	"                             ondemand  page faults, and LRU eviction under a\n"
	"                                       budget: what plain Unified Memory does\n"
	"                             ideal     no migrations of umkit's own: the\n"
	"                                       reference for a GPU that fits everything\n"
	"      --gpu-budget SIZE    keep the program's data resident on the GPU at\n"
	"                           most SIZE (e.g. 40G, 512MiB) by explicit\n"
	"                           evictions: emulates a smaller GPU, or leaves room\n"
	"                           for another process (not under --policy ideal,\n"
	"                           which migrates nothing)\n"
	"      --max-managed SIZE   cap the managed memory the program may hold; past\n"
	"                           it an allocation fails with the framework's usual\n"
	"                           out-of-memory error (not below --gpu-budget)\n"
	"      --stats FILE         when the program exits, write the replay's\n"
	"                           statistics to FILE as JSON (with the allocations\n"
	"                           the steady iterations faulted on and the kernels\n"
	"                           the plan lost there); an earlier stats file there\n"
	"                           is deleted once the program runs (kept if it\n"
	"                           cannot start), any other file stops it,\n"
	"                           untouched (exit 3). With --dry-run: the\n"
	"                           replayer's statistics alone (\"measured\": null)\n"
	"      --kernel-times       also time every kernel on the GPU, so --stats\n"
	"                           tells per iteration how long the GPU computed,\n"
	"                           and charges each fault to what its kernel touched\n"
	"                           (a diagnostic: it adds a little to each launch)\n"
	"      --dry-run TRACE      run no program: feed the run recorded in TRACE (by\n"
	"                           umrec) to the replayer, its allocations, frees and\n"
	"                           kernel launches in their recorded order, and print\n"
	"                           what the policy would do: a summary, then per\n"
	"                           completed iteration the launches, the MiB\n"
	"                           prefetched, evicted and discarded, the budget's\n"
	"                           evictions and the blocks expected to fault back\n"
	"                           in. That is the replayer's model of residency, not\n"
	"                           the GPU's, and the iteration times are the\n"
	"                           recording's. No budget unless --gpu-budget is\n"
	"                           given; --max-managed and --kernel-times need a GPU\n"
	"  -q, --quiet              no summary; the replayer prints warnings only.\n"
	"                           With --dry-run: the summary without the table\n"
	"  -h, --help               show this help and exit\n"
	"      --version            show the version and exit\n"
	"\n"
	"Environment:\n"
	"  UMKIT_LIBDIR   folder holding libumreplay.so (default: ../lib or\n"
	"                 ../lib/umkit next to umreplay)\n"
	"  UMKIT_LOG      the replayer's verbosity: quiet, info or debug\n"
	"  PYTORCH_NO_CUDA_MEMORY_CACHING  set to 1 for the program unless already\n"
	"                 set, so PyTorch allocates as it did when recorded; left\n"
	"                 unset when the plan was recorded with PyTorch's cache on\n"
	"                 (umrec --framework-cache) or, under --policy plan, has\n"
	"                 nothing to do (set it to 1 to send every tensor through\n"
	"                 umkit all the same)\n"
	"  PYTORCH_ALLOC_CONF, PYTORCH_CUDA_ALLOC_CONF  expandable_segments:True is\n"
	"                 made False while PyTorch's cache stays on: umkit does not\n"
	"                 serve the memory such segments map\n"
	"\n"
	"Exit status: the command's (128+N if signal N killed it; 126 if it could\n"
	"not be executed, 127 if not found); 1 if --help or --version could not\n"
	"write; 2 for bad usage; 3 if the replay could not be set up (no GPU\n"
	"driver, libumreplay.so missing, the stats file cannot be written). With a\n"
	"plan that cannot be used the command runs without umkit and its status\n"
	"is returned. With --dry-run: 0; 1 if the trace or the plan cannot be used\n"
	"or the stats cannot be written; 2 for bad usage.\n";

struct umreplay_options {
	const char *plan;        /* NULL: none given */
	const char *stats;       /* NULL: none given */
	const char *dry_run;     /* the trace --dry-run replays; NULL: run a command */
	enum engine_policy policy;
	uint64_t gpu_budget;     /* 0: no budget given */
	uint64_t max_managed;    /* 0: no cap given */
	const char *gpu_budget_text, *max_managed_text; /* as given, for messages */
	int quiet;
	int kernel_times;
	int command; /* argv index of the command; == argc when missing */
};

/* A size option's value, m as launch_option_value returned it, into *out
 * and its text into *text. 0, or -1 with the error printed. */
static int size_option(const char *option, int m, const char *value, uint64_t *out, const char **text)
{
	char err[256];
	if (m < 0) {
		um_error("option '%s' needs a size (e.g. 40G)", option);
		return -1;
	}
	if (um_memory_size_parse(option, value, out, err, sizeof err) != 0) {
		um_error("%s", err);
		return -1;
	}
	*text = value;
	return 0;
}

/* The valid policy names, for the message about an unknown one. */
static void policy_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int p = ENGINE_IDEAL; p <= ENGINE_PLAN && used < len; p++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", p == ENGINE_IDEAL ? "" : ", ",
					 engine_policy_name((enum engine_policy)p));
}

/* Parses umreplay's options. Returns -1 to run, or the exit status (0 after
 * --help and --version, EXIT_FAILURE when they could not be written,
 * EXIT_USAGE with the message printed). */
static int parse_options(int argc, char **argv, struct umreplay_options *o)
{
	memset(o, 0, sizeof *o);
	o->policy = ENGINE_PLAN;
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *value = NULL;
		int m;
		enum launch_word w = launch_option_word(a, "umreplay", usage_text, stdout);
		if (w == LAUNCH_WORD_EXIT)
			return um_stdout_flushed() ? 0 : EXIT_FAILURE;
		if (w == LAUNCH_WORD_SEPARATOR)
			i++;
		if (w != LAUNCH_WORD_OPTION)
			break;
		if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			o->quiet = 1;
		} else if (strcmp(a, "--kernel-times") == 0) {
			o->kernel_times = 1;
		} else if ((m = launch_option_value(argc, argv, &i, NULL, "--plan", &value)) != 0) {
			if (m < 0 || !*value) {
				um_error("option '--plan' needs a file name");
				goto usage;
			}
			o->plan = value;
		} else if ((m = launch_option_value(argc, argv, &i, NULL, "--dry-run", &value)) != 0) {
			if (m < 0 || !*value) {
				um_error("option '--dry-run' needs a trace file (from umrec)");
				goto usage;
			}
			o->dry_run = value;
		} else if ((m = launch_option_value(argc, argv, &i, NULL, "--stats", &value)) != 0) {
			if (m < 0 || !*value) {
				um_error("option '--stats' needs a file name");
				goto usage;
			}
			o->stats = value;
		} else if ((m = launch_option_value(argc, argv, &i, NULL, "--policy", &value)) != 0) {
			if (m < 0 || engine_policy_parse(value, &o->policy) != 0) {
				char names[64];
				policy_names(names, sizeof names);
				if (m < 0)
					um_error("option '--policy' needs a name: %s", names);
				else
					um_error("--policy: unknown policy '%s' (valid: %s)", value, names);
				goto usage;
			}
		} else if ((m = launch_option_value(argc, argv, &i, NULL, "--gpu-budget", &value)) != 0) {
			if (size_option("--gpu-budget", m, value, &o->gpu_budget, &o->gpu_budget_text) != 0)
				goto usage;
		} else if ((m = launch_option_value(argc, argv, &i, NULL, "--max-managed", &value)) != 0) {
			if (size_option("--max-managed", m, value, &o->max_managed, &o->max_managed_text) != 0)
				goto usage;
		} else {
			um_error("unknown option '%s'", a);
			goto usage;
		}
	}
	o->command = i;
	if (o->dry_run) {
		const char *gpu_only = o->max_managed_text ? "--max-managed" : o->kernel_times ? "--kernel-times" : NULL;
		if (o->command < argc) {
			um_error("--dry-run replays the trace and runs no command (got '%s')", argv[o->command]);
			goto usage;
		}
		if (gpu_only) {
			um_error("%s needs a GPU: not with --dry-run", gpu_only);
			goto usage;
		}
	} else if (o->command >= argc) {
		um_error("no command given");
		goto usage;
	}
	if (o->policy == ENGINE_PLAN && !o->plan) {
		um_error("--policy plan needs --plan FILE (make one with umplan, or choose --policy deepum, "
			 "ondemand or ideal)");
		goto usage;
	}
	/* The budget is enforced by evicting managed memory: a budget above
	 * the cap could never be reached and says the two were mixed up. */
	if (o->gpu_budget && o->max_managed && o->gpu_budget > o->max_managed) {
		um_error("--gpu-budget %s is above --max-managed %s", o->gpu_budget_text, o->max_managed_text);
		goto usage;
	}
	return -1;
usage:
	fputs("Try 'umreplay --help'.\n", stderr);
	return EXIT_USAGE;
}

/* Earlier stats: a JSON object whose "format" (replay/stats.c writes it
 * first) is REPLAY_STATS_FORMAT. Anything else at the --stats path, another
 * program's JSON included, is left alone, since --stats probably named
 * the wrong file. */
static enum launch_owner is_stats(const char *path, FILE *f)
{
	(void)path;
	char head[256];
	size_t n = fread(head, 1, sizeof head - 1, f);
	head[n] = '\0';
	const char *p = head + strspn(head, " \t\r\n");
	if (*p != '{' || !(p = strstr(p, "\"format\"")))
		return LAUNCH_OWNER_OTHER;
	p += strlen("\"format\"");
	p += strspn(p, " \t\r\n");
	if (*p++ != ':')
		return LAUNCH_OWNER_OTHER;
	p += strspn(p, " \t\r\n");
	static const char format[] = "\"" REPLAY_STATS_FORMAT "\"";
	return strncmp(p, format, sizeof format - 1) == 0 ? LAUNCH_OWNER_OURS : LAUNCH_OWNER_OTHER;
}

/* Earlier statistics at the --stats path must never pass for this run's
 * when the run writes none (a plain run, a crash): they are set aside
 * while the program starts, deleted once it runs, and put back when it
 * cannot start (common/set_aside.h). */
static const char *const stats_suffixes[] = { "" };
static const struct file_set stats_files = { stats_suffixes, 1, "stats" };

/* What umreplay needs to know of a plan before the program starts. */
struct plan_facts {
	bool idle;            /* nothing to do within the budget */
	bool framework_cache; /* recorded with PyTorch's caching allocator on */
};

/*
 * Loads and validates the plan, then frees it: the library loads it again
 * in the program, but only umreplay can still choose to run the program
 * without umkit. Writes the plan's absolute path into path (the program may
 * change directory) and what umreplay needs of it into *facts, and returns
 * 0, or -1 with the warning printed.
 */
static int check_plan(const char *plan, uint64_t budget, char path[PATH_MAX], struct plan_facts *facts)
{
	char err[4096];
	struct plan *p = plan_load(plan, err, sizeof err);
	if (!p) {
		um_warn("%s; running the program without umkit", err);
		return -1;
	}
	facts->idle = plan_idle_limit(p, budget) != 0;
	facts->framework_cache = p->provenance.framework_cache;
	plan_destroy(p);
	if (!realpath(plan, path)) {
		um_warn("%s: %s; running the program without umkit", plan, strerror(errno));
		return -1;
	}
	return 0;
}

/* Writes a dry run's statistics to path as a real run's --stats, with
 * nothing measured. Returns 0, or -1 with the error printed. */
static int write_dry_stats(const char *path, enum engine_policy policy, const struct dryrun_result *r)
{
	char err[PATH_MAX + 128];
	int rc = replay_stats_write_file(path, engine_policy_name(policy), &r->stats, r->iteration_ns,
					 r->n_iteration_ns, NULL, err, sizeof err);
	if (rc != 0)
		um_error("%s", err);
	return rc;
}

/* umreplay --dry-run: the trace through the engine, the plan loaded as
 * libumreplay.so loads it. Returns the exit status. */
static int dry_run(const struct umreplay_options *o)
{
	char stats[PATH_MAX], err[4096];
	if (o->stats && launch_output_path(o->stats, "--stats", "stats", is_stats, stats, sizeof stats,
					  err, sizeof err) != 0) {
		um_error("%s", err);
		return EXIT_FAILURE;
	}
	/* As a real run's: a dry run that fails leaves no earlier numbers. */
	if (o->stats && set_remove(stats, &stats_files, false, err, sizeof err) != 0) {
		um_error("%s", err);
		return EXIT_FAILURE;
	}
	struct plan *plan = NULL;
	struct trace *t = NULL;
	int status = EXIT_FAILURE;
	if (o->plan && !(plan = plan_load(o->plan, err, sizeof err))) {
		um_error("%s", err);
		goto done;
	}
	if (!(t = trace_load(o->dry_run, err, sizeof err))) {
		um_error("%s", err);
		goto done;
	}
	/* As the replay on the recording GPU would warn. */
	if (device_fit_warning(o->plan, device_fit_capacity(plan, o->policy), o->gpu_budget,
			       t->device_name[0] ? t->device_name : "the recording GPU", t->device_memory, err,
			       sizeof err))
		um_warn("%s", err);
	struct engine_config cfg = { o->policy, o->gpu_budget, plan, .fault_sources = false,
				     .framework_cache = t->framework_cache };
	struct dryrun_result r;
	if (dryrun_run(t, &cfg, &r, err, sizeof err) != 0) {
		um_error("%s: %s", o->dry_run, err);
		goto done;
	}
	if (dryrun_print(stdout, t, &cfg, o->plan, &r, o->quiet) != 0 || fflush(stdout) != 0)
		um_error("cannot write the report: %s", strerror(errno));
	else if (!o->stats || write_dry_stats(stats, o->policy, &r) == 0)
		status = EXIT_SUCCESS;
	dryrun_result_free(&r);
done:
	trace_free(t);
	plan_destroy(plan);
	return status;
}

/* Sets name to bytes in decimal when bytes > 0. Returns 0, or -1 when out
 * of memory. */
static int set_bytes(launch_env *e, const char *name, uint64_t bytes)
{
	char text[32];
	if (!bytes)
		return 0;
	snprintf(text, sizeof text, "%llu", (unsigned long long)bytes);
	return launch_env_set(e, name, text);
}

/* PyTorch's caching allocator in the program (see the top of this file). */
struct cache_choice {
	bool on;      /* it stays on */
	const char *why; /* umreplay's reason, said at the start; NULL when the
			    user's variable decided (and is left as it is) */
};

/* As the user's PYTORCH_NO_CUDA_MEMORY_CACHING (user, NULL when unset)
 * says, otherwise as the plan was recorded, or on for a plan with nothing
 * to do under the plan policy. A user's value that keeps the cache on
 * under a plan recorded so is umreplay's choice too. Warns when the user's
 * value turns it off under a plan recorded with it on. */
static struct cache_choice choose_cache(const struct umreplay_options *o, const struct plan_facts *f,
					const char *user)
{
	const char *recorded = "the plan was recorded with PyTorch's caching allocator on: it stays on";
	if (f->framework_cache && !launch_pytorch_cache_off(user))
		return (struct cache_choice){ true, recorded };
	if (!user && o->policy == ENGINE_PLAN && f->idle)
		return (struct cache_choice){ true, "the plan has nothing to do within the budget: PyTorch's "
						    "caching allocator stays on" };
	if (!user)
		return (struct cache_choice){ false, NULL };
	if (f->framework_cache)
		um_warn("the plan was recorded with PyTorch's caching allocator on, and "
			"PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns it off: the program's allocations are not the "
			"ones the plan names");
	return (struct cache_choice){ !launch_pytorch_cache_off(user), NULL };
}

/* The child's environment: the injection plus the UMKIT_* contract above.
 * plan and stats are absolute paths, or NULL when not given. */
static launch_env *child_env(const struct umreplay_options *o, int argc, char **argv, const char *library,
			     const char *plan, const char *stats, struct cache_choice cache)
{
	char err[4096];
	launch_env *e = launch_env_create(environ);
	if (!e) {
		um_error("out of memory");
		return NULL;
	}
	const char *old = launch_env_get(e, "CUDA_INJECTION64_PATH");
	if (old && *old && strcmp(old, library) != 0)
		um_warn("replacing CUDA_INJECTION64_PATH=%s: another tool's injection cannot run with umreplay",
			old);
	/* No libcupti: NVTX is only the recorder's business, so the user's
	 * NVTX_INJECTION64_PATH (a profiler's, or none) stays as it is. */
	/* When the user's variable decided, it stays as it is (the launcher
	 * warns when it keeps the cache on). */
	struct launch_inject inj = { library, NULL, cache.on && cache.why };
	if (launch_env_inject(e, &inj, err, sizeof err) != 0) {
		um_error("%s", err);
		launch_env_destroy(e);
		return NULL;
	}

	launch_env_unset_stale(e);
	char *command = launch_join_args(argv + o->command, (size_t)(argc - o->command), MAX_COMMAND_TEXT);
	/* The pid alone could repeat: abstract socket names are shared by a
	 * network namespace, which containers on the host's network share
	 * while each has its own pids. */
	char run_id[48];
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(run_id, sizeof run_id, "%d-%lld.%09ld", (int)getpid(), (long long)now.tv_sec, now.tv_nsec);
	int rc = !command || launch_env_set(e, "UMKIT_COMMAND", command) != 0 ||
	     launch_env_set(e, "UMKIT_RUN", run_id) != 0 ||
	     launch_env_set(e, "UMKIT_POLICY", engine_policy_name(o->policy)) != 0 ||
	     (plan && launch_env_set(e, "UMKIT_PLAN", plan) != 0) ||
	     (stats && launch_env_set(e, "UMKIT_STATS", stats) != 0) ||
	     set_bytes(e, "UMKIT_GPU_BUDGET", o->gpu_budget) != 0 ||
	     set_bytes(e, "UMKIT_MAX_MANAGED", o->max_managed) != 0 ||
	     (o->kernel_times && launch_env_set(e, "UMKIT_KERNEL_TIMES", "1") != 0) ||
	     (cache.on && launch_env_set(e, "UMKIT_FRAMEWORK_CACHE", "1") != 0) ||
	     (o->quiet && launch_env_set(e, "UMKIT_LOG", "quiet") != 0);
	free(command);
	if (rc) {
		um_error("out of memory");
		launch_env_destroy(e);
		return NULL;
	}
	return e;
}

/* Runs the command with envp and returns umreplay's exit status: the
 * command's, or EXIT_SETUP when it could not even be started. With stats
 * (NULL: no --stats), the earlier stats there are set aside until the
 * program runs, and put back if it never does. */
static int run(char **command, char *const *envp, const char *stats)
{
	char err[4096] = "";
	struct kept_output earlier = { 0 };
	if (stats && kept_output_begin(&earlier, stats, &stats_files, err, sizeof err) != 0) {
		um_error("%s", err);
		return EXIT_SETUP;
	}
	int killed_by;
	int status = launch_run(command, envp, stats ? kept_output_started : NULL, &earlier, &killed_by, err,
				sizeof err);
	if (stats)
		kept_output_end(&earlier);
	/* What is said now, after the program (a command that could not
	 * start), must not turn its status into SIGPIPE's where the reader
	 * of stderr has gone, as umrec's summary must not. */
	signal(SIGPIPE, SIG_IGN);
	if (status < 0) {
		um_error("%s", err);
		return EXIT_SETUP;
	}
	if (err[0]) /* 126 or 127: the command could not be started */
		um_error("%s", err);
	launch_die_like(killed_by);
	return status;
}

int main(int argc, char **argv)
{
	um_log_init("umreplay");
	struct umreplay_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.quiet)
		um_log_set_level(UM_LOG_WARN);
	if (o.dry_run)
		return dry_run(&o);

	/* In this order so that each failure can be produced without a GPU:
	 * the stats path, the command, the plan (a bad one means a plain run,
	 * which needs neither the library nor a driver), the library
	 * (UMKIT_LIBDIR), the driver, then the child's environment. Earlier
	 * stats are set aside only once all have passed, and go once the
	 * program runs (run). */
	char stats[PATH_MAX], plan[PATH_MAX], library[PATH_MAX], err[4096];
	if (o.stats && launch_output_path(o.stats, "--stats", "stats", is_stats, stats, sizeof stats,
					  err, sizeof err) != 0) {
		um_error("%s", err);
		return EXIT_SETUP;
	}
	rc = launch_check_program(argv[o.command], err, sizeof err);
	if (rc) {
		um_error("%s", err);
		return rc;
	}
	struct plan_facts facts = { false, false };
	if (o.plan && check_plan(o.plan, o.gpu_budget, plan, &facts) != 0)
		return run(argv + o.command, environ, o.stats ? stats : NULL);
	if (launch_find_library("libumreplay.so", library, sizeof library, err, sizeof err) != 0 ||
	    launch_check_driver("umreplay", err, sizeof err) != 0) {
		um_error("%s", err);
		return EXIT_SETUP;
	}
	struct cache_choice cache = choose_cache(&o, &facts, getenv("PYTORCH_NO_CUDA_MEMORY_CACHING"));
	launch_env *env = child_env(&o, argc, argv, library, o.plan ? plan : NULL, o.stats ? stats : NULL,
				    cache);
	if (!env)
		return EXIT_SETUP;
	if (cache.why)
		um_info("%s", cache.why);
	int status = run(argv + o.command, launch_env_array(env), o.stats ? stats : NULL);
	launch_env_destroy(env);
	return status;
}
