/*
 * path_split.h: a path's folder and file name, for naming a file next to
 * it whose name holds the file's (a temporary, a folder to set it aside
 * in), cut so that the name with what is added stays within NAME_MAX.
 */
#ifndef UMKIT_PATH_SPLIT_H
#define UMKIT_PATH_SPLIT_H

#include <limits.h>
#include <string.h>

struct path_split {
	int dir_len;      /* path's folder, its slash included; 0 for none */
	const char *base; /* the file name, whole */
	int base_len;     /* of it, what fits NAME_MAX with affix more bytes */
};

static inline struct path_split path_split(const char *path, size_t affix)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t len = strlen(base), room = NAME_MAX - affix;
	return (struct path_split){ (int)(base - path), base, (int)(len < room ? len : room) };
}

#endif
