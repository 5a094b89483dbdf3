/*
 * launcher.h: what umrec and umreplay share to start the user's program
 * under an injected library, besides finding it (launch_find.h) and the
 * child's environment (launch_env.h): reading the command line, checking
 * an output file, and running the command, forwarding signals and
 * returning its exit status the way a shell reports it.
 *
 * Nothing here links CUDA or CUPTI (design.md, mechanism 9). Functions
 * return errors as text in err (never printed here); the command decides
 * what to tell the user.
 */
#ifndef UMKIT_LAUNCHER_H
#define UMKIT_LAUNCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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
