/*
 * Unit tests for the launchers' shared code: the child's environment
 * (common/launch_env.c), finding the library, libcupti and the driver
 * (common/launch_find.c), and common/launcher.c's command-line words,
 * quoting, output paths, and launch_run's exit statuses and signal
 * forwarding. No GPU or driver is needed.
 */
#include "testutil.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "launch_env.h"
#include "launch_find.h"
#include "launcher.h"

extern char **environ;

static void write_file(const char *path, mode_t mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("not really a library\n", f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static int env_count(const launch_env *e, const char *name)
{
	int n = 0;
	size_t len = strlen(name);
	for (char *const *v = launch_env_array(e); *v; v++)
		n += strncmp(*v, name, len) == 0 && (*v)[len] == '=';
	return n;
}

static void env_edits_a_copy(void **state)
{
	char a[] = "HOME=/home/u", b[] = "PATH=/bin", c[] = "EMPTY=";
	char *base[] = { a, b, c, NULL };
	launch_env *e = launch_env_create(base);
	assert_non_null(e);
	assert_string_equal(launch_env_get(e, "PATH"), "/bin");
	assert_string_equal(launch_env_get(e, "EMPTY"), "");
	assert_null(launch_env_get(e, "PAT"));
	assert_int_equal(launch_env_set(e, "PATH", "/usr/bin"), 0);
	assert_int_equal(launch_env_set(e, "NEW", "x=y"), 0);
	assert_string_equal(launch_env_get(e, "PATH"), "/usr/bin");
	assert_string_equal(launch_env_get(e, "NEW"), "x=y");
	assert_int_equal(env_count(e, "PATH"), 1);
	launch_env_unset(e, "HOME");
	launch_env_unset(e, "NOT_THERE");
	assert_null(launch_env_get(e, "HOME"));

	size_t n = 0;
	for (char *const *v = launch_env_array(e); *v; v++)
		n++;
	assert_int_equal(n, 3); /* PATH, EMPTY, NEW */
	assert_string_equal(b, "PATH=/bin"); /* the base is untouched */
	launch_env_destroy(e);

	/* Growing past the first allocation keeps every entry. */
	e = launch_env_create(NULL);
	char name[16];
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "V%d", i);
		assert_int_equal(launch_env_set(e, name, name), 0);
	}
	assert_string_equal(launch_env_get(e, "V0"), "V0");
	assert_string_equal(launch_env_get(e, "V299"), "V299");
	launch_env_destroy(e);

	/* A name the parent passed twice: set and unset act on every copy. */
	char d1[] = "DUP=1", d2[] = "DUP=0", o[] = "OTHER=x", o2[] = "OTHER=y";
	char *dups[] = { d1, o, d2, o2, NULL };
	e = launch_env_create(dups);
	assert_int_equal(launch_env_set(e, "DUP", "2"), 0);
	assert_int_equal(env_count(e, "DUP"), 1);
	assert_string_equal(launch_env_get(e, "DUP"), "2");
	launch_env_unset(e, "OTHER");
	assert_int_equal(env_count(e, "OTHER"), 0);
	launch_env_destroy(e);
}

static void inject_sets_the_variables(void **state)
{
	char p[] = "LD_PRELOAD=/opt/other.so", q[] = "CUDA_INJECTION64_PATH=/old/inject.so";
	char *base[] = { p, q, NULL };
	launch_env *e = launch_env_create(base);
	struct launch_inject inj = { "/u/lib/libumrec.so", "/cuda/lib64/libcupti.so.13", 0 };
	char err[256];
	assert_int_equal(launch_env_inject(e, &inj, err, sizeof err), 0);
	assert_string_equal(launch_env_get(e, "LD_PRELOAD"), "/u/lib/libumrec.so:/opt/other.so");
	assert_string_equal(launch_env_get(e, "CUDA_INJECTION64_PATH"), "/u/lib/libumrec.so");
	assert_string_equal(launch_env_get(e, "NVTX_INJECTION64_PATH"), "/cuda/lib64/libcupti.so.13");
	assert_string_equal(launch_env_get(e, "PYTORCH_NO_CUDA_MEMORY_CACHING"), "1");
	assert_int_equal(env_count(e, "LD_PRELOAD"), 1);
	launch_env_destroy(e);

	/* No earlier LD_PRELOAD, or an empty one: just the library. */
	char empty[] = "LD_PRELOAD=";
	char *base2[] = { empty, NULL };
	for (int i = 0; i < 2; i++) {
		e = launch_env_create(i ? base2 : NULL);
		assert_int_equal(launch_env_inject(e, &inj, err, sizeof err), 0);
		assert_string_equal(launch_env_get(e, "LD_PRELOAD"), "/u/lib/libumrec.so");
		launch_env_destroy(e);
	}
}

/* LD_PRELOAD given twice: the loader preloads the last copy's list (the
 * first one's it does not), so that list is what the library goes before. */
static void inject_keeps_the_preload_the_loader_reads(void **state)
{
	char p1[] = "LD_PRELOAD=/opt/first.so", p2[] = "LD_PRELOAD=/opt/last.so";
	char *base[] = { p1, p2, NULL };
	launch_env *e = launch_env_create(base);
	struct launch_inject inj = { "/u/lib/libumrec.so", NULL, 0 };
	char err[256];
	assert_int_equal(launch_env_inject(e, &inj, err, sizeof err), 0);
	assert_string_equal(launch_env_get(e, "LD_PRELOAD"), "/u/lib/libumrec.so:/opt/last.so");
	assert_int_equal(env_count(e, "LD_PRELOAD"), 1);
	launch_env_destroy(e);
}

static void inject_respects_pytorch_setting(void **state)
{
	/* The user's value is kept (even "0", which keeps PyTorch's cache on,
	 * with a warning), and --framework-cache removes it. */
	char v[] = "PYTORCH_NO_CUDA_MEMORY_CACHING=0";
	char *base[] = { v, NULL };
	struct launch_inject inj = { "/u/lib/libumrec.so", "/c/libcupti.so", 0 };
	char err[256];
	launch_env *e = launch_env_create(base);
	assert_int_equal(launch_env_inject(e, &inj, err, sizeof err), 0);
	assert_string_equal(launch_env_get(e, "PYTORCH_NO_CUDA_MEMORY_CACHING"), "0");
	launch_env_destroy(e);

	inj.framework_cache = 1;
	e = launch_env_create(base);
	assert_int_equal(launch_env_inject(e, &inj, err, sizeof err), 0);
	assert_null(launch_env_get(e, "PYTORCH_NO_CUDA_MEMORY_CACHING"));
	launch_env_destroy(e);

	/* Only 1 turns the cache off, as PyTorch 2.11 reads the variable. */
	assert_true(launch_pytorch_cache_off("1"));
	assert_false(launch_pytorch_cache_off(NULL));
	assert_false(launch_pytorch_cache_off("0"));
	assert_false(launch_pytorch_cache_off("true"));
	assert_false(launch_pytorch_cache_off("10"));
}

static void inject_turns_expandable_segments_off_with_the_cache(void **state)
{
	/* Kept by --framework-cache or by the user's 0: each variable that
	 * turns expandable segments on has them off, the rest as written. */
	char a[] = "PYTORCH_ALLOC_CONF=expandable_segments : True", b[] = "PYTORCH_NO_CUDA_MEMORY_CACHING=0",
	     c[] = "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:64,expandable_segments:True";
	char *kept_by_user[] = { a, b, c, NULL }, *kept_by_tool[] = { a, c, NULL };
	char err[256];
	struct launch_inject inj = { "/u/lib/libumrec.so", NULL, 0 };
	for (int i = 0; i < 2; i++) {
		inj.framework_cache = i;
		launch_env *e = launch_env_create(i ? kept_by_tool : kept_by_user);
		assert_int_equal(launch_env_inject(e, &inj, err, sizeof err), 0);
		assert_string_equal(launch_env_get(e, "PYTORCH_ALLOC_CONF"), "expandable_segments : False");
		assert_string_equal(launch_env_get(e, "PYTORCH_CUDA_ALLOC_CONF"),
				    "max_split_size_mb:64,expandable_segments:False");
		launch_env_destroy(e);
	}
	/* With the cache off PyTorch maps no segments: left alone. */
	inj.framework_cache = 0;
	launch_env *e = launch_env_create(kept_by_tool);
	assert_int_equal(launch_env_inject(e, &inj, err, sizeof err), 0);
	assert_string_equal(launch_env_get(e, "PYTORCH_ALLOC_CONF"), "expandable_segments : True");
	launch_env_destroy(e);
}

static void unset_stale_keeps_launcher_settings(void **state)
{
	char a[] = "UMKIT_PLAN=/old.bin", b[] = "PATH=/bin", c[] = "UMKIT_LOG=debug", d[] = "UMKIT_PLAN=/older.bin",
	     f[] = "UMKIT_LIBDIR=/u/lib", g[] = "UMKIT_NO_MANAGED=1", h[] = "UMKIT_CUPTI=/c";
	char *base[] = { a, b, c, d, g, f, h, NULL };
	launch_env *e = launch_env_create(base);
	launch_env_unset_stale(e);
	char *const *v = launch_env_array(e);
	const char *want[] = { "PATH=/bin", "UMKIT_LOG=debug", "UMKIT_LIBDIR=/u/lib", "UMKIT_CUPTI=/c" };
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(v[i], want[i]);
	assert_null(v[4]);
	launch_env_destroy(e);
}

static void inject_rejects_unpreloadable_path(void **state)
{
	struct launch_inject inj = { "/my tools/lib/libumrec.so", "/c/libcupti.so", 0 };
	char err[1024] = "";
	launch_env *e = launch_env_create(NULL);
	assert_int_equal(launch_env_inject(e, &inj, err, sizeof err), -1);
	assert_non_null(strstr(err, "LD_PRELOAD"));
	assert_non_null(strstr(err, "/my tools/lib/libumrec.so"));
	/* The way out it offers: a link to the folder, in UMKIT_LIBDIR. */
	assert_non_null(strstr(err, "ln -s '/my tools/lib' LINK, then UMKIT_LIBDIR=LINK"));
	launch_env_destroy(e);
}

static void join_quotes_for_a_shell(void **state)
{
	char *plain[] = { "python", "train.py", "--lr=3e-4", "-o", "/tmp/x.db" };
	char *s = launch_join_args(plain, 5, 1000);
	assert_string_equal(s, "python train.py --lr=3e-4 -o /tmp/x.db");
	free(s);

	char *odd[] = { "echo", "a b", "it's", "", "$HOME" };
	s = launch_join_args(odd, 5, 1000);
	assert_string_equal(s, "echo 'a b' 'it'\\''s' '' '$HOME'");
	free(s);

	s = launch_join_args(plain, 5, 12); /* "python train.py" is 15 */
	assert_string_equal(s, "python ...");
	free(s);
	s = launch_join_args(plain, 5, 3);
	assert_string_equal(s, "...");
	free(s);
	s = launch_join_args(plain, 0, 10);
	assert_string_equal(s, "");
	free(s);
}

static int run_sh(const char *script, int *killed_by, char *err, size_t errlen)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	err[0] = '\0';
	return launch_run(argv, environ, NULL, NULL, killed_by, err, errlen);
}

static void run_maps_exit_status(void **state)
{
	char err[512];
	int killed_by;
	assert_int_equal(run_sh("exit 0", &killed_by, err, sizeof err), 0);
	assert_int_equal(run_sh("exit 7", &killed_by, err, sizeof err), 7);
	assert_string_equal(err, "");
	/* A status of 130 and death by SIGINT read the same; killed_by tells. */
	assert_int_equal(run_sh("exit 130", &killed_by, err, sizeof err), 130);
	assert_int_equal(killed_by, 0);
	assert_int_equal(run_sh("kill -TERM $$", &killed_by, err, sizeof err), 128 + SIGTERM);
	assert_int_equal(killed_by, SIGTERM);
	assert_int_equal(run_sh("kill -KILL $$", &killed_by, err, sizeof err), 128 + SIGKILL);
	assert_int_equal(killed_by, SIGKILL);
}

/* A child process that calls launch_die_like(sig) for a child killed by
 * sig: how the parent sees it end. */
static int dies_like(int sig, bool ignored)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (ignored)
			signal(sig, SIG_IGN);
		launch_die_like(sig);
		_exit(3);
	}
	int ws;
	waitpid(pid, &ws, 0);
	return WIFSIGNALED(ws) ? -WTERMSIG(ws) : WEXITSTATUS(ws);
}

static void die_like_reraises_interrupts_only(void **state)
{
	/* Even while the signal is blocked, as a launcher's may be. */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, &old);
	assert_int_equal(dies_like(SIGINT, false), -SIGINT);
	sigprocmask(SIG_SETMASK, &old, NULL);
	assert_int_equal(dies_like(SIGTERM, false), -SIGTERM);
	assert_int_equal(dies_like(SIGHUP, false), -SIGHUP);
	/* Under nohup the launcher ignores SIGHUP, and does not die of it. */
	assert_int_equal(dies_like(SIGHUP, true), 3);
	/* A crash is the child's, not the launcher's to repeat (no core). */
	assert_int_equal(dies_like(SIGSEGV, false), 3);
	assert_int_equal(dies_like(SIGKILL, false), 3);
	assert_int_equal(dies_like(0, false), 3);
}

static void check_program_matches_exec(void **state)
{
	char err[512] = "", path[512], dir[512], old_path[4096];
	assert_int_equal(launch_check_program("sh", err, sizeof err), 0);
	assert_int_equal(launch_check_program("/bin/sh", err, sizeof err), 0);
	assert_int_equal(launch_check_program("umkit-no-such-command", err, sizeof err), 127);
	assert_string_equal(err, "cannot run 'umkit-no-such-command': No such file or directory");
	assert_int_equal(launch_check_program("./umkit/no-such", err, sizeof err), 127);
	assert_int_equal(launch_check_program("", err, sizeof err), 127);

	test_path(path, sizeof path, "not-executable");
	write_file(path, 0644);
	assert_int_equal(launch_check_program(path, err, sizeof err), 126);
	assert_non_null(strstr(err, "Permission denied"));
	/* Found in PATH but not runnable, as execvp reports it; a runnable
	 * one later in PATH wins. */
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	snprintf(old_path, sizeof old_path, "%s", getenv("PATH") ? getenv("PATH") : "/bin:/usr/bin");
	setenv("PATH", dir, 1);
	assert_int_equal(launch_check_program("not-executable", err, sizeof err), 126);
	char both[1200];
	snprintf(both, sizeof both, "%s:/bin", dir);
	setenv("PATH", both, 1);
	assert_int_equal(launch_check_program("sh", err, sizeof err), 0);
	setenv("PATH", old_path, 1);
	/* A folder is not a program. */
	assert_int_equal(launch_check_program("/tmp", err, sizeof err), 126);

	/* A script runs when its interpreter does: execve fails with the
	 * interpreter's errno, which launch_run reports for the script. */
	test_path(path, sizeof path, "script");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("#! /umkit/no-such-shell -e\necho hi\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(launch_check_program(path, err, sizeof err), 127);
	char want[1200];
	snprintf(want, sizeof want, "cannot run '%s': its interpreter '/umkit/no-such-shell': No such file or directory",
		 path);
	assert_string_equal(err, want);
	int killed_by;
	char run_err[512] = "";
	char *script[] = { path, NULL };
	assert_int_equal(launch_run(script, environ, NULL, NULL, &killed_by, run_err, sizeof run_err), 127);
	assert_string_equal(err, run_err);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\nexit 0\n", f);
	fclose(f);
	assert_int_equal(launch_check_program(path, err, sizeof err), 0);
}

static void run_reports_unrunnable_commands(void **state)
{
	char err[512] = "";
	int killed_by;
	char *missing[] = { "umkit-no-such-command", "arg", NULL };
	assert_int_equal(launch_run(missing, environ, NULL, NULL, &killed_by, err, sizeof err), 127);
	assert_string_equal(err, "cannot run 'umkit-no-such-command': No such file or directory");

	char path[512];
	test_path(path, sizeof path, "not-executable");
	write_file(path, 0644);
	char *noexec[] = { path, NULL };
	err[0] = '\0';
	/* Even root cannot exec a file with no execute bit. */
	assert_int_equal(launch_run(noexec, environ, NULL, NULL, &killed_by, err, sizeof err), 126);
	assert_non_null(strstr(err, "cannot run '"));
	assert_non_null(strstr(err, "Permission denied"));
}

static void count_start(void *starts)
{
	++*(int *)starts;
}

/* started is called for a program that runs, whatever its status, and
 * never for one the exec refused: a missing program, or an ELF program
 * whose interpreter (PT_INTERP) is missing, which no check beforehand
 * finds. */
static void run_tells_when_started(void **state)
{
	char err[512] = "", path[512], cmd[1200];
	int killed_by, starts = 0;
	char *runs[] = { "sh", "-c", "exit 3", NULL };
	assert_int_equal(launch_run(runs, environ, count_start, &starts, &killed_by, err, sizeof err), 3);
	assert_int_equal(starts, 1);

	char *missing[] = { "umkit-no-such-command", NULL };
	assert_int_equal(launch_run(missing, environ, count_start, &starts, &killed_by, err, sizeof err), 127);
	assert_int_equal(starts, 1);

	test_path(path, sizeof path, "no-interpreter");
	snprintf(cmd, sizeof cmd,
		 "echo 'int main(void) { return 0; }' | ${CC:-cc} -x c - -o '%s' -Wl,--dynamic-linker=/umkit/no-such-ld.so",
		 path);
	assert_int_equal(system(cmd), 0);
	char *no_interpreter[] = { path, NULL };
	err[0] = '\0';
	assert_int_equal(launch_run(no_interpreter, environ, count_start, &starts, &killed_by, err, sizeof err), 127);
	assert_int_equal(starts, 1);
	char want[1200];
	snprintf(want, sizeof want, "cannot run '%s': the ELF interpreter it names (its dynamic loader): "
		 "No such file or directory", path);
	assert_string_equal(err, want);
}

static void run_passes_env_and_argv(void **state)
{
	char v[] = "UMKIT_TEST_VAR=yes", path[PATH_MAX + 8];
	snprintf(path, sizeof path, "PATH=%s", getenv("PATH") ? getenv("PATH") : "/bin:/usr/bin");
	char *envp[] = { v, path, NULL };
	int killed_by;
	/* The child sees exactly the given environment and its own argv. */
	char *argv[] = { "sh", "-c", "test \"$UMKIT_TEST_VAR\" = yes && test \"$0 $1\" = 'name arg'", "name", "arg",
			 NULL };
	char err[256];
	assert_int_equal(launch_run(argv, envp, NULL, NULL, &killed_by, err, sizeof err), 0);
	char *argv2[] = { "sh", "-c", "test -z \"$HOME\"", NULL };
	assert_int_equal(launch_run(argv2, envp, NULL, NULL, &killed_by, err, sizeof err), 0);
}

/* This binary's first argument to run the rest with SIGUSR1 at its
 * default (main). */
#define DEFAULT_USR1 "--default-usr1"

/* A process that sends sig to this one (the launcher, not its child) once
 * the file ready exists (about 5 s at most), then creates sent, where not
 * NULL: waitpid it. */
static pid_t signal_when_ready(const char *ready, int sig, const char *sent)
{
	pid_t sender = fork();
	assert_true(sender >= 0);
	if (sender == 0) {
		for (int i = 0; i < 500 && access(ready, F_OK) != 0; i++)
			usleep(10000);
		kill(getppid(), sig);
		if (sent)
			close(open(sent, O_WRONLY | O_CREAT, 0644));
		_exit(0);
	}
	return sender;
}

static void run_forwards_signals(void **state)
{
	char ready[512], script[1024], err[256];
	test_path(ready, sizeof ready, "child-ready");
	unlink(ready);
	/* Exits 42 on SIGTERM, 9 if none comes within about 10 s. */
	snprintf(script, sizeof script,
		 "trap 'exit 42' TERM; : > '%s'; i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 9",
		 ready);
	pid_t sender = signal_when_ready(ready, SIGTERM, NULL);
	int killed_by;
	int status = run_sh(script, &killed_by, err, sizeof err);
	waitpid(sender, NULL, 0);
	assert_int_equal(status, 42);

	/* The launcher's own disposition is back to what it was. */
	struct sigaction sa;
	sigaction(SIGTERM, NULL, &sa);
	assert_true(sa.sa_handler == SIG_DFL);
}

/* Ignores SIGUSR1, as nohup would another signal; *old gets what was. */
static void ignore_usr1(struct sigaction *old)
{
	struct sigaction ign;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGUSR1, &ign, old);
}

/* Puts SIGUSR1's old action back; returns whether it was still ignored. */
static bool restore_usr1(const struct sigaction *old)
{
	struct sigaction now;
	sigaction(SIGUSR1, NULL, &now);
	sigaction(SIGUSR1, old, NULL);
	return now.sa_handler == SIG_IGN;
}

static void run_keeps_ignored_signals_ignored(void **state)
{
	char err[256];
	struct sigaction old;
	ignore_usr1(&old);
	/* Like nohup: the child inherits the ignoring and survives. */
	int killed_by;
	int status = run_sh("kill -USR1 $$; exit 5", &killed_by, err, sizeof err);
	assert_true(restore_usr1(&old));
	assert_int_equal(status, 5);
}

/* A signal the launcher ignores is not passed on, even to a child that
 * takes it (this binary, run as DEFAULT_USR1, resets it there, as a
 * program that sets its own handler would): a launcher under nohup, or
 * started with SIGUSR1 ignored, keeps the ignoring to itself. Passed on,
 * SIGUSR1 would kill the child (exit 138). */
static void run_does_not_forward_ignored_signals(void **state)
{
	char ready[512], sent[512], script[2048], err[256];
	test_path(ready, sizeof ready, "usr1-ready");
	test_path(sent, sizeof sent, "usr1-sent");
	unlink(ready);
	unlink(sent);
	/* Exits 5 a while after the signal was sent, 9 if it never was. */
	snprintf(script, sizeof script,
		 ": > '%s'; i=0; while [ ! -e '%s' ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
		 "[ -e '%s' ] || exit 9; sleep 0.3; exit 5",
		 ready, sent, sent);
	struct sigaction old;
	ignore_usr1(&old);
	pid_t sender = signal_when_ready(ready, SIGUSR1, sent);
	char *argv[] = { "/proc/self/exe", DEFAULT_USR1, "sh", "-c", script, NULL };
	int killed_by = -1;
	err[0] = '\0';
	int status = launch_run(argv, environ, NULL, NULL, &killed_by, err, sizeof err);
	waitpid(sender, NULL, 0);
	assert_true(restore_usr1(&old));
	assert_string_equal(err, "");
	assert_int_equal(status, 5);
	assert_int_equal(killed_by, 0);
}

static void find_library_in_libdir(void **state)
{
	char dir[512], file[600], out[PATH_MAX], err[1024] = "";
	test_path(dir, sizeof dir, "libdir");
	mkdir(dir, 0755);
	snprintf(file, sizeof file, "%s/libfake.so", dir);
	write_file(file, 0644);

	setenv("UMKIT_LIBDIR", dir, 1);
	assert_int_equal(launch_find_library("libfake.so", out, sizeof out, err, sizeof err), 0);
	assert_string_equal(out, file);

	/* UMKIT_LIBDIR's path is kept, links and all: a link can stand for a
	 * folder whose path LD_PRELOAD cannot express. A relative one is made
	 * absolute, for a program that changes folder. */
	char link[600], want[PATH_MAX + 32], cwd[PATH_MAX];
	test_path(link, sizeof link, "liblink");
	unlink(link);
	assert_int_equal(symlink(dir, link), 0);
	setenv("UMKIT_LIBDIR", link, 1);
	assert_int_equal(launch_find_library("libfake.so", out, sizeof out, err, sizeof err), 0);
	snprintf(want, sizeof want, "%s/libfake.so", link);
	assert_string_equal(out, want);
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(link), 0);
	setenv("UMKIT_LIBDIR", ".", 1);
	assert_int_equal(launch_find_library("libfake.so", out, sizeof out, err, sizeof err), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_true(out[0] == '/');
	assert_non_null(strstr(out, "/./libfake.so"));

	setenv("UMKIT_LIBDIR", "/nonexistent-umkit", 1);
	assert_int_equal(launch_find_library("libfake.so", out, sizeof out, err, sizeof err), -1);
	assert_non_null(strstr(err, "/nonexistent-umkit/libfake.so"));
	assert_non_null(strstr(err, "UMKIT_LIBDIR"));

	/* Without UMKIT_LIBDIR: next to this binary, naming both places. */
	unsetenv("UMKIT_LIBDIR");
	assert_int_equal(launch_find_library("libumkit-none.so", out, sizeof out, err, sizeof err), -1);
	assert_non_null(strstr(err, "/lib/libumkit-none.so"));
	assert_non_null(strstr(err, "/lib/umkit/libumkit-none.so"));
}

static void find_cupti_from_env(void **state)
{
	char dir[512], file[600], out[PATH_MAX], err[1024], real[PATH_MAX];
	test_path(dir, sizeof dir, "cupti");
	mkdir(dir, 0755);
	snprintf(file, sizeof file, "%s/libcupti.so.13", dir);
	write_file(file, 0644);
	assert_non_null(realpath(file, real));

	setenv("UMKIT_CUPTI", file, 1); /* a file */
	assert_int_equal(launch_find_cupti("/nonexistent/libumrec.so", out, sizeof out, err, sizeof err), 0);
	assert_string_equal(out, real);
	setenv("UMKIT_CUPTI", dir, 1); /* its folder */
	assert_int_equal(launch_find_cupti("/nonexistent/libumrec.so", out, sizeof out, err, sizeof err), 0);
	assert_string_equal(out, real);
	setenv("UMKIT_CUPTI", "/nonexistent-cupti", 1); /* used alone: no fallback */
	assert_int_equal(launch_find_cupti("/nonexistent/libumrec.so", out, sizeof out, err, sizeof err), -1);
	assert_non_null(strstr(err, "UMKIT_CUPTI=/nonexistent-cupti"));
	unsetenv("UMKIT_CUPTI");
}

static void find_cupti_through_runpath(void **state)
{
	/* umrec's DT_RUNPATH is $ORIGIN/../lib: a copy of it in D/lib stands in
	 * for an injected library whose libcupti lies in D/lib. */
	const char *build = getenv("UMKIT_BUILD");
	char umrec[PATH_MAX], cmd[3 * PATH_MAX], root[512], lib[600], cupti[700], out[PATH_MAX], err[2048];
	snprintf(umrec, sizeof umrec, "%s/bin/umrec", build ? build : "build");
	if (access(umrec, R_OK) != 0)
		fail_msg("%s is missing: build first (make all)", umrec);
	test_path(root, sizeof root, "rp");
	snprintf(lib, sizeof lib, "%s/lib", root);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s' '%s/libinjected.so'", lib, umrec, lib);
	assert_int_equal(system(cmd), 0);
	snprintf(cupti, sizeof cupti, "%s/libcupti.so", lib);
	write_file(cupti, 0644);

	char *saved = getenv("LD_LIBRARY_PATH") ? strdup(getenv("LD_LIBRARY_PATH")) : NULL;
	unsetenv("LD_LIBRARY_PATH"); /* it would come before the run path */
	snprintf(cmd, sizeof cmd, "%s/libinjected.so", lib);
	int rc = launch_find_cupti(cmd, out, sizeof out, err, sizeof err);
	if (saved) {
		setenv("LD_LIBRARY_PATH", saved, 1);
		free(saved);
	}
	assert_int_equal(rc, 0);
	char real[PATH_MAX];
	assert_non_null(realpath(cupti, real));
	assert_string_equal(out, real);
}

static void driver_check_names_the_problem(void **state)
{
	char err[512] = "";
	/* The answer the loader gives on this machine (on CI: no driver); a
	 * failure must say what is missing and who needs it. */
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	int rc = launch_check_driver("umrec", err, sizeof err);
	if (h) {
		dlclose(h);
		assert_int_equal(rc, 0);
	} else {
		assert_int_equal(rc, -1);
		assert_non_null(strstr(err, "no NVIDIA driver (libcuda.so.1 not found): umrec needs a GPU"));
	}
}

static void option_word_answers_help_and_version(void **state)
{
	char text[256] = "";
	FILE *out = tmpfile();
	assert_non_null(out);
	assert_int_equal(launch_option_word("--", "tool", "usage\n", out), LAUNCH_WORD_SEPARATOR);
	assert_int_equal(launch_option_word("python3", "tool", "usage\n", out), LAUNCH_WORD_COMMAND);
	/* "-" alone is a word of the command (stdin), not an option. */
	assert_int_equal(launch_option_word("-", "tool", "usage\n", out), LAUNCH_WORD_COMMAND);
	assert_int_equal(launch_option_word("--plan", "tool", "usage\n", out), LAUNCH_WORD_OPTION);
	assert_int_equal(launch_option_word("-q", "tool", "usage\n", out), LAUNCH_WORD_OPTION);
	assert_int_equal(ftell(out), 0);
	assert_int_equal(launch_option_word("-h", "tool", "usage\n", out), LAUNCH_WORD_EXIT);
	assert_int_equal(launch_option_word("--help", "tool", "usage\n", out), LAUNCH_WORD_EXIT);
	assert_int_equal(launch_option_word("--version", "tool", "usage\n", out), LAUNCH_WORD_EXIT);
	rewind(out);
	assert_true(fread(text, 1, sizeof text - 1, out) > 0);
	assert_string_equal(text, "usage\nusage\ntool (umkit) " UMKIT_VERSION "\n");
	fclose(out);
}

static void option_value_takes_every_form(void **state)
{
	char *argv[] = { "tool", "-ofile", "-o", "f2", "--output=f3", "--output", "f4", "--output", "--other", NULL };
	int argc = 9, i;
	const char *v = NULL;
	i = 1;
	assert_int_equal(launch_option_value(argc, argv, &i, "-o", "--output", &v), 1);
	assert_string_equal(v, "file");
	assert_int_equal(i, 1);
	i = 2;
	assert_int_equal(launch_option_value(argc, argv, &i, "-o", "--output", &v), 1);
	assert_string_equal(v, "f2");
	assert_int_equal(i, 3);
	i = 4;
	assert_int_equal(launch_option_value(argc, argv, &i, NULL, "--output", &v), 1);
	assert_string_equal(v, "f3");
	i = 5;
	assert_int_equal(launch_option_value(argc, argv, &i, NULL, "--output", &v), 1);
	assert_string_equal(v, "f4");
	assert_int_equal(i, 6);
	i = 8;
	assert_int_equal(launch_option_value(argc, argv, &i, "-o", "--output", &v), 0);
	/* --output as the last word: its value is missing. */
	i = 7;
	assert_int_equal(launch_option_value(argc - 1, argv, &i, NULL, "--output", &v), -1);
	/* A longer option that starts with the name is another option. */
	char *other[] = { "tool", "--outputs=x", NULL };
	i = 1;
	assert_int_equal(launch_option_value(2, other, &i, NULL, "--output", &v), 0);
}

/* The path the last check was asked about. */
static char checked[PATH_MAX];

/* Ours when it starts with x, in use when with a lock sign. */
static enum launch_owner starts_with_x(const char *path, FILE *f)
{
	snprintf(checked, sizeof checked, "%s", path);
	int c = fgetc(f);
	return c == 'x' ? LAUNCH_OWNER_OURS : c == '#' ? LAUNCH_OWNER_IN_USE : LAUNCH_OWNER_OTHER;
}

static void output_path_spares_other_files(void **state)
{
	char path[PATH_MAX], err[PATH_MAX + 256], file[512], dir[512];
	test_path(file, sizeof file, "out.bin");
	test_path(dir, sizeof dir, "adir");
	unlink(file);
	/* Absent: fine, and the path is absolute. */
	assert_int_equal(launch_output_path(file, "-o", "trace", starts_with_x, path, sizeof path,
					    err, sizeof err), 0);
	assert_true(path[0] == '/');
	/* Empty, or ours: may be replaced. */
	FILE *f = fopen(file, "w");
	fclose(f);
	assert_int_equal(launch_output_path(file, "-o", "trace", starts_with_x, path, sizeof path,
					    err, sizeof err), 0);
	f = fopen(file, "w");
	fputs("x marks ours", f);
	fclose(f);
	assert_int_equal(launch_output_path(file, "-o", "trace", starts_with_x, path, sizeof path,
					    err, sizeof err), 0);
	assert_string_equal(checked, path);
	/* Anything else, or not a regular file: refused, saying which. */
	f = fopen(file, "w");
	fputs("the user's thesis", f);
	fclose(f);
	assert_int_equal(launch_output_path(file, "-o", "trace", starts_with_x, path, sizeof path,
					    err, sizeof err), -1);
	assert_non_null(strstr(err, "exists and is not a trace file"));
	assert_non_null(strstr(err, "choose another -o"));
	/* In use by another process: refused as that, naming the file. */
	f = fopen(file, "w");
	fputs("# held", f);
	fclose(f);
	assert_int_equal(launch_output_path(file, "-o", "trace", starts_with_x, path, sizeof path,
					    err, sizeof err), -1);
	assert_non_null(strstr(err, "is in use by another process, which holds it locked"));
	assert_non_null(strstr(err, path));
	assert_null(strstr(err, "is not a trace file"));
	mkdir(dir, 0700);
	assert_int_equal(launch_output_path(dir, "--stats", "stats", starts_with_x, path, sizeof path,
					    err, sizeof err), -1);
	assert_non_null(strstr(err, "is not a stats file"));
	/* A folder in the path that is a file: said so, not "permission". */
	char under[600];
	snprintf(under, sizeof under, "%s/t.db", file);
	assert_int_equal(launch_output_path(under, "-o", "trace", starts_with_x, path, sizeof path,
					    err, sizeof err), -1);
	assert_non_null(strstr(err, "Not a directory"));
	unlink(file);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	/* What run_does_not_forward_ignored_signals starts: the rest of the
	 * command with SIGUSR1 at its default (coreutils' env
	 * --default-signal, which older ones lack). */
	if (argc > 2 && strcmp(argv[1], DEFAULT_USR1) == 0) {
		signal(SIGUSR1, SIG_DFL);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(env_edits_a_copy),
		cmocka_unit_test(inject_sets_the_variables),
		cmocka_unit_test(inject_keeps_the_preload_the_loader_reads),
		cmocka_unit_test(inject_respects_pytorch_setting),
		cmocka_unit_test(inject_turns_expandable_segments_off_with_the_cache),
		cmocka_unit_test(inject_rejects_unpreloadable_path),
		cmocka_unit_test(join_quotes_for_a_shell),
		cmocka_unit_test(unset_stale_keeps_launcher_settings),
		cmocka_unit_test(run_maps_exit_status),
		cmocka_unit_test(die_like_reraises_interrupts_only),
		cmocka_unit_test(check_program_matches_exec),
		cmocka_unit_test(run_reports_unrunnable_commands),
		cmocka_unit_test(run_tells_when_started),
		cmocka_unit_test(run_passes_env_and_argv),
		cmocka_unit_test(run_forwards_signals),
		cmocka_unit_test(run_keeps_ignored_signals_ignored),
		cmocka_unit_test(run_does_not_forward_ignored_signals),
		cmocka_unit_test(find_library_in_libdir),
		cmocka_unit_test(find_cupti_from_env),
		cmocka_unit_test(find_cupti_through_runpath),
		cmocka_unit_test(driver_check_names_the_problem),
		cmocka_unit_test(option_word_answers_help_and_version),
		cmocka_unit_test(option_value_takes_every_form),
		cmocka_unit_test(output_path_spares_other_files),
	};
	return cmocka_run_group_tests_name("launcher", tests, NULL, NULL);
}
