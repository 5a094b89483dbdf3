/* Unit tests for the streams a thread has queued behind the arena's
 * newest fence order. */
#include "testutil.h"

#include "ordered_streams.h"

#define S(n) ((const void *)(uintptr_t)(n))

/* A stream is behind an order once noted for it or a later one, and only
 * in the generation it was noted in. */
static void noted_stream_is_behind_that_order_and_earlier(void **state)
{
	struct ordered_streams t = { 0 };
	assert_false(ordered_streams_behind(&t, S(1), NULL, 1, 0));
	ordered_streams_note(&t, S(1), NULL, 5, 0);
	assert_true(ordered_streams_behind(&t, S(1), NULL, 5, 0));
	assert_true(ordered_streams_behind(&t, S(1), NULL, 3, 0));
	assert_false(ordered_streams_behind(&t, S(1), NULL, 6, 0));
	assert_false(ordered_streams_behind(&t, S(2), NULL, 1, 0));
	/* A stream destroyed since: the handle may be another stream's. */
	assert_false(ordered_streams_behind(&t, S(1), NULL, 5, 1));
	ordered_streams_note(&t, S(1), NULL, 6, 1);
	assert_true(ordered_streams_behind(&t, S(1), NULL, 6, 1));
}

/* The legacy stream of one context is not another context's. */
static void special_handle_is_one_per_context(void **state)
{
	struct ordered_streams t = { 0 };
	ordered_streams_note(&t, NULL, S(100), 4, 0);
	assert_true(ordered_streams_behind(&t, NULL, S(100), 4, 0));
	assert_false(ordered_streams_behind(&t, NULL, S(200), 4, 0));
	ordered_streams_note(&t, NULL, S(200), 4, 0);
	assert_true(ordered_streams_behind(&t, NULL, S(100), 4, 0));
	assert_true(ordered_streams_behind(&t, NULL, S(200), 4, 0));
}

/* A full table forgets the stream it took on first, even one noted again
 * since: that stream waits again. */
static void full_table_forgets_the_oldest(void **state)
{
	struct ordered_streams t = { 0 };
	for (int i = 1; i <= ORDERED_STREAMS; i++)
		ordered_streams_note(&t, S(i), NULL, 7, 0);
	ordered_streams_note(&t, S(1), NULL, 8, 0);
	ordered_streams_note(&t, S(ORDERED_STREAMS + 1), NULL, 8, 0);
	assert_false(ordered_streams_behind(&t, S(1), NULL, 7, 0));
	for (int i = 2; i <= ORDERED_STREAMS + 1; i++)
		assert_true(ordered_streams_behind(&t, S(i), NULL, 7, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(noted_stream_is_behind_that_order_and_earlier),
		cmocka_unit_test(special_handle_is_one_per_context),
		cmocka_unit_test(full_table_forgets_the_oldest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
