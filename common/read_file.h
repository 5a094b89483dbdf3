/*
 * read_file.h: read a regular file whole. The file is opened non-blocking
 * and judged before anything is read, so that a FIFO or a device named by
 * mistake is refused rather than waited on for ever or read without end;
 * the caller words each refusal.
 */
#ifndef UMKIT_READ_FILE_H
#define UMKIT_READ_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

enum read_result {
	READ_OK,
	READ_CANNOT_OPEN, /* error: open's errno */
	READ_NOT_REGULAR, /* st.st_mode says what it is (0: fstat failed) */
	READ_TOO_LARGE,   /* st.st_size is over the limit */
	READ_NO_MEMORY,
	READ_FAILED,      /* error: read's errno */
};

struct read_file {
	unsigned char *data; /* malloc'ed, with a NUL after it; the caller frees */
	size_t len;          /* what was read: a file that shrank is what it held */
	struct stat st;
	int error;
};

/* Reads the regular file at path whole, if it holds at most max_bytes,
 * into out (out->data NULL unless READ_OK). */
enum read_result read_regular_file(const char *path, uint64_t max_bytes, struct read_file *out);

#endif
