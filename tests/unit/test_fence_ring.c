/* Unit tests for the arena's fences in order, over a fake driver. */
#include "testutil.h"

#include <stdlib.h>

#include "clock.h"
#include "fence_ring.h"

/* An event is "done" once the fake GPU finished it; a synchronize that
 * succeeds finishes every event. */
struct fake_event {
	bool done;
	void *stream;
};

#define MAX_EVENTS (FENCE_RING_SLOTS * 2 + FENCE_RING_EVENTS)

struct driver {
	struct fake_event events[MAX_EVENTS];
	size_t created;
	bool refuse_sync, refuse_record, refuse_await;
	size_t syncs, refused_syncs, waits;
	void *awaited[64]; /* the events fence_ring_join queued a stream behind */
	size_t nawaited;
};

static bool event_create(void *ctx, void **event)
{
	struct driver *d = ctx;
	if (d->created == MAX_EVENTS)
		return false;
	*event = &d->events[d->created++];
	return true;
}

static bool event_record(void *ctx, void *event, void *stream)
{
	struct driver *d = ctx;
	if (d->refuse_record)
		return false;
	*(struct fake_event *)event = (struct fake_event){ .done = false, .stream = stream };
	return true;
}

static bool event_done(void *ctx, void *event)
{
	return ((struct fake_event *)event)->done;
}

/* Takes a microsecond, as a wait on the GPU takes time. */
static void event_wait(void *ctx, void *event)
{
	((struct driver *)ctx)->waits++;
	for (uint64_t t0 = um_now_ns(); um_now_ns() - t0 < 1000;)
		;
	((struct fake_event *)event)->done = true;
}

static bool sync_all(void *ctx)
{
	struct driver *d = ctx;
	if (d->refuse_sync) {
		d->refused_syncs++;
		return false;
	}
	d->syncs++;
	for (size_t i = 0; i < d->created; i++)
		d->events[i].done = true;
	return true;
}

static bool event_await(void *ctx, void *event, void *stream)
{
	struct driver *d = ctx;
	assert_ptr_equal(stream, &d->awaited); /* the join's one stream */
	if (d->refuse_await || d->nawaited == 64)
		return false;
	d->awaited[d->nawaited++] = event;
	return true;
}

struct rig {
	struct driver d;
	struct fence_ring r;
};

static struct rig *rig_new(void)
{
	struct rig *g = calloc(1, sizeof *g);
	assert_non_null(g);
	fence_ring_init(&g->r, &(struct fence_ring_ops){ &g->d, event_create, event_record, event_done,
							  event_wait, sync_all, event_await });
	return g;
}

#define S(n) ((void *)(uintptr_t)(n))

/* A fence with events on the given number of streams. */
static uint64_t fence_on(struct rig *g, int streams)
{
	uint64_t covering;
	struct fence *f = fence_ring_open(&g->r, &covering);
	assert_non_null(f);
	for (int i = 0; i < streams; i++)
		assert_true(fence_ring_record(&g->r, f, S(i + 1)));
	return fence_ring_close(&g->r, f);
}

static uint64_t fence_deferred(struct rig *g)
{
	uint64_t covering;
	struct fence *f = fence_ring_open(&g->r, &covering);
	assert_non_null(f);
	return fence_ring_defer(&g->r, f);
}

static struct fake_event *event_of(struct rig *g, uint64_t token, int i)
{
	return g->r.slot[token % FENCE_RING_SLOTS].ev[i];
}

/* A fence is done once its events are, and only once every earlier fence
 * is: a later fence implies the earlier ones. */
static void fences_complete_in_token_order(void **state)
{
	struct rig *g = rig_new();
	uint64_t a = fence_on(g, 2), b = fence_on(g, 1);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	event_of(g, b, 0)->done = true;
	assert_false(fence_ring_done(&g->r, b));
	event_of(g, a, 0)->done = true;
	assert_false(fence_ring_done(&g->r, a));
	event_of(g, a, 1)->done = true;
	assert_true(fence_ring_done(&g->r, b));
	assert_int_equal(g->r.done_upto, 2);
	/* A fence with no events (one stream order) has nothing to wait for. */
	uint64_t c = fence_on(g, 0);
	assert_true(fence_ring_done(&g->r, c));
	assert_true(fence_ring_wait(&g->r, c));
	assert_int_equal(g->d.waits + g->d.syncs, 0);
	free(g);
}

/* Waiting waits for each event of each fence up to the token, no further. */
static void wait_waits_for_events_up_to_the_token(void **state)
{
	struct rig *g = rig_new();
	uint64_t a = fence_on(g, 3);
	uint64_t b = fence_on(g, 1);
	assert_true(fence_ring_wait(&g->r, a));
	assert_int_equal(g->d.waits, 3);
	assert_false(event_of(g, b, 0)->done);
	assert_false(fence_ring_done(&g->r, b));
	assert_int_equal(g->d.syncs, 0);
	free(g);
}

/* A deferred fence is done at the first synchronize that succeeds after it
 * was made; one made before does not count. Waiting for it makes one. */
static void deferred_fence_waits_for_a_later_synchronize(void **state)
{
	struct rig *g = rig_new();
	assert_true(fence_ring_sync(&g->r));
	uint64_t a = fence_deferred(g);
	assert_true(fence_ring_has_deferred(&g->r));
	assert_false(fence_ring_done(&g->r, a));
	assert_true(fence_ring_sync(&g->r));
	assert_true(fence_ring_done(&g->r, a));
	assert_false(fence_ring_has_deferred(&g->r));

	uint64_t b = fence_deferred(g);
	assert_true(fence_ring_wait(&g->r, b));
	assert_int_equal(g->d.syncs, 3);
	assert_false(fence_ring_has_deferred(&g->r));
	free(g);
}

/* A synchronize the driver refuses waits for nothing: the fence, and every
 * later one, stays pending until one succeeds. */
static void refused_synchronize_leaves_the_fence_pending(void **state)
{
	struct rig *g = rig_new();
	uint64_t a = fence_deferred(g);
	uint64_t b = fence_on(g, 1);
	event_of(g, b, 0)->done = true;
	g->d.refuse_sync = true;
	assert_false(fence_ring_wait(&g->r, b));
	assert_int_equal(g->d.refused_syncs, 1);
	assert_false(fence_ring_done(&g->r, a));
	assert_false(fence_ring_done(&g->r, b));
	assert_false(fence_ring_sync(&g->r));
	assert_false(fence_ring_done(&g->r, a));
	assert_true(fence_ring_has_deferred(&g->r));

	g->d.refuse_sync = false;
	assert_true(fence_ring_wait(&g->r, b));
	assert_int_equal(g->r.done_upto, b);
	assert_false(fence_ring_has_deferred(&g->r));
	free(g);
}

/* A deferred fence keeps events recorded before it was deferred, and waits
 * for them too. */
static void deferred_fence_keeps_its_events(void **state)
{
	struct rig *g = rig_new();
	uint64_t covering;
	struct fence *f = fence_ring_open(&g->r, &covering);
	assert_true(fence_ring_record(&g->r, f, S(1)));
	uint64_t a = fence_ring_defer(&g->r, f);
	event_of(g, a, 0)->done = true;
	assert_false(fence_ring_done(&g->r, a)); /* events alone do not do it */
	assert_true(fence_ring_wait(&g->r, a));
	assert_int_equal(g->d.syncs, 1);

	/* Once a synchronize passed it, waiting makes none, so a refusal
	 * then does not hold it back. */
	f = fence_ring_open(&g->r, &covering);
	assert_true(fence_ring_record(&g->r, f, S(1)));
	uint64_t b = fence_ring_defer(&g->r, f);
	assert_true(fence_ring_sync(&g->r));
	g->d.refuse_sync = true;
	assert_true(fence_ring_wait(&g->r, b));
	assert_int_equal(g->d.refused_syncs, 0);
	free(g);
}

/* An event the driver will not record leaves its stream uncovered, and
 * says so; events are created once per slot place and reused. */
static void events_are_reused_and_failures_reported(void **state)
{
	struct rig *g = rig_new();
	for (int i = 0; i < FENCE_RING_SLOTS; i++) {
		fence_on(g, 2);
		assert_true(fence_ring_sync(&g->r));
	}
	assert_int_equal(g->d.created, 2 * FENCE_RING_SLOTS);
	for (int i = 0; i < FENCE_RING_SLOTS; i++)
		fence_on(g, 1);
	assert_int_equal(g->d.created, 2 * FENCE_RING_SLOTS);

	uint64_t covering;
	struct fence *f = fence_ring_open(&g->r, &covering);
	g->d.refuse_record = true;
	assert_false(fence_ring_record(&g->r, f, S(7)));
	assert_int_equal(f->nevents, 0);
	g->d.refuse_record = false;
	for (int i = 0; i < FENCE_RING_EVENTS; i++)
		assert_true(fence_ring_record(&g->r, f, S(i + 1)));
	assert_false(fence_ring_record(&g->r, f, S(99))); /* no room left */
	fence_ring_close(&g->r, f);
	free(g);
}

/* A full ring: the next fence waits for the oldest, and takes its slot. */
static void full_ring_waits_for_the_oldest(void **state)
{
	struct rig *g = rig_new();
	for (int i = 0; i < FENCE_RING_SLOTS - 1; i++)
		fence_on(g, 1);
	assert_int_equal(g->d.waits, 0);
	uint64_t next = fence_on(g, 1);
	assert_int_equal(next, FENCE_RING_SLOTS);
	assert_int_equal(g->d.waits, 0);
	uint64_t after = fence_on(g, 1);
	assert_int_equal(after, FENCE_RING_SLOTS + 1);
	assert_int_equal(g->d.waits, 1);
	assert_int_equal(g->r.done_upto, 1);
	free(g);
}

/* A full ring whose oldest fence waits for a synchronize the driver
 * refuses: the newest covers the new free, done only after the oldest,
 * which only a synchronize made from then on completes. */
static void full_ring_refused_folds_into_the_newest(void **state)
{
	struct rig *g = rig_new();
	fence_deferred(g);
	for (int i = 1; i < FENCE_RING_SLOTS; i++)
		fence_on(g, 1);
	uint64_t newest = FENCE_RING_SLOTS; /* tokens 1 to FENCE_RING_SLOTS fill it */
	event_of(g, newest, 0)->done = true;
	g->d.refuse_sync = true;
	uint64_t covering = 0;
	assert_null(fence_ring_open(&g->r, &covering));
	assert_int_equal(covering, newest);
	assert_false(fence_ring_done(&g->r, covering));
	assert_int_equal(g->d.syncs, 0);

	g->d.refuse_sync = false;
	assert_true(fence_ring_wait(&g->r, covering));
	assert_int_equal(g->d.syncs, 1);
	assert_false(fence_ring_has_deferred(&g->r));
	assert_int_equal(fence_on(g, 0), FENCE_RING_SLOTS + 1);
	free(g);
}

static bool join(struct rig *g, uint64_t token)
{
	return fence_ring_join(&g->r, token, &g->d.awaited);
}

/* A join queues its stream behind the events of each fence up to the
 * token not yet done, and behind none twice. */
static void join_awaits_each_pending_event_once(void **state)
{
	struct rig *g = rig_new();
	uint64_t a = fence_on(g, 2), b = fence_on(g, 1), c = fence_on(g, 3);
	event_of(g, a, 0)->done = event_of(g, a, 1)->done = true;
	assert_true(join(g, b));
	assert_int_equal(g->d.nawaited, 1);
	assert_ptr_equal(g->d.awaited[0], event_of(g, b, 0));
	assert_true(join(g, b));
	assert_true(join(g, c));
	assert_int_equal(g->d.nawaited, 4);
	for (int i = 0; i < 3; i++)
		assert_ptr_equal(g->d.awaited[1 + i], event_of(g, c, i));
	assert_false(fence_ring_done(&g->r, b)); /* joined is not done */
	assert_int_equal(g->d.waits + g->d.syncs, 0);
	free(g);
}

/* A deferred fence still pending has no event to wait for on the GPU: the
 * join cannot cover it; once a synchronize has, the join passes it by. */
static void join_cannot_cover_a_pending_deferred_fence(void **state)
{
	struct rig *g = rig_new();
	uint64_t a = fence_on(g, 1), d = fence_deferred(g), b = fence_on(g, 1);
	assert_false(join(g, b));
	assert_int_equal(g->d.nawaited, 1); /* a's, kept joined */
	assert_true(join(g, a));
	assert_int_equal(g->d.nawaited, 1);
	g->r.syncs++; /* a synchronize, as fence_ring_sync counts one, that left a's event pending */
	assert_false(fence_ring_done(&g->r, d)); /* a's event still pending */
	assert_true(join(g, b));
	assert_int_equal(g->d.nawaited, 2);
	assert_ptr_equal(g->d.awaited[1], event_of(g, b, 0));
	free(g);
}

/* A wait the driver refused leaves the fence unjoined, for the next join
 * to try again. */
static void refused_await_is_tried_again(void **state)
{
	struct rig *g = rig_new();
	uint64_t a = fence_on(g, 2);
	g->d.refuse_await = true;
	assert_false(join(g, a));
	g->d.refuse_await = false;
	assert_true(join(g, a));
	assert_int_equal(g->d.nawaited, 2);
	free(g);
}

/* Time is counted when a wait had something to wait for. */
static void wait_time_counts_real_waits(void **state)
{
	struct rig *g = rig_new();
	assert_true(fence_ring_wait(&g->r, fence_on(g, 0)));
	assert_int_equal(atomic_load(&g->r.wait_ns), 0);
	assert_true(fence_ring_wait(&g->r, fence_on(g, 1)));
	assert_true(atomic_load(&g->r.wait_ns) >= 1000);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fences_complete_in_token_order),
		cmocka_unit_test(wait_waits_for_events_up_to_the_token),
		cmocka_unit_test(deferred_fence_waits_for_a_later_synchronize),
		cmocka_unit_test(refused_synchronize_leaves_the_fence_pending),
		cmocka_unit_test(deferred_fence_keeps_its_events),
		cmocka_unit_test(events_are_reused_and_failures_reported),
		cmocka_unit_test(full_ring_waits_for_the_oldest),
		cmocka_unit_test(full_ring_refused_folds_into_the_newest),
		cmocka_unit_test(wait_time_counts_real_waits),
		cmocka_unit_test(join_awaits_each_pending_event_once),
		cmocka_unit_test(join_cannot_cover_a_pending_deferred_fence),
		cmocka_unit_test(refused_await_is_tried_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
