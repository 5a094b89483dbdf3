/* replace_file.c: write a file whole or not at all (see replace_file.h). */
#include "replace_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "path_split.h"

/* The mode the new contents get: the earlier file's where there is one,
 * else what creating the file would give, 0666 less the umask. The umask
 * is read from /proc (022 where it cannot be): umask() answers only by
 * setting it, which the program's other threads would see meanwhile. */
static mode_t new_mode(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0)
		return st.st_mode & 07777;
	unsigned mask = 022;
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f) && sscanf(line, "Umask: %o", &mask) != 1)
		;
	if (f)
		fclose(f);
	return 0666 & ~(mode_t)mask;
}

static void release(struct replace_file *r)
{
	free(r->path);
	free(r->tmp);
	*r = (struct replace_file){ 0 };
}

int replace_file_begin(struct replace_file *r, const char *path, char *err, size_t errlen)
{
	static const char suffix[] = REPLACE_FILE_SUFFIX;
	*r = (struct replace_file){ 0 };
	size_t len = strlen(path) + sizeof suffix;
	r->path = strdup(path);
	r->tmp = malloc(len);
	if (!r->path || !r->tmp) {
		um_errmsg(err, errlen, "%s: out of memory", path);
		release(r);
		return -1;
	}
	struct path_split p = path_split(path, sizeof suffix - 1);
	snprintf(r->tmp, len, "%.*s%.*s%s", p.dir_len, path, p.base_len, p.base, suffix);
	int fd = mkstemp(r->tmp);
	if (fd < 0) {
		um_errmsg(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		release(r);
		return -1;
	}
	/* mkstemp creates 0600. */
	if (fchmod(fd, new_mode(path)) != 0 || !(r->f = fdopen(fd, "w"))) {
		um_errmsg(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		close(fd);
		unlink(r->tmp);
		release(r);
		return -1;
	}
	return 0;
}

/* Flushes f to the disk and closes it. 0, or the errno of the first step
 * that failed: EIO where only stdio's error flag tells of an earlier
 * write that failed. */
static int flush_and_close(FILE *f)
{
	int problem = 0;
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		problem = errno;
	else if (ferror(f))
		problem = EIO;
	if (fclose(f) != 0 && !problem)
		problem = errno;
	return problem;
}

/* On a failure: err says so, and the temporary goes. */
static int fail(struct replace_file *r, int problem, char *err, size_t errlen)
{
	um_errmsg(err, errlen, "%s: cannot write: %s", r->path, strerror(problem));
	unlink(r->tmp);
	release(r);
	return -1;
}

int replace_file_finish(struct replace_file *r, char *err, size_t errlen)
{
	int problem = flush_and_close(r->f);
	r->f = NULL;
	return problem ? fail(r, problem, err, errlen) : 0;
}

int replace_file_commit(struct replace_file *r, char *err, size_t errlen)
{
	if (r->f && replace_file_finish(r, err, errlen) != 0)
		return -1;
	if (rename(r->tmp, r->path) != 0)
		return fail(r, errno, err, errlen);
	release(r);
	return 0;
}

void replace_file_abandon(struct replace_file *r)
{
	if (!r->tmp)
		return;
	if (r->f)
		fclose(r->f);
	unlink(r->tmp);
	release(r);
}
