/*
 * fence_ring.h: the arena's fences in the order they were made
 * (common/cuda/um_backend.c), apart from CUDA so that CI tests them.
 *
 * A fence is a token, and fences complete in token order: one counts as
 * done only once every earlier one is, so a later fence implies the
 * earlier ones even though each covers only the streams busy since the
 * last. A fence is either a set of events, done when each is, or deferred:
 * done at the first synchronize of the context that succeeds after it was
 * made, which the ring makes when the fence is waited for. A synchronize
 * the driver refuses (inside a graph capture) waits for nothing: the
 * fence stays pending, and the wait says it failed.
 *
 * Fences in flight occupy FENCE_RING_SLOTS slots; the next fence after a
 * full ring waits for the oldest. When the oldest cannot complete (its
 * synchronize refused), the newest covers the new one too: it completes
 * only after the oldest, which a synchronize made from now on completes.
 *
 * A stream can also be queued behind the fences up to a token on the GPU
 * (fence_ring_join), each fence's events waited for there once, however
 * often it is asked: the stream is the backend's own, in order, so what it
 * waited for stays waited for.
 *
 * Not thread-safe: the arena makes its backend calls under its lock.
 */
#ifndef UMKIT_FENCE_RING_H
#define UMKIT_FENCE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define FENCE_RING_SLOTS 1024
#define FENCE_RING_EVENTS 65 /* events a fence can hold */

/* The driver behind the ring: events are created once per slot place and
 * reused. */
struct fence_ring_ops {
	void *ctx;
	bool (*event_create)(void *ctx, void **event);
	bool (*event_record)(void *ctx, void *event, void *stream);
	/* False only while the event's work is known to be still running: an
	 * event that cannot be asked (it joined a capture after its stream's
	 * work was waited for) counts as done. */
	bool (*event_done)(void *ctx, void *event);
	void (*event_wait)(void *ctx, void *event);
	/* Synchronizes the context; false when the driver refused. */
	bool (*sync)(void *ctx);
	/* Queues stream behind event (fence_ring_join); false when the driver
	 * refused. */
	bool (*event_await)(void *ctx, void *event, void *stream);
};

struct fence {
	uint64_t token; /* 0: slot unused */
	bool deferred;
	uint64_t after_syncs; /* deferred: done once syncs passes this */
	int nevents;
	int created; /* events created in this slot so far (reused) */
	void *ev[FENCE_RING_EVENTS];
};

struct fence_ring {
	struct fence_ring_ops ops;
	struct fence slot[FENCE_RING_SLOTS];
	uint64_t next_token;
	uint64_t done_upto; /* every fence <= this has completed */
	uint64_t syncs;     /* synchronizes made that succeeded */
	uint64_t ndeferred; /* deferred fences not yet done */
	uint64_t joined_upto; /* fence_ring_join's stream waits for every fence <= this */
	/* Time blocked waiting for fences; read from any thread. */
	atomic_uint_fast64_t wait_ns;
};

void fence_ring_init(struct fence_ring *r, const struct fence_ring_ops *ops);

/* Starts the next fence. Returns its slot, empty; or NULL when the ring is
 * full and its oldest fence cannot complete, with *token the newest fence,
 * which covers this one (nothing more to make). */
struct fence *fence_ring_open(struct fence_ring *r, uint64_t *token);

/* Records an event of the open fence f on stream; false when it could not
 * (the stream is then not covered by f). */
bool fence_ring_record(struct fence_ring *r, struct fence *f, void *stream);

/* Makes the open fence f, covered by its events (none: nothing to wait
 * for), and returns its token. */
uint64_t fence_ring_close(struct fence_ring *r, struct fence *f);

/* Makes the open fence f wait for the context's next synchronize, its
 * events too, and returns its token. */
uint64_t fence_ring_defer(struct fence_ring *r, struct fence *f);

/* Synchronizes the context now: every fence made so far is then done.
 * False when the driver refused. */
bool fence_ring_sync(struct fence_ring *r);

/* Whether every fence up to token has completed; asks, never waits. */
bool fence_ring_done(struct fence_ring *r, uint64_t token);

/* Waits until every fence up to token has completed; false when one could
 * not be waited for (its synchronize refused). */
bool fence_ring_wait(struct fence_ring *r, uint64_t token);

/* Queues stream (the same one at every call) behind every fence up to
 * token on the GPU: waits there for the events of each fence not yet
 * completed, and asks for none twice. False when that cannot cover them:
 * a deferred fence still pending, whose work no event marks, or a wait
 * the driver refused (the fences joined before it stay joined). */
bool fence_ring_join(struct fence_ring *r, uint64_t token, void *stream);

/* Whether some deferred fence is still pending. */
static inline bool fence_ring_has_deferred(const struct fence_ring *r)
{
	return r->ndeferred != 0;
}

#endif
