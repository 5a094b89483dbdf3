/* pending_discards.c: discards waiting for their markers (see pending_discards.h). */
#include "pending_discards.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "replay/blocktab.h"

struct pending {
	uint64_t mark;
	struct engine_range range;
};

struct pending_discards {
	pthread_mutex_t lock;
	size_t n, cap;
	atomic_size_t count; /* n, readable without the lock */
	struct pending *items;
};

pending_discards *pending_discards_create(size_t cap)
{
	pending_discards *p = calloc(1, sizeof *p);
	if (p && !(p->items = calloc(cap ? cap : 1, sizeof *p->items))) {
		free(p);
		return NULL;
	}
	if (p) {
		pthread_mutex_init(&p->lock, NULL);
		p->cap = cap;
	}
	return p;
}

void pending_discards_destroy(pending_discards *p)
{
	if (!p)
		return;
	pthread_mutex_destroy(&p->lock);
	free(p->items);
	free(p);
}

bool pending_discards_add(pending_discards *p, uint64_t mark, struct engine_range r)
{
	pthread_mutex_lock(&p->lock);
	bool room = p->n < p->cap;
	if (room) {
		p->items[p->n++] = (struct pending){ mark, r };
		atomic_store(&p->count, p->n);
	}
	pthread_mutex_unlock(&p->lock);
	return room;
}

/* Keeps the items keep() accepts, in order; returns how many went. */
static size_t filter(pending_discards *p, bool (*keep)(const struct pending *, void *), void *arg)
{
	size_t kept = 0, n = p->n;
	for (size_t i = 0; i < n; i++)
		if (keep(&p->items[i], arg))
			p->items[kept++] = p->items[i];
	p->n = kept;
	atomic_store(&p->count, kept);
	return n - kept;
}

static bool not_empty(const struct pending *it, void *arg)
{
	return it->range.bytes != 0;
}

/* Cuts w, a run of whole blocks that it overlaps, out of it: the part
 * before stays in its place, the part after takes its place or, where both
 * are left, a free slot at the end (none free: that part goes undiscarded).
 * Nothing left: empty. Returns the runs of blocks left undiscarded: 1, or 2
 * where the part after found no slot. Worked out by last bytes, so that
 * a range may end at 2^64. */
static size_t cut(pending_discards *p, struct pending *it, struct engine_range w)
{
	uint64_t start = it->range.address, last = start + (it->range.bytes - 1);
	uint64_t w_last = w.address + (w.bytes - 1);
	struct engine_range after = { w_last + 1, last > w_last ? last - w_last : 0 };
	if (start >= w.address) {
		it->range = after;
		return 1;
	}
	it->range.bytes = w.address - start;
	if (!after.bytes)
		return 1;
	if (p->n == p->cap)
		return 2;
	p->items[p->n++] = (struct pending){ it->mark, after };
	return 1;
}

size_t pending_discards_forget(pending_discards *p, uint64_t address, uint64_t bytes)
{
	if (!bytes || !atomic_load(&p->count))
		return 0;
	/* The blocks [address, address + bytes) overlaps; block_end wraps to
	 * 0 for the last block of the address space, and so does the
	 * subtraction, to its size. */
	uint64_t from = address & ~(BLOCK_BYTES - 1);
	struct engine_range w = { from, block_end(address + bytes - 1) - from };
	size_t runs = 0;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0, n = p->n; i < n; i++)
		if (engine_ranges_overlap(&p->items[i].range, &w))
			runs += cut(p, &p->items[i], w);
	filter(p, not_empty, NULL);
	pthread_mutex_unlock(&p->lock);
	return runs;
}

struct take {
	bool (*done)(uint64_t mark);
	struct engine_range *out;
	size_t n, max;
};

static bool not_taken(const struct pending *it, void *arg)
{
	struct take *t = arg;
	if (t->n == t->max || !t->done(it->mark))
		return true;
	t->out[t->n++] = it->range;
	return false;
}

size_t pending_discards_take_ready(pending_discards *p, bool (*done)(uint64_t mark),
				   struct engine_range *out, size_t max)
{
	struct take t = { done, out, 0, max };
	pthread_mutex_lock(&p->lock);
	filter(p, not_taken, &t);
	pthread_mutex_unlock(&p->lock);
	return t.n;
}

static bool kept_none(const struct pending *it, void *arg)
{
	return false;
}

size_t pending_discards_clear(pending_discards *p)
{
	pthread_mutex_lock(&p->lock);
	size_t n = filter(p, kept_none, NULL);
	pthread_mutex_unlock(&p->lock);
	return n;
}

size_t pending_discards_count(pending_discards *p)
{
	return atomic_load(&p->count);
}
