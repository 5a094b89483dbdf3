/*
 * busy.c: the union of intervals, and how much of a window it covers.
 */
#include <stdlib.h>

#include "busy.h"
#include "search.h"

static int by_start(const void *a, const void *b)
{
	const struct busy_interval *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

size_t busy_merge(struct busy_interval *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, by_start);
	size_t k = 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i].start <= v[k].end) {
			if (v[i].end > v[k].end)
				v[k].end = v[i].end;
		} else {
			v[++k] = v[i];
		}
	}
	return k + 1;
}

uint64_t busy_within(const struct busy_interval *merged, size_t n, uint64_t from, uint64_t to)
{
	uint64_t covered = 0;
	if (to <= from)
		return 0;
	/* Disjoint and ascending, so their ends ascend too: the first that
	 * ends after from is the first that can reach into the window. */
	for (size_t i = upper_bound_u64(merged, n, SEARCH_FIELD(struct busy_interval, end), from);
	     i < n && merged[i].start < to; i++) {
		uint64_t a = merged[i].start > from ? merged[i].start : from;
		uint64_t b = merged[i].end < to ? merged[i].end : to;
		covered += b - a;
	}
	return covered;
}
