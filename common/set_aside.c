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
#include "minmax.h"
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

/* The folder set_aside makes for path's files, its name less the
 * mkdtemp suffix, into out: ".NAME.earlier-" next to path, NAME cut to fit
 * NAME_MAX. False when it does not fit len. */
static bool folder_stem(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int keep = (int)min_u64(strlen(base), NAME_MAX - (sizeof "..earlier-XXXXXX" - 1));
	return (size_t)snprintf(out, len, "%.*s.%.*s.earlier-", (int)(base - path), path, keep, base) < len;
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
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char folder[4096];
	if (!folder_stem(path, folder, sizeof folder - strlen("XXXXXX")) ||
	    (size_t)snprintf(aside, asidelen, "%sXXXXXX/%s", folder, base) >= asidelen) {
		um_errmsg(err, errlen, "%s: path too long", path);
		aside[0] = '\0';
		return -1;
	}
	strcat(folder, "XXXXXX");
	if (!mkdtemp(folder)) {
		um_errmsg(err, errlen, "cannot make %s to keep the earlier %s %s in: %s", folder, set->what, path,
			  strerror(errno));
		aside[0] = '\0';
		return -1;
	}
	snprintf(aside, asidelen, "%s/%s", folder, base);
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
	char stem[4096], dir[4096];
	if (!folder_stem(path, stem, sizeof stem))
		return;
	const char *slash = strrchr(stem, '/');
	const char *prefix = slash ? slash + 1 : stem;
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - stem) + 1 : 1, slash ? stem : ".");
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			um_warn("%.*s%s holds an earlier %s of %s, set aside by a run killed before it dropped it "
				"or put it back: it is left to you", (int)(prefix - stem), stem, e->d_name, set->what,
				path);
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
