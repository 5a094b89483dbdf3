/* evicting.c: evictions on their way out of the GPU (see evicting.h). */
#include "evicting.h"

#include <stdlib.h>
#include <string.h>

#include "blocktab.h"
#include "grow.h"

struct job {
	uint64_t no, bytes;
	struct engine_range *r;
	size_t n;
};

struct evicting {
	struct job *jobs; /* jobs[head .. n): not known to have landed, oldest first */
	size_t head, n, cap;
	uint64_t queued;  /* the newest job's number */
	uint64_t bytes;   /* of jobs[head .. n) */
	uint64_t lost;    /* the newest job whose ranges could not be kept (0: none) */
};

evicting *evicting_create(void)
{
	return calloc(1, sizeof(struct evicting));
}

void evicting_destroy(evicting *v)
{
	if (!v)
		return;
	for (size_t i = v->head; i < v->n; i++)
		free(v->jobs[i].r);
	free(v->jobs);
	free(v);
}

/* Room for one more job at jobs[n], moving the live ones to the front
 * first once the landed ones before them are the larger part. */
static bool make_room(evicting *v)
{
	if (v->head && v->head >= v->n - v->head) {
		memmove(v->jobs, v->jobs + v->head, (v->n - v->head) * sizeof *v->jobs);
		v->n -= v->head;
		v->head = 0;
	}
	struct job *p = room_for_one(v->jobs, v->n, &v->cap, sizeof *p, 64);
	if (p)
		v->jobs = p;
	return p != NULL;
}

uint64_t evicting_queued(evicting *v, const struct engine_range *r, size_t n)
{
	uint64_t no = ++v->queued, bytes = 0;
	struct engine_range *copy = malloc((n ? n : 1) * sizeof *copy);
	if (!copy || !make_room(v)) {
		free(copy);
		v->lost = no;
		return no;
	}
	memcpy(copy, r, n * sizeof *copy);
	for (size_t i = 0; i < n; i++)
		bytes += r[i].bytes;
	v->jobs[v->n++] = (struct job){ no, bytes, copy, n };
	v->bytes += bytes;
	return no;
}

void evicting_drop_landed(evicting *v, bool (*landed)(void *ctx, uint64_t job), void *ctx)
{
	for (; v->head < v->n && landed(ctx, v->jobs[v->head].no); v->head++) {
		v->bytes -= v->jobs[v->head].bytes;
		free(v->jobs[v->head].r);
	}
	if (v->head == v->n)
		v->head = v->n = 0;
	if (v->lost && landed(ctx, v->lost))
		v->lost = 0;
}

uint64_t evicting_bytes(const evicting *v)
{
	return v->bytes;
}

static uint64_t last_block(const struct engine_range *r)
{
	return (r->address + r->bytes - 1) >> BLOCK_SHIFT;
}

static bool share_a_block(const struct engine_range *a, const struct engine_range *b)
{
	return a->bytes && b->bytes && a->address >> BLOCK_SHIFT <= last_block(b) &&
	       b->address >> BLOCK_SHIFT <= last_block(a);
}

static bool shares_a_block_with(const struct job *j, const struct engine_range *r, size_t n)
{
	for (size_t k = 0; k < j->n; k++)
		for (size_t i = 0; i < n; i++)
			if (share_a_block(&j->r[k], &r[i]))
				return true;
	return false;
}

/* Newest first: the first job that would not fit beside the newer ones,
 * or that touches r, must land, and every older one lands before it. A
 * job whose ranges were not kept must land too, its ranges unknown. */
uint64_t evicting_must_land(const evicting *v, const struct engine_range *r, size_t n, uint64_t room)
{
	uint64_t ahead = 0;
	for (size_t j = v->n; j > v->head && v->jobs[j - 1].no > v->lost; j--) {
		const struct job *p = &v->jobs[j - 1];
		ahead += p->bytes;
		if (ahead > room || shares_a_block_with(p, r, n))
			return p->no;
	}
	return v->lost;
}
