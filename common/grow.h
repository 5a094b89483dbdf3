/*
 * grow.h: room for one more element in an array that doubles as it fills.
 */
#ifndef UMKIT_GROW_H
#define UMKIT_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* v (n elements of size bytes, room for *cap) with room for element n: v
 * itself while n < *cap, else v moved by realloc with *cap doubled (first
 * when it was 0). NULL when memory ran out: v and *cap are left as they
 * were, and the caller decides what to give up. */
static inline void *room_for_one(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	if (n < *cap)
		return v;
	size_t grown = *cap ? 2 * *cap : first;
	void *p = realloc(v, grown * size);
	if (p)
		*cap = grown;
	return p;
}

#endif
