/* Unit tests for the choice of streams a fence records its events on. */
#include "testutil.h"

#include <string.h>

#include "fence_streams.h"

#define S(n) ((void *)(uintptr_t)(n))

static const char *why; /* set by fence_streams_choose when it returns -1 */

/* No capture: the busy non-blocking streams (and the legacy stream,
 * which covers the blocking ones). */
static void no_capture_busy_nonblocking(void **state)
{
	struct fenced f[] = {
		{ .stream = S(1), .nonblocking = true, .busy = true },
		{ .stream = S(2), .nonblocking = true },
		{ .stream = S(3), .busy = true },
		{ .stream = S(4), .nonblocking = true, .busy = true },
	};
	assert_int_equal(fence_streams_choose(f, 4, &why), 2);
	assert_ptr_equal(f[0].stream, S(1));
	assert_ptr_equal(f[1].stream, S(4));
}

/* A non-blocking stream captures: no event there; drained at the
 * capture's beginning, or idle since the last fence, it needs none. */
static void capturing_stream_gets_no_event(void **state)
{
	struct fenced f[] = {
		{ .stream = S(1), .nonblocking = true, .busy = true, .drained = true, .capturing = true },
		{ .stream = S(2), .nonblocking = true, .busy = true },
		{ .stream = S(3), .nonblocking = true, .capturing = true },
	};
	assert_int_equal(fence_streams_choose(f, 3, &why), 1);
	assert_ptr_equal(f[0].stream, S(2));
}

/* A capture whose beginning went unseen, or a stream that joined another's
 * capture with work of its own: only the next synchronize covers it. */
static void undrained_capture_waits_for_a_synchronize(void **state)
{
	struct fenced f[] = {
		{ .stream = S(2), .nonblocking = true, .busy = true },
		{ .stream = S(1), .nonblocking = true, .busy = true, .capturing = true },
	};
	assert_int_equal(fence_streams_choose(f, 2, &why), -1);
	assert_non_null(strstr(why, "not drained"));
}

/* A blocking stream captures, drained or not, busy or not: the legacy
 * stream's event would join its capture, so no event covers the blocking
 * streams' and the legacy stream's work. */
static void blocking_capture_waits_for_a_synchronize(void **state)
{
	struct fenced drained[] = {
		{ .stream = S(1), .drained = true, .capturing = true },
		{ .stream = S(2), .nonblocking = true, .busy = true },
	};
	assert_int_equal(fence_streams_choose(drained, 2, &why), -1);
	assert_non_null(strstr(why, "blocking stream captures"));
	struct fenced joined[] = {
		{ .stream = S(1), .nonblocking = true, .drained = true, .capturing = true },
		{ .stream = S(2), .busy = true, .capturing = true }, /* joined S(1)'s capture */
	};
	assert_int_equal(fence_streams_choose(joined, 2, &why), -1);
	assert_non_null(strstr(why, "blocking stream captures"));
	/* What the fence adds for a per-thread default stream's capture. */
	struct fenced per_thread[] = {
		{ .stream = S(4), .nonblocking = true, .busy = true },
		{ .stream = S(2), .capturing = true },
	};
	assert_int_equal(fence_streams_choose(per_thread, 2, &why), -1);
	assert_non_null(strstr(why, "blocking stream captures"));
}

static void nothing_to_fence(void **state)
{
	assert_int_equal(fence_streams_choose(NULL, 0, &why), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_capture_busy_nonblocking),
		cmocka_unit_test(capturing_stream_gets_no_event),
		cmocka_unit_test(undrained_capture_waits_for_a_synchronize),
		cmocka_unit_test(blocking_capture_waits_for_a_synchronize),
		cmocka_unit_test(nothing_to_fence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
