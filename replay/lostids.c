/* lostids.c: counting lost execution IDs (lostids.h): the iteration's in a
 * list, kept ones in a fixed open-addressing table of twice LOSTIDS_CAP
 * slots, linear probing. */
#include "lostids.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS (2 * LOSTIDS_CAP)

struct lostids {
	struct lost_id slot[SLOTS]; /* exec_id 0: empty (0 is never an ID) */
	struct lost_totals tot;
	uint64_t pending[LOSTIDS_PENDING];
	size_t n_pending;
	uint64_t pending_launches; /* held or not */
};

lostids *lostids_create(void)
{
	return calloc(1, sizeof(lostids));
}

void lostids_destroy(lostids *l)
{
	free(l);
}

void lostids_count(lostids *l, uint64_t exec_id)
{
	l->pending_launches++;
	if (exec_id && l->n_pending < LOSTIDS_PENDING)
		l->pending[l->n_pending++] = exec_id;
}

static void keep(lostids *l, uint64_t exec_id)
{
	size_t i = (size_t)((exec_id * 0x9e3779b97f4a7c15ULL) >> 32) % SLOTS;
	while (l->slot[i].exec_id && l->slot[i].exec_id != exec_id)
		i = (i + 1) % SLOTS;
	if (!l->slot[i].exec_id) {
		if (l->tot.distinct == LOSTIDS_CAP)
			return;
		l->slot[i].exec_id = exec_id;
		l->tot.distinct++;
	}
	l->slot[i].launches++;
}

void lostids_iteration_end(lostids *l, bool keep_them)
{
	if (keep_them) {
		l->tot.launches += l->pending_launches;
		for (size_t i = 0; i < l->n_pending; i++)
			keep(l, l->pending[i]);
	}
	l->n_pending = 0;
	l->pending_launches = 0;
}

static int by_launches_down(const void *a, const void *b)
{
	const struct lost_id *x = a, *y = b;
	if (x->launches != y->launches)
		return x->launches > y->launches ? -1 : 1;
	return (x->exec_id > y->exec_id) - (x->exec_id < y->exec_id);
}

size_t lostids_top(const lostids *l, struct lost_id *out, size_t max, struct lost_totals *tot)
{
	/* Sorted in a copy off the stack (16 KiB): this runs at the exit, on
	 * the thread that called exit(). Without memory for it, none listed. */
	*tot = l->tot;
	struct lost_id *all = malloc(LOSTIDS_CAP * sizeof *all);
	if (!all)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < SLOTS; i++)
		if (l->slot[i].exec_id)
			all[n++] = l->slot[i];
	qsort(all, n, sizeof *all, by_launches_down);
	size_t k = n < max ? n : max;
	if (k)
		memcpy(out, all, k * sizeof *out);
	free(all);
	return k;
}
