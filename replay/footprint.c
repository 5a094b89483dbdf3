/*
 * footprint.c: the block set of an idle engine (see footprint.h).
 */
#include "footprint.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "minmax.h"
#include "search.h"

struct interval {
	uint64_t lo, hi; /* blocks [lo, hi) */
};

struct footprint {
	struct interval *v; /* sorted; never overlapping or touching */
	size_t n, cap;
	uint64_t blocks;
};

footprint *footprint_create(void)
{
	return calloc(1, sizeof(footprint));
}

void footprint_destroy(footprint *f)
{
	if (!f)
		return;
	free(f->v);
	free(f);
}

/* The first interval whose end is at or after `block` (n if none). */
static size_t first_ending_at_or_after(const footprint *f, uint64_t block)
{
	return lower_bound_u64(f->v, f->n, SEARCH_FIELD(struct interval, hi), block);
}

uint64_t footprint_missing(const footprint *f, uint64_t first, uint64_t n)
{
	uint64_t end = first + n, missing = n;
	for (size_t i = first_ending_at_or_after(f, first); i < f->n && f->v[i].lo < end; i++)
		if (f->v[i].hi > first)
			missing -= min_u64(f->v[i].hi, end) - max_u64(f->v[i].lo, first);
	return missing;
}

int footprint_add(footprint *f, uint64_t first, uint64_t n)
{
	if (!n)
		return 0;
	uint64_t end = first + n;
	/* Intervals [i, j) overlap or touch the new one: they merge with it. */
	size_t i = first_ending_at_or_after(f, first), j = i;
	while (j < f->n && f->v[j].lo <= end)
		j++;
	if (i == j) {
		struct interval *v = room_for_one(f->v, f->n, &f->cap, sizeof *v, 16);
		if (!v)
			return -1;
		f->v = v;
		memmove(&f->v[i + 1], &f->v[i], (f->n - i) * sizeof *f->v);
		f->v[i] = (struct interval){ first, end };
		f->n++;
		f->blocks += n;
		return 0;
	}
	struct interval merged = { min_u64(f->v[i].lo, first), max_u64(f->v[j - 1].hi, end) };
	for (size_t k = i; k < j; k++)
		f->blocks -= f->v[k].hi - f->v[k].lo;
	f->blocks += merged.hi - merged.lo;
	f->v[i] = merged;
	memmove(&f->v[i + 1], &f->v[j], (f->n - j) * sizeof *f->v);
	f->n -= j - i - 1;
	return 0;
}

uint64_t footprint_blocks(const footprint *f)
{
	return f->blocks;
}

bool footprint_interval(const footprint *f, size_t i, uint64_t *first, uint64_t *n)
{
	if (i >= f->n)
		return false;
	*first = f->v[i].lo;
	*n = f->v[i].hi - f->v[i].lo;
	return true;
}
