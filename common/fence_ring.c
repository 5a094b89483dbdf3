/* fence_ring.c: the arena's fences in order (fence_ring.h). */
#include "fence_ring.h"

#include <string.h>

#include "clock.h"

void fence_ring_init(struct fence_ring *r, const struct fence_ring_ops *ops)
{
	memset(r, 0, sizeof *r);
	r->ops = *ops;
	r->next_token = 1;
}

bool fence_ring_sync(struct fence_ring *r)
{
	if (!r->ops.sync(r->ops.ctx))
		return false;
	r->syncs++;
	return true;
}

static bool slot_done(struct fence_ring *r, struct fence *f)
{
	if (f->deferred)
		return r->syncs > f->after_syncs;
	for (int i = 0; i < f->nevents; i++)
		if (!r->ops.event_done(r->ops.ctx, f->ev[i]))
			return false;
	return true;
}

/* Waits for f; false when it is deferred and the synchronize was refused. */
static bool slot_wait(struct fence_ring *r, struct fence *f)
{
	bool pending_sync = f->deferred && r->syncs <= f->after_syncs;
	/* In one stream order a fence has no events: a full ring passes here
	 * at every free, with nothing to time. */
	if (!f->nevents && !pending_sync)
		return true;
	uint64_t t0 = um_now_ns();
	bool done = !pending_sync || fence_ring_sync(r);
	for (int i = 0; i < f->nevents; i++)
		r->ops.event_wait(r->ops.ctx, f->ev[i]);
	atomic_fetch_add_explicit(&r->wait_ns, um_now_ns() - t0, memory_order_relaxed);
	return done;
}

/* Advances done_upto over completed fences, oldest first, waiting for each
 * or only asking. Returns whether it reached limit. */
static bool advance(struct fence_ring *r, uint64_t limit, bool wait)
{
	while (r->done_upto < limit && r->done_upto + 1 < r->next_token) {
		struct fence *f = &r->slot[(r->done_upto + 1) % FENCE_RING_SLOTS];
		if (wait ? !slot_wait(r, f) : !slot_done(r, f))
			return false;
		r->ndeferred -= f->deferred;
		f->deferred = false;
		f->token = 0;
		r->done_upto++;
	}
	return r->done_upto >= limit;
}

struct fence *fence_ring_open(struct fence_ring *r, uint64_t *token)
{
	struct fence *f = &r->slot[r->next_token % FENCE_RING_SLOTS];
	if (f->token && !advance(r, f->token, true)) {
		*token = r->next_token - 1;
		return NULL;
	}
	f->nevents = 0;
	return f;
}

bool fence_ring_record(struct fence_ring *r, struct fence *f, void *stream)
{
	if (f->nevents == FENCE_RING_EVENTS)
		return false;
	for (; f->created <= f->nevents; f->created++)
		if (!r->ops.event_create(r->ops.ctx, &f->ev[f->created]))
			return false;
	if (!r->ops.event_record(r->ops.ctx, f->ev[f->nevents], stream))
		return false;
	f->nevents++;
	return true;
}

uint64_t fence_ring_close(struct fence_ring *r, struct fence *f)
{
	f->token = r->next_token;
	return r->next_token++;
}

uint64_t fence_ring_defer(struct fence_ring *r, struct fence *f)
{
	f->deferred = true;
	f->after_syncs = r->syncs;
	r->ndeferred++;
	return fence_ring_close(r, f);
}

bool fence_ring_done(struct fence_ring *r, uint64_t token)
{
	return advance(r, token, false);
}

bool fence_ring_wait(struct fence_ring *r, uint64_t token)
{
	return advance(r, token, true);
}

bool fence_ring_join(struct fence_ring *r, uint64_t token, void *stream)
{
	if (fence_ring_done(r, token))
		return true;
	for (uint64_t k = r->joined_upto > r->done_upto ? r->joined_upto : r->done_upto; k < token; k++) {
		struct fence *f = &r->slot[(k + 1) % FENCE_RING_SLOTS];
		if (f->deferred && r->syncs <= f->after_syncs)
			return false;
		for (int i = 0; i < f->nevents && !f->deferred; i++)
			if (!r->ops.event_await(r->ops.ctx, f->ev[i], stream))
				return false;
		r->joined_upto = k + 1;
	}
	return true;
}
