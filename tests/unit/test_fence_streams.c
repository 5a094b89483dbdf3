/* Unit tests for the choice of streams a fence records its events on. */
#include "testutil.h"

#include "fence_streams.h"

#define S(n) ((void *)(uintptr_t)(n))

static int choose(struct fenced *f, int n, bool *legacy, bool *lost)
{
	*lost = false;
	return fence_streams_choose(f, n, legacy, lost);
}

/* No capture: the dirty non-blocking streams and the legacy stream. */
static void no_capture_dirty_and_legacy(void **state)
{
	struct fenced f[] = {
		{ .stream = S(1), .nonblocking = true, .dirty = true },
		{ .stream = S(2), .nonblocking = true },
		{ .stream = S(3) }, /* blocking: the legacy stream covers it */
		{ .stream = S(4), .nonblocking = true, .dirty = true },
	};
	bool legacy, lost;
	assert_int_equal(choose(f, 4, &legacy, &lost), 2);
	assert_ptr_equal(f[0].stream, S(1));
	assert_ptr_equal(f[1].stream, S(4));
	assert_true(legacy);
	assert_false(lost);
}

/* A non-blocking stream captures: no event there; drained at the
 * capture's beginning, its earlier work needs no wait. */
static void capturing_stream_gets_no_event(void **state)
{
	struct fenced f[] = {
		{ .stream = S(1), .nonblocking = true, .dirty = true, .drained = true, .capturing = true },
		{ .stream = S(2), .nonblocking = true, .dirty = true },
	};
	bool legacy, lost;
	assert_int_equal(choose(f, 2, &legacy, &lost), 1);
	assert_ptr_equal(f[0].stream, S(2));
	assert_true(legacy);
	assert_false(lost);
}

/* A capture whose beginning went unseen: its stream's earlier work can be
 * covered only by waiting for the context. */
static void undrained_capture_is_lost(void **state)
{
	struct fenced f[] = {
		{ .stream = S(1), .nonblocking = true, .dirty = true, .capturing = true },
	};
	bool legacy, lost;
	assert_int_equal(choose(f, 1, &legacy, &lost), 0);
	assert_true(legacy);
	assert_true(lost);

	/* Not dirty: nothing of it to cover. */
	f[0] = (struct fenced){ .stream = S(1), .nonblocking = true, .capturing = true };
	assert_int_equal(choose(f, 1, &legacy, &lost), 0);
	assert_false(lost);
}

/* A blocking stream captures: no legacy event, which would join its
 * capture; every other blocking stream gets one, dirty or not, and the
 * dirty non-blocking streams still do. */
static void blocking_capture_replaces_legacy(void **state)
{
	struct fenced f[] = {
		{ .stream = S(1), .capturing = true },
		{ .stream = S(2) },
		{ .stream = S(3), .nonblocking = true },
		{ .stream = S(4), .nonblocking = true, .dirty = true },
		{ .stream = S(5) },
	};
	bool legacy, lost;
	assert_int_equal(choose(f, 5, &legacy, &lost), 3);
	assert_ptr_equal(f[0].stream, S(2));
	assert_ptr_equal(f[1].stream, S(4));
	assert_ptr_equal(f[2].stream, S(5));
	assert_false(legacy);
	assert_false(lost);
}

static void nothing_to_fence(void **state)
{
	bool legacy, lost;
	assert_int_equal(choose(NULL, 0, &legacy, &lost), 0);
	assert_true(legacy);
	assert_false(lost);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_capture_dirty_and_legacy),
		cmocka_unit_test(capturing_stream_gets_no_event),
		cmocka_unit_test(undrained_capture_is_lost),
		cmocka_unit_test(blocking_capture_replaces_legacy),
		cmocka_unit_test(nothing_to_fence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
