/*
 * launcher.h: what umrec and umreplay share to start the user's program
 * under an injected library.
 *
 * A launcher finds its injected library and libcupti, checks that a GPU
 * driver is present, builds the child's environment (CUDA_INJECTION64_PATH,
 * LD_PRELOAD, NVTX_INJECTION64_PATH, PYTORCH_NO_CUDA_MEMORY_CACHING and the
 * tool's UMKIT_* variables) and runs the command, forwarding signals and
 * returning its exit status the way a shell reports it. The child learns
 * that it is traced only through its environment: its argv is the user's.
 *
 * Nothing here links CUDA or CUPTI (design.md, mechanism 9): the driver is
 * only dlopen()ed to tell "no GPU" apart from later failures. Functions
 * return errors as text in err (never printed here); the command decides
 * what to tell the user.
 */
#ifndef UMKIT_LAUNCHER_H
#define UMKIT_LAUNCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Finds the injected library `name` (e.g. "libumrec.so") and writes its
 * absolute path into out. With UMKIT_LIBDIR set, only that folder is
 * searched, and its path is kept as given (made absolute, links not
 * resolved), so that a link can stand for a folder whose path LD_PRELOAD
 * cannot express; otherwise the folders ../lib and ../lib/umkit next to the
 * running binary (the build tree and `make install` layouts), resolved.
 * Returns 0, or -1 with err naming every path looked at.
 */
int launch_find_library(const char *name, char *out, size_t outlen, char *err, size_t errlen);

/*
 * Finds the libcupti that the injected library at `library` will load, for
 * NVTX_INJECTION64_PATH (NVTX must reach the same CUPTI copy the injection
 * subscribed with, not a second one). UMKIT_CUPTI, a file or a folder, wins
 * and is used alone. Otherwise the soname the library links (DT_NEEDED,
 * else libcupti.so.13 or libcupti.so) is looked up the way the dynamic
 * loader would for that library (its DT_RPATH, LD_LIBRARY_PATH, its
 * DT_RUNPATH), then in $CUDA_HOME and /usr/local/cuda (extras/CUPTI/lib64,
 * lib64, targets/x86_64-linux/lib) and the system library folder. Writes
 * the absolute path into out and returns 0, or -1 with err.
 */
int launch_find_cupti(const char *library, char *out, size_t outlen, char *err, size_t errlen);

/*
 * Checks that the NVIDIA driver library (libcuda.so.1) can be loaded, and
 * unloads it again. `tool` names the command in the message. Returns 0, or
 * -1 with err saying that `tool` needs a GPU.
 */
int launch_check_driver(const char *tool, char *err, size_t errlen);

/* The child's environment: a private copy of a base environment, edited
 * by name. Not thread-safe; the base is not modified. */
typedef struct launch_env launch_env;

/* Copies base (NULL-terminated NAME=VALUE strings, usually environ).
 * Returns NULL when out of memory. */
launch_env *launch_env_create(char *const *base);
void launch_env_destroy(launch_env *e);

/* Sets name=value, replacing every earlier value. Returns 0, or -1 when
 * out of memory (name is then unset). */
int launch_env_set(launch_env *e, const char *name, const char *value);
/* Removes name, every copy of it, if present. */
void launch_env_unset(launch_env *e, const char *name);
/* The value of name, or NULL; valid until e is next modified. */
const char *launch_env_get(const launch_env *e, const char *name);
/* The NULL-terminated NAME=VALUE array for execve; valid until e is next
 * modified or destroyed. */
char *const *launch_env_array(const launch_env *e);

struct launch_inject {
	const char *library;  /* absolute path of the injected library */
	const char *cupti;    /* absolute path of libcupti, for NVTX; NULL:
				 leave NVTX_INJECTION64_PATH as it is */
	int framework_cache;  /* 1: keep PyTorch's caching allocator on */
};

/*
 * Removes every UMKIT_* variable but those that configure the launchers
 * and logging (UMKIT_LOG, UMKIT_LIBDIR, UMKIT_CUPTI), so that a value left
 * exported in the user's shell (UMKIT_NO_MANAGED from an umrec session, an
 * old UMKIT_PLAN) cannot configure this run: the launcher sets its own.
 */
void launch_env_unset_stale(launch_env *e);

/*
 * Points the environment at the injected library: CUDA_INJECTION64_PATH and
 * (unless inj->cupti is NULL) NVTX_INJECTION64_PATH are set (replacing
 * earlier values), the library is
 * put first in LD_PRELOAD (keeping what was there), and
 * PYTORCH_NO_CUDA_MEMORY_CACHING=1 is set unless already present, so the
 * library sees every tensor. A value the user set is kept, with a warning
 * unless it is 1: PyTorch 2.11 turns its cache off for 1 only (0 keeps it,
 * anything else is ignored with a warning of PyTorch's). With
 * framework_cache the variable is removed instead. Where the cache stays
 * on, PyTorch's expandable segments are turned off, with a warning, in
 * each allocator-settings variable that turns them on (common/pytorch_conf.h:
 * the library would not see that memory). Returns 0, or -1 with
 * err (out of memory, or a library path that LD_PRELOAD cannot express
 * because it holds a space or a colon).
 */
int launch_env_inject(launch_env *e, const struct launch_inject *inj, char *err, size_t errlen);

/* Whether a value of PYTORCH_NO_CUDA_MEMORY_CACHING (NULL: unset) turns
 * PyTorch's caching allocator off: only "1" does (PyTorch 2.11, checked on
 * the H100). */
bool launch_pytorch_cache_off(const char *value);

/* What a word of a launcher's command line is, to launch_option_word. */
enum launch_word {
	LAUNCH_WORD_OPTION,    /* one of the tool's own options: the caller matches it */
	LAUNCH_WORD_COMMAND,   /* the command's first word (no leading '-', or "-") */
	LAUNCH_WORD_SEPARATOR, /* "--": the command starts at the next word */
	LAUNCH_WORD_EXIT,      /* -h/--help or --version, answered on out: exit 0 */
};

/*
 * Classifies a word the way every launcher reads it before its own options:
 * "--", the command's first word, and -h/--help (usage is printed on out)
 * and --version ("TOOL (umkit) VERSION" is printed on out).
 */
enum launch_word launch_option_word(const char *word, const char *tool, const char *usage, FILE *out);

/*
 * Matches argv[*i] against an option taking a value, in the forms -xVALUE,
 * -x VALUE, --name VALUE and --name=VALUE (shrt or lng may be NULL).
 * Returns 1 with *value set (advancing *i past a separate value), 0 when the
 * word is another option, -1 when the value is missing.
 */
int launch_option_value(int argc, char **argv, int *i, const char *shrt, const char *lng,
			const char **value);

/* What launch_output_path's is_ours finds of a file already at the path. */
enum launch_owner {
	LAUNCH_OWNER_OURS,   /* an earlier output of this kind: may be replaced */
	LAUNCH_OWNER_OTHER,  /* anything else: the user's data, kept */
	LAUNCH_OWNER_IN_USE, /* another process holds it locked: kept */
};

/*
 * Resolves an output file the traced program will write (a trace, a stats
 * file) into an absolute path (the program may change directory), checking
 * that its folder exists and is writable, and that a file already there is
 * one the run may replace: a regular file, empty or one that
 * is_ours(path, f) finds ours (f open for reading at its start), so that a
 * mistyped option never destroys the user's data, nor an output another
 * process is still using. A symbolic link there stands for its target: path
 * is the target's, and a link to nothing is refused. option names the flag
 * ("-o") and noun the file ("trace") in messages. Returns 0, or -1 with err
 * set.
 */
int launch_output_path(const char *given, const char *option, const char *noun,
		       enum launch_owner (*is_ours)(const char *path, FILE *f), char *path, size_t len, char *err,
		       size_t errlen);

/*
 * Joins n words of argv with spaces into a malloc'd string, for metadata
 * that people read and may paste into a shell: a word that is empty or
 * holds anything but letters, digits and -_./=:,+@% is put in single
 * quotes. Past max_len bytes the words that do not fit are replaced by
 * " ...", so the result is at most max_len + 4 bytes and a huge command
 * line cannot make the child's environment too large to exec. Returns NULL
 * when out of memory.
 */
char *launch_join_args(char *const *argv, size_t n, size_t max_len);

/*
 * Whether launch_run could start program (searched in PATH like execvp):
 * 0, or 127 when it does not exist and 126 when it cannot be executed, with
 * err saying "cannot run 'program': reason" as launch_run would. For a
 * launcher that names a command it cannot run before checks that need
 * more (umreplay's driver); only launch_run's started is sure (an ELF
 * program's missing interpreter passes this check).
 */
int launch_check_program(const char *program, char *err, size_t errlen);

/*
 * Runs argv[0] (searched in PATH like execvp) with argv and envp, waits for
 * it, and returns its status as a shell reports it: the exit status; 128+N
 * when killed by signal N (also stored in *killed_by, else 0); 127 when the
 * command does not exist and 126 when it cannot be executed, with err
 * saying "cannot run 'cmd': reason"; -1 with err when the launcher itself
 * failed (fork, pipe). While the child runs,
 * SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to the caller
 * are passed on to it, except those the kernel already delivered to the
 * whole process group (a terminal's ^C) and those the caller ignores (the
 * child inherits the ignoring). The caller's signal dispositions and mask
 * are restored before returning. The caller must not reap children of its
 * own meanwhile (no SIGCHLD handler that calls wait).
 *
 * started, unless NULL, is called with ctx once the exec has succeeded
 * (the program is running), before the wait; never when the command could
 * not be started. Only then is an earlier output known to be no longer
 * needed: no check made beforehand can foresee every reason an exec fails
 * (an ELF program's missing interpreter, an environment too large).
 */
int launch_run(char *const argv[], char *const envp[], void (*started)(void *ctx), void *ctx, int *killed_by,
	       char *err, size_t errlen);

/*
 * A launcher whose child was killed by SIGINT, SIGTERM or SIGHUP dies of
 * the same signal: a shell running it stops a script on ^C only when its
 * command died of SIGINT, not when it exited with 130. Returns (doing
 * nothing) for any other signal, for one the launcher ignores (nohup),
 * and for 0.
 */
void launch_die_like(int sig);

#endif
