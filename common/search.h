/*
 * search.h: binary search in arrays sorted by a 64-bit key.
 *
 * The planner and the replayer keep many arrays of records sorted by one
 * integer field (an ordinal, an address, a time, an execution ID) and ask
 * where a key falls. Each question has one answer here: the index of the
 * first record whose key is at least key (lower bound) or greater than key
 * (upper bound); n when there is none. The n records of size bytes start at
 * base, and the key is the field at offset bytes into each record (0 and
 * the element size for a plain array), unsigned or signed. compare_u64
 * sorts a plain array of unsigned keys so, with qsort.
 */
#ifndef UMKIT_SEARCH_H
#define UMKIT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Arrays of size_t (positions) are searched as unsigned 64-bit keys. */
_Static_assert(sizeof(size_t) == sizeof(uint64_t), "size_t keys are searched as 64-bit keys");

/* The first index whose key is not before key; strictly: also not equal.
 * Keys are compared as unsigned after xor with sign: 0 for unsigned keys,
 * the sign bit for signed ones (which maps their order onto unsigned). */
static inline size_t search_bound(const void *base, size_t n, size_t size, size_t offset, uint64_t key,
				  uint64_t sign, bool strictly)
{
	size_t lo = 0, hi = n;
	key ^= sign;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;
		memcpy(&v, (const char *)base + mid * size + offset, sizeof v);
		v ^= sign;
		if (v < key || (strictly && v == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#define SEARCH_SIGNED (UINT64_C(1) << 63)

/* The size and offset arguments for an array of type keyed by field, which
 * must be 64 bits wide (a narrower one fails to compile). */
#define SEARCH_FIELD(type, field) \
	sizeof(type) + 0 * sizeof(char[sizeof(((type *)0)->field) == 8 ? 1 : -1]), offsetof(type, field)

static inline size_t lower_bound_u64(const void *base, size_t n, size_t size, size_t offset, uint64_t key)
{
	return search_bound(base, n, size, offset, key, 0, false);
}

static inline size_t upper_bound_u64(const void *base, size_t n, size_t size, size_t offset, uint64_t key)
{
	return search_bound(base, n, size, offset, key, 0, true);
}

static inline size_t lower_bound_i64(const void *base, size_t n, size_t size, size_t offset, int64_t key)
{
	return search_bound(base, n, size, offset, (uint64_t)key, SEARCH_SIGNED, false);
}

static inline size_t upper_bound_i64(const void *base, size_t n, size_t size, size_t offset, int64_t key)
{
	return search_bound(base, n, size, offset, (uint64_t)key, SEARCH_SIGNED, true);
}

/* qsort's comparison of two uint64_t, in ascending order. */
static inline int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

#endif
