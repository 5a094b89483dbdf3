/* set_aside.c: an earlier output kept while a program starts (see set_aside.h). */
#include "set_aside.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "path_split.h"
#include "log.h"

/* path + suffix i of set into out; -1 with err when too long. */
static int member(const char *path, const struct file_set *set, size_t i, char *out, size_t outlen, char *err,
		  size_t errlen)
{
	if ((size_t)snprintf(out, outlen, "%s%s", path, set->suffixes[i]) < outlen)
		return 0;
	um_errmsg(err, errlen, "%s: path too long", path);
	return -1;
}

int set_remove(const char *path, const struct file_set *set, bool keep_main, char *err, size_t errlen)
{
	for (size_t i = keep_main ? 1 : 0; i < set->n; i++) {
		char p[4096];
		if (member(path, set, i, p, sizeof p, err, errlen) != 0)
			return -1;
		if (unlink(p) != 0 && errno != ENOENT) {
			um_errmsg(err, errlen, "%s: cannot remove the earlier %s: %s", p, set->what, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Renames each file of set at from that exists to the same one at to. On
 * failure err names the file, and those already renamed stay so. */
static int move_set(const char *from, const char *to, const struct file_set *set, char *err, size_t errlen)
{
	for (size_t i = 0; i < set->n; i++) {
		char src[4096], dst[4096];
		if (member(from, set, i, src, sizeof src, err, errlen) != 0 ||
		    member(to, set, i, dst, sizeof dst, err, errlen) != 0)
			return -1;
		if (rename(src, dst) != 0 && errno != ENOENT) {
			um_errmsg(err, errlen, "cannot move %s to %s: %s", src, dst, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Removes the folder of aside, which holds nothing else by now. */
static int remove_folder(const char *aside, char *err, size_t errlen)
{
	char folder[4096];
	snprintf(folder, sizeof folder, "%s", aside);
	*strrchr(folder, '/') = '\0';
	if (rmdir(folder) == 0)
		return 0;
	um_errmsg(err, errlen, "cannot remove %s: %s", folder, strerror(errno));
	return -1;
}

/* The name of the folder set_aside makes next to path, less its mkdtemp
 * suffix, into prefix (NAME_MAX + 1 bytes): ".NAME.earlier-", NAME path's
 * file name cut to fit. Returns path's parts. */
static struct path_split folder_prefix(const char *path, char *prefix)
{
	struct path_split p = path_split(path, sizeof "..earlier-XXXXXX" - 1);
	snprintf(prefix, NAME_MAX + 1, ".%.*s.earlier-", p.base_len, p.base);
	return p;
}

int set_aside(const char *path, const struct file_set *set, char *aside, size_t asidelen, char *err,
	      size_t errlen)
{
	struct stat st;
	aside[0] = '\0';
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		um_errmsg(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* A folder of its own, so that nothing in it can be overwritten. */
	char prefix[NAME_MAX + 1], folder[4096];
	struct path_split p = folder_prefix(path, prefix);
	if ((size_t)snprintf(folder, sizeof folder, "%.*s%sXXXXXX", p.dir_len, path, prefix) >= sizeof folder ||
	    (size_t)snprintf(aside, asidelen, "%s/%s", folder, p.base) >= asidelen) {
		um_errmsg(err, errlen, "%s: path too long", path);
		aside[0] = '\0';
		return -1;
	}
	if (!mkdtemp(folder)) {
		um_errmsg(err, errlen, "cannot make %s to keep the earlier %s %s in: %s", folder, set->what, path,
			  strerror(errno));
		aside[0] = '\0';
		return -1;
	}
	snprintf(aside, asidelen, "%s/%s", folder, p.base);
	if (move_set(path, aside, set, err, errlen) != 0) {
		char ignored[512];
		move_set(aside, path, set, ignored, sizeof ignored);
		rmdir(folder);
		aside[0] = '\0';
		return -1;
	}
	return 0;
}

int set_aside_put_back(const char *aside, const char *path, const struct file_set *set, char *err,
		       size_t errlen)
{
	if (!*aside)
		return 0;
	if (move_set(aside, path, set, err, errlen) != 0)
		return -1;
	return remove_folder(aside, err, errlen);
}

int set_aside_drop(const char *aside, const struct file_set *set, char *err, size_t errlen)
{
	if (!*aside)
		return 0;
	if (set_remove(aside, set, 0, err, errlen) != 0)
		return -1;
	return remove_folder(aside, err, errlen);
}

/* Names the folders of earlier files set aside for path that a run
 * killed before it dropped or put them back left behind: nothing else
 * points to them. */
static void warn_left_aside(const char *path, const struct file_set *set)
{
	char prefix[NAME_MAX + 1], dir[4096];
	struct path_split p = folder_prefix(path, prefix);
	size_t n = strlen(prefix);
	snprintf(dir, sizeof dir, "%.*s", p.dir_len ? p.dir_len : 1, p.dir_len ? path : ".");
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (strncmp(e->d_name, prefix, n) == 0)
			um_warn("%.*s%s holds an earlier %s of %s, set aside by a run killed before it dropped it "
				"or put it back: it is left to you", p.dir_len, path, e->d_name, set->what, path);
	if (d)
		closedir(d);
}

int kept_output_begin(struct kept_output *k, const char *path, const struct file_set *set, char *err,
		      size_t errlen)
{
	k->path = path;
	k->set = set;
	warn_left_aside(path, set);
	return set_aside(path, set, k->aside, sizeof k->aside, err, errlen);
}

void kept_output_started(void *kept)
{
	struct kept_output *k = kept;
	char err[4096];
	if (set_aside_drop(k->aside, k->set, err, sizeof err) != 0)
		um_warn("%s", err);
	k->aside[0] = '\0';
}

void kept_output_end(struct kept_output *k)
{
	char err[4096];
	if (set_aside_put_back(k->aside, k->path, k->set, err, sizeof err) != 0)
		um_error("%s; the earlier %s of %s stays at %s", err, k->set->what, k->path, k->aside);
}
