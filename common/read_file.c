/* read_file.c: read a regular file whole (see read_file.h). */
#include "read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum read_result judge_and_read(int fd, uint64_t max_bytes, struct read_file *out)
{
	if (fstat(fd, &out->st) != 0)
		out->st.st_mode = 0; /* nothing known of it: not a regular file */
	if (!S_ISREG(out->st.st_mode))
		return READ_NOT_REGULAR;
	if ((uint64_t)out->st.st_size > max_bytes)
		return READ_TOO_LARGE;
	size_t size = (size_t)out->st.st_size;
	if (!(out->data = malloc(size + 1)))
		return READ_NO_MEMORY;
	while (out->len < size) {
		ssize_t k = read(fd, out->data + out->len, size - out->len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			out->error = errno;
			free(out->data);
			out->data = NULL;
			return READ_FAILED;
		}
		if (k == 0)
			break;
		out->len += (size_t)k;
	}
	out->data[out->len] = '\0';
	return READ_OK;
}

enum read_result read_regular_file(const char *path, uint64_t max_bytes, struct read_file *out)
{
	*out = (struct read_file){ 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		out->error = errno;
		return READ_CANNOT_OPEN;
	}
	enum read_result r = judge_and_read(fd, max_bytes, out);
	close(fd);
	return r;
}
