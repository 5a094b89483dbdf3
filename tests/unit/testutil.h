/*
 * testutil.h: what every cmocka unit test includes.
 *
 * cmocka needs these system headers before cmocka.h; the helpers below are
 * for tests that need scratch files.
 */
#ifndef UMKIT_TESTUTIL_H
#define UMKIT_TESTUTIL_H

#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* A fresh scratch directory under $TMPDIR (or /tmp), created once per test
 * binary; returns "dir/name" in buf. */
static inline const char *test_path(char *buf, size_t len, const char *name)
{
	static char dir[256];
	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/umkit-test-XXXXXX", tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			abort();
		}
	}
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

/* The whole file at path, in a malloc'ed buffer (at least one byte) the
 * caller frees; *len is its length. Fails the test when it cannot be read. */
static inline void *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long end = ftell(f);
	assert_true(end >= 0);
	rewind(f);
	*len = (size_t)end;
	void *buf = malloc(*len ? *len : 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

/* Directory holding the fixtures, unpacked from tests/fixtures by make
 * fixtures: the UMKIT_FIXTURES environment variable that tests/run.sh sets
 * (BUILD/fixtures). */
static inline const char *test_fixture(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("UMKIT_FIXTURES");
	snprintf(buf, len, "%s/%s", dir ? dir : "build/fixtures", name);
	return buf;
}

/* Globs every fixture trace (the .db files test_fixture names) into g; fails
 * the test when there is none, since that is a broken build. The caller
 * calls globfree(g). */
static inline void test_glob_fixtures(glob_t *g)
{
	char pattern[512];
	test_fixture(pattern, sizeof pattern, "*.db");
	if (glob(pattern, 0, NULL, g) != 0)
		fail_msg("no fixture traces under %s", pattern);
}

/* Runs body in a child process, which has a copy of the test's static
 * state and dies alone: fails the test when body returns false, the child
 * dies (a stack overflow) or runs past 10 s (a hang). */
static inline void test_in_child(bool (*body)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(10);
		bool ok = body();
		fflush(NULL);
		_exit(ok ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("the case died of signal %d", WTERMSIG(status));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* stderr into a file while body runs; returns what was written. */
static inline char *stderr_of(void (*body)(void))
{
	static char text[4096];
	FILE *f = tmpfile();
	assert_non_null(f);
	fflush(stderr);
	int saved = dup(2);
	dup2(fileno(f), 2);
	body();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

#endif
