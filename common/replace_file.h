/*
 * replace_file.h: write a file whole or not at all. The new contents go to
 * a temporary next to the file (so that the rename stays on one file
 * system), flushed to the disk, and replace the file only at the commit: a
 * failed or interrupted write leaves the earlier file as it was and
 * nothing that looks complete.
 */
#ifndef UMKIT_REPLACE_FILE_H
#define UMKIT_REPLACE_FILE_H

#include <stddef.h>
#include <stdio.h>

/* What replace_file_begin adds to the file's name for its temporary. */
#define REPLACE_FILE_SUFFIX ".tmp.XXXXXX"

struct replace_file {
	FILE *f;    /* write the new contents here */
	char *path; /* the file replaced */
	char *tmp;  /* the temporary, path.tmp.XXXXXX */
};

/* Creates the temporary for path, with the earlier file's mode, or where
 * there is none the mode creating it would give (0666 less the umask). 0,
 * or -1 with err naming path and the problem. */
int replace_file_begin(struct replace_file *r, const char *path, char *err, size_t errlen);

/* Flushes the temporary to the disk and closes it, for a caller that
 * replaces several files only once all of them are whole. 0, or -1 with
 * err naming path and the problem (a write that failed earlier included),
 * the temporary removed and r done with. */
int replace_file_finish(struct replace_file *r, char *err, size_t errlen);

/* Finishes the temporary, if that is still to do, and renames it to path.
 * 0, or -1 with err naming path and the problem, the temporary removed.
 * Either way r is done with. */
int replace_file_commit(struct replace_file *r, char *err, size_t errlen);

/* Removes the temporary, leaving path as it was; nothing for an r done
 * with. */
void replace_file_abandon(struct replace_file *r);

#endif
