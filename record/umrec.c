/*
 * umrec.c: the umrec command. Runs the user's program with libumrec.so
 * injected (CUPTI injection + LD_PRELOAD), which writes the trace; then
 * summarises the trace and exits with the program's status.
 *
 * The contract with libumrec.so is the environment:
 *   UMKIT_TRACE        absolute path of the trace to create
 *   UMKIT_MAX_MANAGED  cap on managed memory, bytes in decimal (only if given)
 *   UMKIT_NO_MANAGED   1: leave device allocations alone (only if given)
 *   UMKIT_LOG          quiet with -q (otherwise the user's setting is kept)
 *   UMKIT_COMMAND      the command line, for the trace's metadata
 *   UMKIT_OPTIONS      umrec's own options as given, for the metadata
 * plus CUDA_INJECTION64_PATH, LD_PRELOAD, NVTX_INJECTION64_PATH and
 * PyTorch's allocator settings (common/launch_env.h).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "launch_env.h"
#include "launch_find.h"
#include "launcher.h"
#include "log.h"
#include "rec_summary.h"
#include "size.h"
#include "trace_schema.h"
#include "trace_writer.h"

extern char **environ;

#define EXIT_USAGE 2
#define EXIT_SETUP 3
#define DEFAULT_TRACE "trace.db"
/* Metadata only: kept well below the kernel's 128 KiB limit per
 * environment string so a long command line can never stop the exec. */
#define MAX_COMMAND_TEXT (16 * 1024)

static const char usage_text[] =
	"Usage: umrec [options] [--] command [args...]\n"
	"Runs command with the umkit recorder injected and writes what its CUDA\n"
	"kernels, allocations and Unified Memory migrations did into a SQLite\n"
	"trace, for umplan. Options end at the first word that is not one, so\n"
	"'umrec python train.py --lr 3' works; '--' is optional.\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE        write the trace to FILE (default: " DEFAULT_TRACE ");\n"
	"                           an earlier trace there is replaced, any other\n"
	"                           file left alone\n"
	"      --max-managed SIZE   cap the managed memory the program may hold\n"
	"                           (e.g. 60G, 512MiB); past it an allocation fails\n"
	"                           with the framework's usual out-of-memory error\n"
	"      --no-managed         serve allocations from plain device memory, not\n"
	"                           managed memory: kernels, arguments, allocations\n"
	"                           and NVTX are recorded, migrations cannot happen\n"
	"      --framework-cache    keep PyTorch's caching allocator on (by default\n"
	"                           PYTORCH_NO_CUDA_MEMORY_CACHING=1, unless already\n"
	"                           set, so that every tensor is seen); its\n"
	"                           expandable segments are then turned off\n"
	"                           (PYTORCH_ALLOC_CONF, PYTORCH_CUDA_ALLOC_CONF)\n"
	"  -q, --quiet              no summary; the recorder prints warnings only\n"
	"  -h, --help               show this help and exit\n"
	"      --version            show the version and exit\n"
	"\n"
	"Environment:\n"
	"  UMKIT_LIBDIR   folder holding libumrec.so (default: ../lib or ../lib/umkit\n"
	"                 next to umrec)\n"
	"  UMKIT_CUPTI    libcupti.so to use for NVTX (a file or its folder; default:\n"
	"                 the one libumrec.so links)\n"
	"  UMKIT_LOG      the recorder's verbosity: quiet, info or debug\n"
	"\n"
	"Exit status: the command's (128+N if signal N killed it; 126 if it could\n"
	"not be executed, 127 if not found); 1 if --help or --version could not\n"
	"write; 2 for bad usage; 3 if the recording could not be set up (no GPU\n"
	"driver, libumrec.so or libcupti missing, the trace cannot be written).\n";

struct umrec_options {
	const char *output;
	uint64_t max_managed; /* 0: no cap given */
	int no_managed, framework_cache, quiet;
	int options_end; /* argv index after the last option word, "--" excluded */
	int command;     /* argv index of the command; == argc when missing */
};

/* Parses umrec's options. Returns -1 to run, or the exit status (0 after
 * --help and --version, EXIT_FAILURE when they could not be written,
 * EXIT_USAGE with the message printed). */
static int parse_options(int argc, char **argv, struct umrec_options *o)
{
	memset(o, 0, sizeof *o);
	o->output = DEFAULT_TRACE;
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *value = NULL;
		int m;
		o->options_end = i;
		enum launch_word w = launch_option_word(a, "umrec", usage_text, stdout);
		if (w == LAUNCH_WORD_EXIT)
			return um_stdout_flushed() ? 0 : EXIT_FAILURE;
		if (w == LAUNCH_WORD_SEPARATOR)
			i++;
		if (w != LAUNCH_WORD_OPTION)
			break;
		if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			o->quiet = 1;
		} else if (strcmp(a, "--no-managed") == 0) {
			o->no_managed = 1;
		} else if (strcmp(a, "--framework-cache") == 0) {
			o->framework_cache = 1;
		} else if ((m = launch_option_value(argc, argv, &i, "-o", "--output", &value)) != 0) {
			if (m < 0 || !*value) {
				um_error("option '%s' needs a file name", a);
				goto usage;
			}
			o->output = value;
		} else if ((m = launch_option_value(argc, argv, &i, NULL, "--max-managed", &value)) != 0) {
			if (m < 0) {
				um_error("option '%s' needs a size (e.g. 60G)", a);
				goto usage;
			}
			char err[256];
			if (um_memory_size_parse("--max-managed", value, &o->max_managed, err, sizeof err) != 0) {
				um_error("%s", err);
				goto usage;
			}
		} else {
			um_error("unknown option '%s'", a);
			goto usage;
		}
	}
	o->command = i;
	if (o->command >= argc) {
		um_error("no command given");
		goto usage;
	}
	if (o->no_managed && o->max_managed) {
		um_error("--max-managed and --no-managed exclude each other");
		goto usage;
	}
	return -1;
usage:
	fputs("Try 'umrec --help'.\n", stderr);
	return EXIT_USAGE;
}

/* An earlier trace (trace_schema_replaceable): anything else at the -o
 * path is left alone, since -o probably named the wrong file, and so is a
 * trace in use (a recording still writing it). */
static enum launch_owner is_trace(const char *path, FILE *f)
{
	char magic[16];
	if (fread(magic, 1, sizeof magic, f) != sizeof magic || memcmp(magic, "SQLite format 3", sizeof magic) != 0)
		return LAUNCH_OWNER_OTHER;
	switch (trace_schema_replaceable(path)) {
	case TRACE_REPLACEABLE:
		return LAUNCH_OWNER_OURS;
	case TRACE_IN_USE:
		return LAUNCH_OWNER_IN_USE;
	default:
		return LAUNCH_OWNER_OTHER;
	}
}

/* The child's environment: the injection plus the UMKIT_* contract above.
 * Contract variables not given are removed, so a value left exported in
 * the user's shell cannot configure this run. */
static launch_env *child_env(const struct umrec_options *o, int argc, char **argv, const char *library,
			     const char *cupti, const char *trace)
{
	char err[4096], bytes[32];
	launch_env *e = launch_env_create(environ);
	if (!e) {
		um_error("out of memory");
		return NULL;
	}
	static const char *const injection_vars[] = { "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH" };
	const char *const ours[] = { library, cupti };
	for (size_t i = 0; i < 2; i++) {
		const char *old = launch_env_get(e, injection_vars[i]);
		if (old && *old && strcmp(old, ours[i]) != 0)
			um_warn("replacing %s=%s: another tool's injection cannot run with umrec", injection_vars[i],
				old);
	}
	struct launch_inject inj = { library, cupti, o->framework_cache };
	if (launch_env_inject(e, &inj, err, sizeof err) != 0) {
		um_error("%s", err);
		launch_env_destroy(e);
		return NULL;
	}
	launch_env_unset_stale(e);
	snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)o->max_managed);
	char *command = launch_join_args(argv + o->command, (size_t)(argc - o->command), MAX_COMMAND_TEXT);
	char *options = launch_join_args(argv + 1, (size_t)(o->options_end - 1), MAX_COMMAND_TEXT);
	int rc = !command || !options || launch_env_set(e, "UMKIT_TRACE", trace) != 0 ||
		 launch_env_set(e, "UMKIT_COMMAND", command) != 0 || launch_env_set(e, "UMKIT_OPTIONS", options) != 0;
	if (o->max_managed)
		rc = rc || launch_env_set(e, "UMKIT_MAX_MANAGED", bytes) != 0;
	if (o->no_managed)
		rc = rc || launch_env_set(e, "UMKIT_NO_MANAGED", "1") != 0;
	if (o->quiet)
		rc = rc || launch_env_set(e, "UMKIT_LOG", "quiet") != 0;
	free(command);
	free(options);
	if (rc) {
		um_error("out of memory");
		launch_env_destroy(e);
		return NULL;
	}
	return e;
}

/* Tells the user what the trace holds, or why there is nothing to hold. */
static void summarise(const char *trace, uint64_t elapsed_ns, int quiet, bool killed)
{
	struct rec_summary s;
	char err[4096], text[2048];
	int rc = rec_summary_read(trace, &s, err, sizeof err);
	if (rc > 0) {
		/* What the recorder claimed and never wrote: not a trace. */
		struct stat st;
		if (stat(trace, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
			unlink(trace);
		um_warn("no trace was written to %s: the program never initialised CUDA, or the recorder "
			"failed to start (see its messages above)",
			trace);
		return;
	}
	if (rc < 0) {
		um_warn("cannot read the trace: %s", err);
		return;
	}
	if (!quiet) {
		rec_summary_format(&s, trace, elapsed_ns, text, sizeof text);
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			um_info("%s", line);
	}
	const char *problem = rec_summary_problem(&s, killed);
	if (problem)
		um_warn("%s", problem);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	um_log_init("umrec");
	struct umrec_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.quiet)
		um_log_set_level(UM_LOG_WARN);

	/* In this order so that each failure can be produced without a GPU:
	 * the trace path, the library (UMKIT_LIBDIR), libcupti (UMKIT_CUPTI),
	 * the driver, the child's environment. The command is checked by
	 * running it: an earlier trace is set aside while it starts, and
	 * deleted only once it runs (launch_run's started). */
	char library[PATH_MAX], cupti[PATH_MAX], trace[PATH_MAX], err[4096];
	if (launch_output_path(o.output, "-o", "trace", is_trace, trace, sizeof trace, err, sizeof err) != 0) {
		um_error("%s", err);
		return EXIT_SETUP;
	}
	if (launch_find_library("libumrec.so", library, sizeof library, err, sizeof err) != 0 ||
	    launch_find_cupti(library, cupti, sizeof cupti, err, sizeof err) != 0 ||
	    launch_check_driver("umrec", err, sizeof err) != 0) {
		um_error("%s", err);
		return EXIT_SETUP;
	}
	launch_env *env = child_env(&o, argc, argv, library, cupti, trace);
	if (!env)
		return EXIT_SETUP;
	struct kept_output earlier;
	if (kept_output_begin(&earlier, trace, &trace_writer_files, err, sizeof err) != 0) {
		um_error("%s", err);
		launch_env_destroy(env);
		return EXIT_SETUP;
	}

	err[0] = '\0';
	int killed_by;
	uint64_t start = now_ns();
	int status = launch_run(argv + o.command, launch_env_array(env), kept_output_started, &earlier, &killed_by,
				err, sizeof err);
	uint64_t elapsed = now_ns() - start;
	kept_output_end(&earlier);
	/* The program's status is what umrec returns: a reader of its stderr
	 * gone by now (`umrec ... |& head -1`) must not make the summary's
	 * write end umrec by SIGPIPE. The program has ended; its own
	 * disposition was its own. */
	signal(SIGPIPE, SIG_IGN);
	launch_env_destroy(env);
	if (status < 0) {
		um_error("%s", err);
		return EXIT_SETUP;
	}
	if (err[0]) { /* the command could not be started: there is no trace */
		um_error("%s", err);
		return status;
	}
	summarise(trace, elapsed, o.quiet, killed_by != 0);
	launch_die_like(killed_by);
	return status;
}
