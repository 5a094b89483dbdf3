/*
 * set_aside.h: an earlier output kept while a program starts. A launcher
 * that hands the program a path to write (umrec's trace, umreplay's
 * stats) must not leave an earlier file there to pass for the run's, nor
 * lose it when the program cannot even start: no check made beforehand
 * foresees every reason an exec fails (an ELF program's missing
 * interpreter, an environment too large). So the earlier files are moved
 * into a new folder next to path (.NAME.earlier-XXXXXX, on the same file
 * system, so each move is a rename), put back when the exec fails, and
 * deleted once the program runs (launch_run's started).
 *
 * A file set is path + each of its suffixes ("" for path itself): a
 * trace's -wal, -shm and -journal go with it, and keep their names, so
 * that SQLite still pairs them.
 */
#ifndef UMKIT_SET_ASIDE_H
#define UMKIT_SET_ASIDE_H

#include <stdbool.h>
#include <stddef.h>

struct file_set {
	const char *const *suffixes;
	size_t n;
	const char *what; /* for messages: "trace", "stats" */
};

/* Moves the files of set at path that exist into a new folder next to
 * path, and writes where path now is into aside, or "" when nothing is at
 * path (then nothing is made). Returns 0, or -1 with err naming the file
 * (nothing is moved then, aside is ""). */
int set_aside(const char *path, const struct file_set *set, char *aside, size_t asidelen, char *err,
	      size_t errlen);

/* Moves the files set aside at aside ("": none) back to path and removes
 * their folder. Returns 0, or -1 with err (what is left stays there). */
int set_aside_put_back(const char *aside, const char *path, const struct file_set *set, char *err,
		       size_t errlen);

/* Deletes the files set aside at aside ("": none) and their folder.
 * Returns 0, or -1 with err naming the file. */
int set_aside_drop(const char *aside, const struct file_set *set, char *err, size_t errlen);

/* An output's earlier files kept across launch_run: set aside before it
 * (kept_output_begin), dropped once the program runs (kept_output_started,
 * launch_run's started, with k its ctx), put back after it when the
 * program never ran (kept_output_end). */
struct kept_output {
	const char *path;
	const struct file_set *set;
	char aside[4096]; /* where they are: "" none, or dropped */
};

/* Sets the earlier files of set at path aside into k. 0, or -1 with err
 * naming the file (nothing moved). */
int kept_output_begin(struct kept_output *k, const char *path, const struct file_set *set, char *err,
		      size_t errlen);

/* The program runs: the earlier files go. A failure is warned of. */
void kept_output_started(void *k);

/* After launch_run: earlier files not dropped go back to the path. A
 * failure is said, naming where they stay. */
void kept_output_end(struct kept_output *k);

/* Removes the files of set at path, or with keep_main all but path
 * itself. Returns 0, or -1 with err naming the file. */
int set_remove(const char *path, const struct file_set *set, bool keep_main, char *err, size_t errlen);

#endif
