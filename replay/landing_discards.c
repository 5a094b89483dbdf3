/* landing_discards.c: discards that may be in flight (see landing_discards.h). */
#include "landing_discards.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct landing {
	struct engine_range range;
	uint64_t batch;
};

struct landing_discards {
	pthread_mutex_t lock;
	struct landing *r; /* in issue order: batch numbers never decrease */
	size_t n;
	uint64_t batches;   /* the newest batch's number */
	uint64_t forgotten; /* the newest batch some of whose ranges were dropped unlanded */
	uint64_t landed;    /* every batch up to it has landed */
};

landing_discards *landing_discards_create(void)
{
	landing_discards *l = calloc(1, sizeof *l);
	if (l && !(l->r = calloc(LANDING_MAX_RANGES, sizeof *l->r))) {
		free(l);
		return NULL;
	}
	if (l)
		pthread_mutex_init(&l->lock, NULL);
	return l;
}

void landing_discards_destroy(landing_discards *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l->r);
	free(l);
}

/* Drops the k oldest ranges; the lock held. */
static void drop(landing_discards *l, size_t k)
{
	memmove(l->r, l->r + k, (l->n - k) * sizeof *l->r);
	l->n -= k;
}

uint64_t landing_discards_issued(landing_discards *l, const struct engine_range *r, size_t n)
{
	pthread_mutex_lock(&l->lock);
	uint64_t batch = ++l->batches;
	if (n > LANDING_MAX_RANGES) { /* forgotten whole: every query waits for it */
		l->forgotten = batch;
		n = 0;
	}
	if (l->n + n > LANDING_MAX_RANGES) {
		/* Half the table at least, so that dropping stays rare. */
		size_t k = l->n + n - LANDING_MAX_RANGES;
		if (k < LANDING_MAX_RANGES / 2)
			k = l->n < LANDING_MAX_RANGES / 2 ? l->n : LANDING_MAX_RANGES / 2;
		if (l->r[k - 1].batch > l->forgotten)
			l->forgotten = l->r[k - 1].batch;
		drop(l, k);
	}
	for (size_t i = 0; i < n; i++)
		l->r[l->n++] = (struct landing){ r[i], batch };
	pthread_mutex_unlock(&l->lock);
	return batch;
}

uint64_t landing_discards_wait_for(landing_discards *l, uint64_t address, uint64_t bytes)
{
	pthread_mutex_lock(&l->lock);
	uint64_t need = l->forgotten > l->landed ? l->forgotten : 0;
	for (size_t i = l->n; i-- > 0 && l->r[i].batch > need;)
		if (engine_ranges_overlap(&(struct engine_range){ address, bytes }, &l->r[i].range))
			need = l->r[i].batch;
	pthread_mutex_unlock(&l->lock);
	return need;
}

void landing_discards_landed(landing_discards *l, uint64_t batch)
{
	pthread_mutex_lock(&l->lock);
	if (batch > l->landed)
		l->landed = batch;
	size_t k = 0;
	while (k < l->n && l->r[k].batch <= batch)
		k++;
	drop(l, k);
	pthread_mutex_unlock(&l->lock);
}
