/*
 * grow.h: room for more elements in an array that doubles as it fills.
 */
#ifndef UMKIT_GROW_H
#define UMKIT_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* v (n elements of size bytes, room for *cap) with room for elements n ..
 * n + more - 1: v itself while they fit, else v moved by realloc with *cap
 * doubled until they do (from first, which is not 0, when *cap was 0).
 * NULL when memory ran out, or when that many elements would not fit in a
 * size_t of bytes: v and *cap are left as they were, and the caller
 * decides what to give up. */
static inline void *room_for(void *v, size_t n, size_t more, size_t *cap, size_t size, size_t first)
{
	if (more > SIZE_MAX - n)
		return NULL;
	size_t need = n + more;
	if (need <= *cap)
		return v;
	size_t grown = *cap ? *cap : first;
	while (grown < need)
		grown = grown > SIZE_MAX / 2 ? need : grown * 2;
	if (grown > SIZE_MAX / size)
		return NULL;
	void *p = realloc(v, grown * size);
	if (p)
		*cap = grown;
	return p;
}

/* room_for one element more. */
static inline void *room_for_one(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	return room_for(v, n, 1, cap, size, first);
}

#endif
