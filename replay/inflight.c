/* inflight.c: migrations not yet known complete (see inflight.h). */
#include "inflight.h"

#include <stdlib.h>
#include <string.h>

/* One range of one migration. Entries are appended in sequence order and
 * retired from the front; a migration whose ranges could not be stored is
 * one entry covering everything. */
struct entry {
	uint64_t seq;
	struct engine_range range;
};

struct inflight {
	struct entry *v;
	size_t head, n, cap; /* live entries: v[head .. n) */
	size_t max;
	uint64_t unknown;    /* newest migration whose ranges were lost, 0: none */
};

inflight *inflight_create(size_t max_ranges)
{
	inflight *f = calloc(1, sizeof *f);
	if (f)
		f->max = max_ranges;
	return f;
}

void inflight_destroy(inflight *f)
{
	if (f)
		free(f->v);
	free(f);
}

/* Room for more entries at the end, moving the live ones to the front
 * first when that makes enough. */
static bool reserve(inflight *f, size_t more)
{
	if (f->n + more <= f->cap)
		return true;
	if (f->n - f->head + more > f->max)
		return false;
	if (f->head) {
		memmove(f->v, f->v + f->head, (f->n - f->head) * sizeof *f->v);
		f->n -= f->head;
		f->head = 0;
		if (f->n + more <= f->cap)
			return true;
	}
	size_t cap = f->cap ? f->cap : 64;
	while (cap < f->n + more)
		cap *= 2;
	if (cap > f->max)
		cap = f->max;
	struct entry *v = realloc(f->v, cap * sizeof *v);
	if (!v)
		return false;
	f->v = v;
	f->cap = cap;
	return true;
}

bool inflight_add(inflight *f, uint64_t seq, const struct engine_range *r, size_t n)
{
	if (!reserve(f, n)) {
		f->unknown = seq;
		return false;
	}
	for (size_t i = 0; i < n; i++)
		f->v[f->n++] = (struct entry){ seq, r[i] };
	return true;
}

void inflight_retire(inflight *f, uint64_t seq)
{
	while (f->head < f->n && f->v[f->head].seq <= seq)
		f->head++;
	if (f->head == f->n)
		f->head = f->n = 0;
	if (f->unknown <= seq)
		f->unknown = 0;
}

uint64_t inflight_oldest(const inflight *f)
{
	uint64_t oldest = f->head < f->n ? f->v[f->head].seq : 0;
	if (f->unknown && (!oldest || f->unknown < oldest))
		oldest = f->unknown;
	return oldest;
}

static bool overlaps(const struct engine_range *a, const struct engine_range *b)
{
	return a->bytes && b->bytes && a->address < b->address + b->bytes && b->address < a->address + a->bytes;
}

uint64_t inflight_newest(const inflight *f, const struct engine_range *r, size_t n)
{
	uint64_t newest = f->unknown;
	for (size_t e = f->n; e > f->head && f->v[e - 1].seq > newest; e--)
		for (size_t i = 0; i < n; i++)
			if (overlaps(&f->v[e - 1].range, &r[i]))
				return f->v[e - 1].seq;
	return newest;
}
