/*
 * launcher.c: the launchers' command lines, their output files and running
 * the command (see launcher.h).
 */
#include "launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errmsg.h"

/* ---- the command line as metadata ---- */

/* Appends word to out (which has room), quoted for a shell when needed;
 * returns the bytes written. */
static size_t quote_word(const char *word, char *out)
{
	size_t k = 0;
	int plain = *word != '\0';
	for (const char *c = word; *c && plain; c++)
		plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			strchr("-_./=:,+@%", *c);
	if (plain) {
		memcpy(out, word, strlen(word));
		return strlen(word);
	}
	out[k++] = '\'';
	for (const char *c = word; *c; c++) {
		if (*c == '\'') {
			memcpy(out + k, "'\\''", 4); /* close, escaped quote, reopen */
			k += 4;
		} else {
			out[k++] = *c;
		}
	}
	out[k++] = '\'';
	return k;
}

char *launch_join_args(char *const *argv, size_t n, size_t max_len)
{
	/* Worst case per word: every byte a quote (4 bytes), two quotes, a space. */
	size_t cap = 8;
	for (size_t i = 0; i < n; i++)
		cap += 4 * strlen(argv[i]) + 3;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		size_t start = len;
		if (i)
			out[len++] = ' ';
		len += quote_word(argv[i], out + len);
		if (len > max_len) {
			const char *more = i ? " ..." : "...";
			memcpy(out + start, more, strlen(more));
			len = start + strlen(more);
			break;
		}
	}
	out[len] = '\0';
	return out;
}

/* ---- running the command ---- */

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

/* The child being waited for; 0 outside launch_run and before fork returns. */
static volatile sig_atomic_t run_child;
/* Whether this process leads its session (launch_run). */
static volatile sig_atomic_t session_leader;

static void forward_signal(int sig, siginfo_t *info, void *ctx)
{
	/* A terminal's ^C and ^\ come from the kernel to the whole foreground
	 * process group, the child included when it is in this one's group:
	 * passing them on would deliver them twice (a second KeyboardInterrupt
	 * in Python). A child in a group of its own (under timeout(1), or one
	 * that called setpgid) got nothing: it gets them from here. The
	 * terminal's hangup goes to the session's leader alone, which this may
	 * be (ssh -t, a terminal window's command). */
	int saved = errno;
	pid_t pid = (pid_t)run_child;
	bool from_terminal = info && info->si_code == SI_KERNEL && !(sig == SIGHUP && session_leader);
	if (pid > 0 && !(from_terminal && getpgid(pid) == getpgrp()))
		kill(pid, sig);
	errno = saved;
}

/* 0, or the status execve would give file itself: 127 missing, 126 not
 * runnable. */
static int file_status(const char *file, int *why)
{
	struct stat st;
	if (stat(file, &st) != 0) {
		*why = errno;
		return errno == ENOENT || errno == ENOTDIR ? 127 : 126;
	}
	*why = EACCES;
	return S_ISREG(st.st_mode) && access(file, X_OK) == 0 ? 0 : 126;
}

/* file_status, and for a script ("#!" first) its interpreter's: execve
 * fails with the interpreter's errno when that is missing or not
 * runnable. culprit (PATH_MAX bytes) gets the interpreter's name when it
 * is the cause, else "". */
static int program_status(const char *file, int *why, char *culprit)
{
	culprit[0] = '\0';
	int status = file_status(file, why);
	FILE *f = status ? NULL : fopen(file, "r");
	char line[PATH_MAX + 3];
	if (!f)
		return status;
	bool script = fgets(line, sizeof line, f) && strncmp(line, "#!", 2) == 0;
	fclose(f);
	if (!script)
		return 0;
	char *interpreter = line + 2 + strspn(line + 2, " \t");
	interpreter[strcspn(interpreter, " \t\r\n")] = '\0';
	status = *interpreter ? file_status(interpreter, why) : 0;
	if (status)
		snprintf(culprit, PATH_MAX, "%s", interpreter);
	return status;
}

int launch_check_program(const char *program, char *err, size_t errlen)
{
	char file[PATH_MAX], culprit[PATH_MAX] = "";
	int status, why;
	if (!*program) {
		status = 127; /* as execvp says of an empty name */
		why = ENOENT;
	} else if (strchr(program, '/')) {
		status = program_status(program, &why, culprit);
	} else {
		/* execvp's search: PATH's entries in order (an empty one is the
		 * current folder); a file found but not runnable is remembered
		 * while the search goes on. */
		const char *path = getenv("PATH");
		if (!path)
			path = "/bin:/usr/bin";
		status = 127;
		why = ENOENT;
		for (const char *dir = path;; dir++) {
			size_t n = strcspn(dir, ":");
			int found_why;
			char found_culprit[PATH_MAX];
			if (n)
				snprintf(file, sizeof file, "%.*s/%s", (int)n, dir, program);
			else
				snprintf(file, sizeof file, "./%s", program);
			int found = program_status(file, &found_why, found_culprit);
			if (found == 0)
				return 0;
			if (found == 126) {
				status = 126;
				why = found_why;
				memcpy(culprit, found_culprit, sizeof culprit);
			} else if (status == 127 && !culprit[0]) {
				/* execvp goes on past a script whose interpreter
				 * is missing too: named if nothing else is found. */
				memcpy(culprit, found_culprit, sizeof culprit);
			}
			dir += n;
			if (!*dir)
				break;
		}
	}
	if (status && culprit[0])
		um_errmsg(err, errlen, "cannot run '%s': its interpreter '%s': %s", program, culprit, strerror(why));
	else if (status)
		um_errmsg(err, errlen, "cannot run '%s': %s", program, strerror(why));
	return status;
}

/* Says why the exec of program failed with errno why, naming what was
 * missing: the check names the program or a script's interpreter; a
 * missing file it does not see is the loader an ELF program names. */
static void exec_failure(const char *program, int why, char *err, size_t errlen)
{
	if (launch_check_program(program, err, errlen) != 0)
		return;
	if (why == ENOENT)
		um_errmsg(err, errlen, "cannot run '%s': the ELF interpreter it names (its dynamic loader): %s",
			  program, strerror(why));
	else
		um_errmsg(err, errlen, "cannot run '%s': %s", program, strerror(why));
}

void launch_die_like(int sig)
{
	struct sigaction now;
	/* One the launcher ignores (nohup) it does not die of either. */
	if ((sig != SIGINT && sig != SIGTERM && sig != SIGHUP) || sigaction(sig, NULL, &now) != 0 ||
	    now.sa_handler == SIG_IGN)
		return;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	signal(sig, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

int launch_run(char *const argv[], char *const envp[], void (*started)(void *ctx), void *ctx, int *killed_by,
	       char *err, size_t errlen)
{
	*killed_by = 0;
	if (!argv || !argv[0]) {
		um_errmsg(err, errlen, "no command to run");
		return -1;
	}
	/* Blocked from before fork until the child's pid is known, so a signal
	 * in between is forwarded rather than lost. */
	sigset_t block, oldmask;
	sigemptyset(&block);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaddset(&block, forwarded[i]);
	sigprocmask(SIG_BLOCK, &block, &oldmask);

	session_leader = getsid(0) == getpid();
	/* SIGCHLD ignored (a disposition the launcher may inherit) would have
	 * the kernel reap the child, leaving its status to nobody: the
	 * default here, the user's setting back in the child. */
	struct sigaction old_chld, dfl_chld;
	memset(&dfl_chld, 0, sizeof dfl_chld);
	dfl_chld.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &dfl_chld, &old_chld);

	struct sigaction old[NFORWARDED], fwd;
	memset(&fwd, 0, sizeof fwd);
	fwd.sa_sigaction = forward_signal;
	fwd.sa_flags = SA_SIGINFO | SA_RESTART;
	fwd.sa_mask = block;
	for (size_t i = 0; i < NFORWARDED; i++) {
		sigaction(forwarded[i], NULL, &old[i]);
		/* An ignored signal stays ignored, here and (inherited) in the child. */
		if (old[i].sa_handler != SIG_IGN)
			sigaction(forwarded[i], &fwd, NULL);
	}

	int status = -1;
	/* The child reports a failed exec through this pipe; a successful
	 * exec closes it (close-on-exec), so the parent reads end-of-file. */
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		um_errmsg(err, errlen, "cannot create a pipe: %s", strerror(errno));
		goto restore;
	}
	pid_t pid = fork();
	if (pid < 0) {
		um_errmsg(err, errlen, "cannot fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		goto restore;
	}
	if (pid == 0) {
		for (size_t i = 0; i < NFORWARDED; i++)
			sigaction(forwarded[i], &old[i], NULL);
		sigaction(SIGCHLD, &old_chld, NULL);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		close(fds[0]);
		execvpe(argv[0], argv, envp);
		int e = errno;
		ssize_t w = write(fds[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	run_child = pid;
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	close(fds[1]);

	int exec_errno = 0;
	ssize_t r;
	do
		r = read(fds[0], &exec_errno, sizeof exec_errno);
	while (r < 0 && errno == EINTR);
	close(fds[0]);
	/* Anything but the child's errno (end-of-file) means the exec went
	 * through: the program is running. */
	bool exec_failed = r == (ssize_t)sizeof exec_errno;
	if (!exec_failed && started)
		started(ctx);

	/* Wait without reaping first: until the child is reaped its pid cannot
	 * be reused, so the forwarder never signals a stranger. */
	siginfo_t si;
	int ws = 0;
	pid_t w;
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	run_child = 0;
	do
		w = waitpid(pid, &ws, 0);
	while (w < 0 && errno == EINTR);

	if (exec_failed) {
		/* Shell convention: 127 not found, 126 found but not runnable. */
		status = exec_errno == ENOENT || exec_errno == ENOTDIR ? 127 : 126;
		exec_failure(argv[0], exec_errno, err, errlen);
	} else if (w < 0) {
		um_errmsg(err, errlen, "cannot wait for '%s': %s", argv[0], strerror(errno));
	} else if (WIFEXITED(ws)) {
		status = WEXITSTATUS(ws);
	} else if (WIFSIGNALED(ws)) {
		status = 128 + WTERMSIG(ws);
		*killed_by = WTERMSIG(ws);
	}

restore:
	sigprocmask(SIG_BLOCK, &block, NULL);
	run_child = 0; /* for the early failures */
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &old[i], NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	return status;
}

/* Whose the file at path is (st its status; f open for reading on it when
 * it is a regular file that is not empty). */
static enum launch_owner output_owner(const char *path, const struct stat *st, FILE *f,
				      enum launch_owner (*is_ours)(const char *path, FILE *f))
{
	if (!S_ISREG(st->st_mode))
		return LAUNCH_OWNER_OTHER;
	if (st->st_size == 0)
		return LAUNCH_OWNER_OURS;
	return is_ours(path, f);
}

int launch_output_path(const char *given, const char *option, const char *noun,
		       enum launch_owner (*is_ours)(const char *path, FILE *f), char *path, size_t len, char *err,
		       size_t errlen)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(given, '/');
	const char *base = slash ? slash + 1 : given;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		um_errmsg(err, errlen, "%s %s: not a file name", option, given);
		return -1;
	}
	if (slash)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - given) + (slash == given), given);
	else
		snprintf(dir, sizeof dir, ".");
	if (!realpath(dir, real)) {
		um_errmsg(err, errlen, "cannot write the %s %s: %s: %s", noun, given, dir, strerror(errno));
		return -1;
	}
	struct stat st;
	errno = stat(real, &st) == 0 && !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
	if (errno || access(real, W_OK | X_OK) != 0) {
		um_errmsg(err, errlen, "cannot write the %s %s: %s: %s", noun, given, real, strerror(errno));
		return -1;
	}
	if (snprintf(path, len, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) >= (int)len) {
		um_errmsg(err, errlen, "%s %s: path too long", option, given);
		return -1;
	}
	/* A symbolic link names the file to write: that file, and its folder,
	 * are judged and written, never the link (removing the link would
	 * destroy it, and the run would write a file in its place). The
	 * target is resolved whole, so this recurses once. */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		if (!realpath(path, target)) {
			if (errno == ENOENT)
				um_errmsg(err, errlen, "%s is a symbolic link to nothing: not replacing it (choose "
					  "another %s)", path, option);
			else
				um_errmsg(err, errlen, "%s is a symbolic link that cannot be followed: %s: not "
					  "replacing it (choose another %s)", path, strerror(errno), option);
			return -1;
		}
		return launch_output_path(target, option, noun, is_ours, path, len, err, errlen);
	}
	if (stat(path, &st) != 0)
		return 0;
	FILE *f = S_ISREG(st.st_mode) && st.st_size > 0 ? fopen(path, "rb") : NULL;
	if (S_ISREG(st.st_mode) && st.st_size > 0 && !f) {
		um_errmsg(err, errlen, "cannot read %s, there already: %s: not replacing it", path, strerror(errno));
		return -1;
	}
	enum launch_owner owner = output_owner(path, &st, f, is_ours);
	if (f)
		fclose(f);
	if (owner == LAUNCH_OWNER_IN_USE) {
		um_errmsg(err, errlen,
			  "%s is in use by another process, which holds it locked: not replacing it (choose another "
			  "%s, or wait until that process has closed it)",
			  path, option);
		return -1;
	}
	if (owner != LAUNCH_OWNER_OURS) {
		um_errmsg(err, errlen, "%s exists and is not a %s file: not replacing it (choose another %s)",
			  path, noun, option);
		return -1;
	}
	return 0;
}

enum launch_word launch_option_word(const char *word, const char *tool, const char *usage, FILE *out)
{
	if (strcmp(word, "--") == 0)
		return LAUNCH_WORD_SEPARATOR;
	if (word[0] != '-' || word[1] == '\0')
		return LAUNCH_WORD_COMMAND;
	if (strcmp(word, "-h") == 0 || strcmp(word, "--help") == 0) {
		fputs(usage, out);
		return LAUNCH_WORD_EXIT;
	}
	if (strcmp(word, "--version") == 0) {
		fprintf(out, "%s (umkit) %s\n", tool, UMKIT_VERSION);
		return LAUNCH_WORD_EXIT;
	}
	return LAUNCH_WORD_OPTION;
}

int launch_option_value(int argc, char **argv, int *i, const char *shrt, const char *lng,
			const char **value)
{
	const char *a = argv[*i];
	size_t n = lng ? strlen(lng) : 0;
	if (lng && strncmp(a, lng, n) == 0 && a[n] == '=') {
		*value = a + n + 1;
		return 1;
	}
	if (shrt && strncmp(a, shrt, 2) == 0 && a[2]) {
		*value = a + 2;
		return 1;
	}
	if (!((shrt && strcmp(a, shrt) == 0) || (lng && strcmp(a, lng) == 0)))
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*value = argv[++*i];
	return 1;
}
