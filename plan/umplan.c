/*
 * umplan.c: the umplan command: plans a recorded trace into plan.bin,
 * reports on it, simulates it under the four policies, or dumps a plan as
 * JSON. A thin main over planner.h, sim.h, report.h, plan_check.h and
 * plan_json.h; exit status 0 (done), 1 (bad input or output: the trace or
 * plan could not be used, or an output not written), 2 (bad usage).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher.h"
#include "log.h"
#include "plan.h"
#include "planfile.h"
#include "plan/plan_check.h"
#include "plan/plan_json.h"
#include "plan/planner.h"
#include "plan/report.h"
#include "plan/sim.h"
#include "size.h"

static const char usage_text[] =
	"usage: umplan TRACE.db [-o PLAN] [--capacity SIZE] [--headroom PCT] [--htod-bw GB/s]\n"
	"              [--dtoh-bw GB/s] [--call-cost US] [--host-bw GB/s] [--iteration auto|N|nvtx:NAME]\n"
	"              [--report] [--json]\n"
	"              [--check] [--corr-rows N] [--corr-ways N] [--corr-successors N] [-q]\n"
	"       umplan TRACE.db --simulate [--capacity SIZE | --ratios R,R,...] [--json]\n"
	"              [--constants FILE] [--sim-csv DIR] [--perturb PCT]\n"
	"       umplan --dump PLAN\n";

static const char help_text[] =
	"Plans the Unified Memory migrations of a recorded training run (umrec) for\n"
	"umreplay: finds the iterations, the steady-state one, what each kernel touches\n"
	"and when each tensor is idle, and schedules evictions, prefetches and discards\n"
	"that keep GPU residency under a capacity. Needs no GPU.\n"
	"\n"
	"  -o, --output PLAN   write the plan to PLAN (default: plan.bin, unless --report,\n"
	"                      --json or --check is given without -o: then no plan is written);\n"
	"                      an existing PLAN must be a plan (or empty): nothing else is replaced\n"
	"  --capacity SIZE     GPU memory the plan keeps residency under (e.g. 40G, 512MiB);\n"
	"                      default: the trace's device memory less the most device memory\n"
	"                      the program held at once past umkit's allocator, or the peak\n"
	"                      without a plan when the trace does not record it (--report\n"
	"                      says which)\n"
	"  --headroom PCT      whole percent of the capacity the plan leaves free (default 3,\n"
	"                      at most 50; not applied to the unplanned peak): the replayer's\n"
	"                      residency counts whole 2 MB blocks, and what the plan did not\n"
	"                      count is evicted by the budget, least recently used first\n"
	"  --htod-bw GB/s      host-to-device prefetch bandwidth (default 48.8)\n"
	"  --dtoh-bw GB/s      device-to-host eviction bandwidth (default 8.6)\n"
	"  --call-cost US      fixed cost of one migration call, microseconds (default 100;\n"
	"                      decimals allowed)\n"
	"  --host-bw GB/s      a kernel's pass over host memory mapped for the GPU (default\n"
	"                      37.4): where the capacity binds, tensors used by a few kernels\n"
	"                      per iteration (optimizer state, embedding tables; not GEMM or\n"
	"                      convolution operands) stay in host memory when a pass per use\n"
	"                      costs less than an eviction and a prefetch, as much as the\n"
	"                      capacity needs (spread over the tails of the tensors with\n"
	"                      equal uses where it ends); 0 turns host placement off\n"
	"                      (--simulate always does)\n"
	"  --iteration WHICH   auto: NVTX ranges named iteration/iter/step/train_step/\n"
	"                      training_step/ProfilerStep/batch if two or more of them\n"
	"                      hold kernels, else the period\n"
	"                      of the execution-ID sequence, planning the latest steady\n"
	"                      iteration that has a successor, else the latest with one\n"
	"                      (default);\n"
	"                      N: plan detected iteration N (0-based);\n"
	"                      nvtx:NAME: iterations are the NVTX ranges named NAME\n"
	"  --report            print a summary: iterations, memory over the iteration,\n"
	"                      inactive periods, the capacity floor (the least time any\n"
	"                      schedule of migrations can take per iteration), what the\n"
	"                      plan moves and when, what it keeps on the host, predicted\n"
	"                      peak residency against the capacity, kernels that cannot fit\n"
	"  --json              print the summary as JSON instead\n"
	"  --check             verify the plan by simulating residency (capacity, prefetch\n"
	"                      before reuse, discard after last use, ops on live\n"
	"                      allocations); exit 1 if a property fails\n"
	"  --corr-rows N       correlation table sets (default 2048)\n"
	"  --corr-ways N       entries per set (default 2)\n"
	"  --corr-successors N successors per entry (default 4)\n"
	"  --simulate          predict one steady-state iteration under the policies ideal,\n"
	"                      ondemand, deepum and plan (docs/planner.md, \"Simulator\"):\n"
	"                      time, % of ideal, stall, bytes per direction, faults, and\n"
	"                      the capacity floor (--report); at --capacity alone if\n"
	"                      given, else at capacity W/R for each ratio R (W: the live\n"
	"                      peak); --json prints it as JSON, with the link's busy\n"
	"                      time and the kernels' time it was idle\n"
	"                      (then not with --report); writes no plan (not with -o)\n"
	"  --ratios R,R,...    the ratios for --simulate, each from 1 to 1e6 (default\n"
	"                      1,1.5,2,3,4)\n"
	"  --constants FILE    --simulate's link constants from a JSON object: at least\n"
	"                      one of htod_gbps and dtoh_gbps, optionally fault_gbps,\n"
	"                      call_cost_us, fault_batch_us (tests/gpu/calibrate.py\n"
	"                      prints all); they override --htod-bw, --dtoh-bw,\n"
	"                      --call-cost and the fault defaults (4.3 GB/s, 30 us per\n"
	"                      faulting kernel)\n"
	"  --sim-csv DIR       also write DIR/pressure.csv (residency per kernel before\n"
	"                      and after the plan, per capacity) and DIR/throughput.csv\n"
	"                      (% of ideal per ratio and policy) for scripts/sim_plots.py\n"
	"  --perturb PCT       with --simulate, also the sensitivity study: the plan made\n"
	"                      from the recorded kernel durations, simulated with each\n"
	"                      kernel's duration scaled by a random factor within +-PCT %\n"
	"                      (9 seeded draws): the plan's % of ideal, min/median/max\n"
	"  --dump PLAN         print the plan file PLAN as JSON and exit (no trace, no -o)\n"
	"  -q, --quiet         no progress messages\n"
	"  -h, --help          this text\n"
	"  -V, --version       the umkit version\n"
	"\n"
	"Exit status: 0 done, 1 bad input or output (trace, plan, an output not written,\n"
	"or a failed --check), 2 bad usage.\n";

enum {
	OPT_CAPACITY = 256, OPT_HTOD, OPT_DTOH, OPT_CALL, OPT_HOST, OPT_ITER, OPT_REPORT, OPT_JSON, OPT_CHECK,
	OPT_DUMP, OPT_ROWS, OPT_WAYS, OPT_SUCC, OPT_SIMULATE, OPT_RATIOS, OPT_CONSTANTS, OPT_SIM_CSV,
	OPT_PERTURB, OPT_HEADROOM,
};

static int usage_error(const char *fmt, const char *arg)
{
	um_error(fmt, arg);
	fputs(usage_text, stderr);
	return 2;
}

/* Whether getopt_long's '?' was for an unknown short option: optopt then
 * holds its letter, which is no option's, where a long option given a
 * value it takes none of leaves that option's own value (0 for a long
 * option unknown or ambiguous). */
static bool unknown_short_option(const struct option *longopts)
{
	if (!optopt)
		return false;
	for (const struct option *o = longopts; o->name; o++)
		if (o->has_arg == no_argument && o->val == optopt)
			return false;
	return true;
}

/* The usage error for what getopt_long refused: c is what it returned
 * (':' a missing value, '?' anything else), word the argument it was
 * reading when it finished that word. getopt says which short option in
 * optopt, and a long option's own value when one that takes none was
 * given one; a long option word that it does not name is unknown or names
 * several. */
static int option_error(int c, const char *word, const struct option *longopts)
{
	char name[3] = { '-', (char)optopt, '\0' };
	/* An unknown letter inside a cluster ("-xq") leaves getopt inside its
	 * word, so word is the one before: judged by optopt instead. */
	if (c == '?' && unknown_short_option(longopts))
		return usage_error("unknown option '%s'", name);
	/* From the word, not optopt: --output and -o share the value 'o'. A
	 * value is missing only at a word's end, so word is the right one. */
	bool is_long = word[0] == '-' && word[1] == '-';
	if (c == ':')
		return usage_error("%s needs a value", is_long ? word : name);
	size_t len = strcspn(word + 2, "=");
	if (optopt) {
		char flag[64];
		snprintf(flag, sizeof flag, "--%.*s", (int)len, word + 2);
		return usage_error("%s takes no value", flag);
	}
	int matches = 0;
	for (const struct option *o = longopts; o->name; o++)
		matches += strncmp(o->name, word + 2, len) == 0;
	return usage_error(matches > 1 ? "option '%s' is ambiguous: say more of it" : "unknown option '%s'", word);
}

/* A bandwidth from 0.001 to 10^6 GB/s: below, transfer times in ns would
 * overflow their sums. */
static int parse_gbps(const char *text, uint64_t *out)
{
	char *end;
	double v = strtod(text, &end);
	if (end == text || *end || !isfinite(v) || v < 1e-3 || v > 1e6)
		return -1;
	*out = (uint64_t)llround(v * 1e9);
	return 0;
}

/* --host-bw's off switch: 0 written any way a bandwidth may be ("0.0",
 * as a script that prints floats writes it), not only "0". */
static bool is_zero(const char *text)
{
	char *end;
	double v = strtod(text, &end);
	return end != text && !*end && v == 0;
}

/* Microseconds from 0 to 10^6, decimals allowed: tests/gpu/calibrate.py
 * prints call_cost_us as one, and --constants reads it so. */
static int parse_us(const char *text, uint64_t *ns)
{
	char *end;
	double v = strtod(text, &end);
	if (end == text || *end || !isfinite(v) || v < 0 || v > 1e6)
		return -1;
	*ns = (uint64_t)llround(v * 1e3);
	return 0;
}

static int parse_u32(const char *text, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(text, &end, 10);
	if (end == text || *end || text[0] == '-' || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int dump(const char *path)
{
	char err[1024];
	struct plan *p = plan_load(path, err, sizeof err);
	if (!p) {
		um_error("%s", err);
		return 1;
	}
	char *text = plan_json_text(p);
	plan_destroy(p);
	if (!text) {
		um_error("%s: out of memory formatting the plan", path);
		return 1;
	}
	fputs(text, stdout);
	free(text);
	return um_stdout_flushed() ? 0 : 1;
}

/* umplan --simulate: the sweep (and with perturb > 0 the sensitivity study)
 * as a table or JSON on stdout, and the CSV files when csv_dir is set.
 * Returns the exit status. */
static int simulate_print(const struct planner *pl, const struct sim_options *so,
			  const double *ratios, size_t n, uint64_t capacity, bool json,
			  const char *csv_dir, double perturb)
{
	char err[4200];
	struct sim_ctx *c = sim_ctx_new(pl, err, sizeof err);
	struct sim_row *rows = NULL;
	struct sim_sensitivity *sens = perturb > 0 ? calloc(n, sizeof *sens) : NULL;
	if (!c || (perturb > 0 && !sens) || sim_sweep(c, ratios, n, capacity, so, &rows, err, sizeof err) ||
	    (sens && sim_sensitivity(c, ratios, n, capacity, so, perturb, sens, err, sizeof err))) {
		if (c && perturb > 0 && !sens)
			sim_out_of_memory(pl->trace->path, err, sizeof err);
		um_error("%s", err);
		free(rows);
		free(sens);
		sim_ctx_free(c);
		return 1;
	}
	int rc = 0;
	if (json) {
		cJSON *j = sim_json(c, rows, n, so);
		cJSON *sj = sens ? sim_sensitivity_json(sens, n, perturb) : NULL;
		if (j && sens && (!sj || !cJSON_AddItemToObject(j, "sensitivity", sj))) {
			cJSON_Delete(sj);
			cJSON_Delete(j);
			j = NULL;
		}
		char *text = j ? cJSON_Print(j) : NULL;
		cJSON_Delete(j);
		if (!text) {
			um_error("out of memory formatting the simulation");
			rc = 1;
		} else {
			printf("%s\n", text);
			free(text);
		}
	} else if (sim_print(c, rows, n, stdout) ||
		   (sens && sim_sensitivity_print(sens, n, perturb, stdout))) {
		um_error("writing the simulation failed");
		rc = 1;
	}
	if (csv_dir && sim_write_csv(c, rows, n, so, csv_dir, err, sizeof err)) {
		um_error("%s", err);
		rc = 1;
	}
	free(rows);
	free(sens);
	sim_ctx_free(c);
	return rc;
}

/* What -o may replace: an earlier plan. */
static enum launch_owner is_plan(const char *path, FILE *f)
{
	(void)path;
	return planfile_is_plan(f) ? LAUNCH_OWNER_OURS : LAUNCH_OWNER_OTHER;
}

int main(int argc, char **argv)
{
	um_log_init("umplan");
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "capacity", required_argument, NULL, OPT_CAPACITY },
		{ "headroom", required_argument, NULL, OPT_HEADROOM },
		{ "htod-bw", required_argument, NULL, OPT_HTOD },
		{ "dtoh-bw", required_argument, NULL, OPT_DTOH },
		{ "call-cost", required_argument, NULL, OPT_CALL },
		{ "host-bw", required_argument, NULL, OPT_HOST },
		{ "iteration", required_argument, NULL, OPT_ITER },
		{ "report", no_argument, NULL, OPT_REPORT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "dump", required_argument, NULL, OPT_DUMP },
		{ "corr-rows", required_argument, NULL, OPT_ROWS },
		{ "corr-ways", required_argument, NULL, OPT_WAYS },
		{ "corr-successors", required_argument, NULL, OPT_SUCC },
		{ "simulate", no_argument, NULL, OPT_SIMULATE },
		{ "ratios", required_argument, NULL, OPT_RATIOS },
		{ "constants", required_argument, NULL, OPT_CONSTANTS },
		{ "sim-csv", required_argument, NULL, OPT_SIM_CSV },
		{ "perturb", required_argument, NULL, OPT_PERTURB },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct planner_options o;
	planner_options_default(&o);
	const char *output = NULL, *dump_path = NULL;
	char err[PATH_MAX + 256]; /* room for a message naming a path of any length */
	bool report = false, json = false, check = false, simulate = false;
	const char *ratios_text = "1,1.5,2,3,4", *constants = NULL, *sim_csv = NULL;
	bool capacity_given = false, ratios_given = false;
	double perturb = 0;
	const char *not_for_dump = NULL; /* the last planning option given */
	/* The words that are not options, in order: the first two (a second
	 * is an error). */
	const char *words[2] = { NULL, NULL };
	int n_words = 0;
	int c, li = -1;
	opterr = 0;
	/* "-" first: each word that is not an option comes back as 1, in its
	 * place, so that options after the trace are options also where
	 * POSIXLY_CORRECT is set (which would stop getopt at the first word
	 * that is not one: 'umplan trace.db -o plan.bin' taken for two
	 * traces). */
	while ((c = getopt_long(argc, argv, "-:o:qhV", longopts, &li)) != -1) {
		const char *arg = optarg;
		if (li >= 0 && c != OPT_DUMP && c != 'q' && c != 'o')
			not_for_dump = longopts[li].name;
		/* An empty name ('-o ""', '--output=') is a value missing, as
		 * umrec and umreplay say of theirs, not a file to look for. */
		if ((c == 'o' || c == OPT_DUMP || c == OPT_CONSTANTS || c == OPT_SIM_CSV) && !*arg) {
			char name[64];
			snprintf(name, sizeof name, "%s%s", li >= 0 ? "--" : "-o", li >= 0 ? longopts[li].name : "");
			return usage_error("option '%s' needs a file name", name);
		}
		li = -1;
		switch (c) {
		case 1:
			if (n_words < 2)
				words[n_words] = arg;
			n_words++;
			break;
		case 'o': output = arg; break;
		case OPT_CAPACITY:
			if (um_memory_size_parse("--capacity", arg, &o.capacity, err, sizeof err))
				return usage_error("%s", err);
			capacity_given = true;
			break;
		case OPT_HTOD:
			if (parse_gbps(arg, &o.htod_bytes_per_s))
				return usage_error("--htod-bw: '%s' is not a bandwidth from 0.001 to 1e6 GB/s", arg);
			break;
		case OPT_DTOH:
			if (parse_gbps(arg, &o.dtoh_bytes_per_s))
				return usage_error("--dtoh-bw: '%s' is not a bandwidth from 0.001 to 1e6 GB/s", arg);
			break;
		case OPT_HOST:
			if (is_zero(arg))
				o.remote_bytes_per_s = 0;
			else if (parse_gbps(arg, &o.remote_bytes_per_s))
				return usage_error("--host-bw: '%s' is not a bandwidth from 0.001 to 1e6 GB/s (or 0)", arg);
			break;
		case OPT_HEADROOM:
			if (parse_u32(arg, &o.headroom_pct) || o.headroom_pct > 50)
				return usage_error("--headroom: '%s' is not a whole percentage from 0 to 50", arg);
			break;
		case OPT_CALL:
			if (parse_us(arg, &o.call_cost_ns))
				return usage_error("--call-cost: '%s' is not a time from 0 to 1e6 microseconds", arg);
			break;
		case OPT_ITER:
			if (iter_options_parse(arg, &o.iter))
				return usage_error("--iteration: '%s' is not auto, a number or nvtx:NAME", arg);
			break;
		case OPT_REPORT: report = true; break;
		case OPT_JSON: json = true; break;
		case OPT_CHECK: check = true; break;
		case OPT_DUMP: dump_path = arg; break;
		case OPT_SIMULATE: simulate = true; break;
		case OPT_RATIOS: ratios_text = arg; ratios_given = true; break;
		case OPT_CONSTANTS: constants = arg; break;
		case OPT_SIM_CSV: sim_csv = arg; break;
		case OPT_PERTURB: {
			char *end;
			perturb = strtod(arg, &end) / 100;
			if (end == arg || *end || !isfinite(perturb) || perturb <= 0 || perturb >= 1)
				return usage_error("--perturb: '%s' is not a percentage between 0 and 100", arg);
			break;
		}
		case OPT_ROWS:
			if (parse_u32(arg, &o.corr.rows))
				return usage_error("--corr-rows: '%s' is not a number", arg);
			break;
		case OPT_WAYS:
			if (parse_u32(arg, &o.corr.ways))
				return usage_error("--corr-ways: '%s' is not a number", arg);
			break;
		case OPT_SUCC:
			if (parse_u32(arg, &o.corr.successors))
				return usage_error("--corr-successors: '%s' is not a number", arg);
			break;
		case 'q': um_log_set_level(UM_LOG_WARN); break;
		case 'h':
			fputs(usage_text, stdout);
			fputs("\n", stdout);
			fputs(help_text, stdout);
			return um_stdout_flushed() ? 0 : 1;
		case 'V': printf("umplan (umkit) %s\n", UMKIT_VERSION); return um_stdout_flushed() ? 0 : 1;
		default: return option_error(c, argv[optind - 1], longopts);
		}
	}
	/* After "--", the rest. */
	for (; optind < argc; optind++, n_words++)
		if (n_words < 2)
			words[n_words] = argv[optind];
	if (corr_config_check(&o.corr, err, sizeof err))
		return usage_error("%s", err);
	if (dump_path) {
		if (n_words)
			return usage_error("--dump takes a plan, not also '%s'", words[0]);
		if (output)
			return usage_error("%s", "--dump prints a plan; it writes none (-o)");
		if (not_for_dump)
			return usage_error("--dump prints a plan as it is: --%s does not apply", not_for_dump);
		return dump(dump_path);
	}
	if (!n_words)
		return usage_error("%s", "no trace given");
	if (n_words > 1)
		return usage_error("one trace at a time ('%s' is extra)", words[1]);
	const char *trace_path = words[0];
	/* Parsed before the (slow) planner so a typo fails at once. */
	double *ratios = NULL;
	size_t n_ratios = 0;
	if (capacity_given && ratios_given)
		return usage_error("%s", "--capacity and --ratios both say what to simulate: give one");
	if (simulate && output)
		return usage_error("%s", "--simulate plans without host placement: write the plan (-o) in a run of its own");
	if (simulate && json && report)
		return usage_error("%s", "--simulate --json prints JSON alone: leave out --report");
	if (simulate) {
		char bad[64];
		if (sim_parse_ratios(ratios_text, &ratios, &n_ratios, bad, sizeof bad))
			return usage_error("--ratios: '%s' is not a ratio from 1 to 1e6", bad);
		if (capacity_given)
			n_ratios = 1;
	} else if (constants || sim_csv || perturb > 0 || ratios_given) {
		return usage_error("%s needs --simulate",
				   constants ? "--constants" : sim_csv ? "--sim-csv" :
				   perturb > 0 ? "--perturb" : "--ratios");
	}
	struct sim_options so;
	sim_options_default(&o, &so);
	if (constants && sim_constants_load(constants, &so, err, sizeof err)) {
		um_error("%s", err);
		free(ratios);
		return 1;
	}
	/* The simulator models migrations only, so it plans without host
	 * placement: not the plan a run of its own would write. */
	if (simulate)
		o.remote_bytes_per_s = 0;
	if (!output && !report && !json && !check && !simulate)
		output = "plan.bin";
	/* Before the (slow) planner: -o naming the trace, or any file that is
	 * not a plan, is refused, not overwritten. */
	char output_path[PATH_MAX];
	if (output && launch_output_path(output, "-o", "plan", is_plan, output_path, sizeof output_path, err,
					 sizeof err) != 0) {
		um_error("%s", err);
		free(ratios);
		return 1;
	}

	if (sim_csv && sim_csv_dir_check(sim_csv, err, sizeof err)) {
		um_error("%s", err);
		free(ratios);
		return 1;
	}

	struct planner *pl;
	if (planner_run(trace_path, &o, &pl, err, sizeof err)) {
		um_error("%s", err);
		free(ratios);
		return 1;
	}
	if (pl->tensors.beyond_next)
		um_warn("%s: %zu allocations made each iteration are freed only after the next iteration ends, "
			"each live into a third iteration: the plan names the older by this trace's allocation, so "
			"umreplay applies its ops in the recorded iteration only (docs/planner.md, \"Known limits\")",
			trace_path, pl->tensors.beyond_next);
	if (pl->trace->graph_kernels)
		um_warn("%s: %zu kernels ran from CUDA graphs, which the plan cannot follow: it covers the %zu "
			"kernels launched one by one, and umreplay stops following the program at its first "
			"graph (docs/replay.md, \"CUDA graphs\")",
			trace_path, pl->trace->graph_kernels, pl->trace->n_kernels);
	if (pl->trace->runtime_allocs)
		um_warn("%s: %" PRIu64 " of the program's allocations were the runtime's, not umkit's, and are not in "
			"the trace: the plan does not know which kernels used them, and never moves them (umrec's "
			"warnings at the recording said why)",
			trace_path, pl->trace->runtime_allocs);
	if (pl->trace->driver_managed_allocs)
		um_warn("%s: %" PRIu64 " of the program's allocations were managed memory made through the driver "
			"(cuMemAllocManaged), past umkit's allocator, and are not in the trace: the plan neither moves "
			"them nor leaves room for them; the driver migrates them as the program touches them",
			trace_path, pl->trace->driver_managed_allocs);
	if (pl->trace->after_reset_kernels)
		um_warn("%s: the program reset the device (cudaDeviceReset); the %zu kernels launched after it "
			"used memory umkit did not manage and are not planned: the plan covers the %zu before it, "
			"and umreplay stops following the program at the reset (docs/replay.md, \"A device reset\")",
			trace_path, pl->trace->after_reset_kernels, pl->trace->n_kernels);
	if (pl->trace->other_context_kernels)
		um_warn("%s: %zu kernels ran in another CUDA context than the one umkit's memory is in (another "
			"GPU's, or one the program made): they are not planned, and umreplay does not follow them; "
			"the plan covers the %zu kernels of the arena's context (docs/design.md, \"Known limits\")",
			trace_path, pl->trace->other_context_kernels, pl->trace->n_kernels);
	int rc = 0;
	if (simulate) {
		rc = simulate_print(pl, &so, ratios, n_ratios, capacity_given ? o.capacity : 0, json,
				    sim_csv, perturb);
		free(ratios);
		json = false; /* the simulation's JSON replaces the summary's */
	}
	if (output) {
		if (plan_save(pl->plan, output_path, err, sizeof err)) {
			um_error("%s", err);
			rc = 1;
		} else {
			char a[32], b[32];
			um_info("wrote %s: %u kernels per iteration, %llu ops, predicted peak %s of %s",
				output, pl->plan->signature.n_kernels,
				(unsigned long long)pl->plan->n_ops,
				um_size_format(pl->sched.peak, a, sizeof a),
				um_size_format(pl->plan->assume.capacity_bytes, b, sizeof b));
		}
	}
	if (json) {
		cJSON *j = report_json(pl);
		char *text = j ? cJSON_Print(j) : NULL;
		cJSON_Delete(j);
		if (!text) {
			um_error("out of memory formatting the summary");
			rc = 1;
		} else {
			printf("%s\n", text);
			free(text);
		}
	} else if (report && report_text(pl, stdout)) {
		um_error("writing the report failed");
		rc = 1;
	}
	if (check) {
		struct plan_check_result r;
		plan_check(&pl->tensors, &pl->access, &pl->vital, pl->plan, &r);
		if (r.violations) {
			um_error("check: %zu violations; first: %s", r.violations, r.first);
			rc = 1;
		} else {
			char a[32];
			um_info("check: the plan keeps every property (simulated peak %s)",
				um_size_format(r.peak, a, sizeof a));
		}
	}
	planner_free(pl);
	if (!um_stdout_flushed())
		rc = 1;
	return rc;
}
