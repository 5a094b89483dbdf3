/*
 * test_inflight.c: migrations in flight (replay/inflight.c): a range's
 * newest overlapping migration is found among several, retired ones are
 * forgotten, neighbours do not overlap, and a migration whose ranges
 * could not be kept overlaps everything until it retires.
 */
#include "testutil.h"

#include "replay/inflight.h"

#define MB (UINT64_C(1) << 20)

static struct engine_range range(uint64_t from_mb, uint64_t mb)
{
	return (struct engine_range){ from_mb * MB, mb * MB };
}

static inflight *tracker(size_t max)
{
	inflight *f = inflight_create(max);
	assert_non_null(f);
	return f;
}

static void newest_overlapping(void **state)
{
	inflight *f = tracker(64);
	struct engine_range a[] = { range(0, 4), range(10, 2) }, b[] = { range(2, 4) }, c[] = { range(20, 2) };
	assert_true(inflight_add(f, 1, a, 2));
	assert_true(inflight_add(f, 2, b, 1));
	assert_true(inflight_add(f, 3, c, 1));
	struct engine_range q1[] = { range(3, 1) }, q2[] = { range(11, 1) }, q3[] = { range(30, 1), range(0, 1) };
	assert_int_equal(inflight_newest(f, q1, 1), 2);
	assert_int_equal(inflight_newest(f, q2, 1), 1);
	assert_int_equal(inflight_newest(f, q3, 2), 1);
	assert_int_equal(inflight_oldest(f), 1);
	inflight_destroy(f);
}

static void neighbours_do_not_overlap(void **state)
{
	inflight *f = tracker(64);
	struct engine_range a[] = { range(2, 2) };
	assert_true(inflight_add(f, 1, a, 1));
	struct engine_range below[] = { range(0, 2) }, above[] = { range(4, 2) }, empty[] = { range(3, 0) };
	assert_int_equal(inflight_newest(f, below, 1), 0);
	assert_int_equal(inflight_newest(f, above, 1), 0);
	assert_int_equal(inflight_newest(f, empty, 1), 0);
	inflight_destroy(f);
}

static void retired_forgotten(void **state)
{
	inflight *f = tracker(64);
	struct engine_range a[] = { range(0, 2) };
	for (uint64_t seq = 1; seq <= 3; seq++)
		assert_true(inflight_add(f, seq, a, 1));
	inflight_retire(f, 2);
	assert_int_equal(inflight_oldest(f), 3);
	assert_int_equal(inflight_newest(f, a, 1), 3);
	inflight_retire(f, 3);
	assert_int_equal(inflight_oldest(f), 0);
	assert_int_equal(inflight_newest(f, a, 1), 0);
	inflight_destroy(f);
}

/* Many more migrations over time than fit at once: retiring makes room. */
static void room_reused(void **state)
{
	inflight *f = tracker(4);
	for (uint64_t seq = 1; seq <= 1000; seq++) {
		struct engine_range r[] = { range(seq, 1), range(seq + 1000, 1) };
		assert_true(inflight_add(f, seq, r, 2));
		assert_int_equal(inflight_newest(f, r, 1), seq);
		if (seq > 1)
			inflight_retire(f, seq - 1);
	}
	inflight_destroy(f);
}

static void overflow_overlaps_everything(void **state)
{
	inflight *f = tracker(2);
	struct engine_range a[] = { range(0, 2) }, big[] = { range(10, 2), range(20, 2), range(30, 2) };
	struct engine_range elsewhere[] = { range(100, 2) };
	assert_true(inflight_add(f, 1, a, 1));
	assert_false(inflight_add(f, 2, big, 3));
	assert_int_equal(inflight_newest(f, elsewhere, 1), 2);
	assert_int_equal(inflight_newest(f, a, 1), 2);
	assert_int_equal(inflight_oldest(f), 1);
	assert_true(inflight_add(f, 3, a, 1));
	assert_int_equal(inflight_newest(f, a, 1), 3);
	assert_int_equal(inflight_newest(f, elsewhere, 1), 2);
	inflight_retire(f, 2);
	assert_int_equal(inflight_newest(f, elsewhere, 1), 0);
	assert_int_equal(inflight_newest(f, a, 1), 3);
	inflight_destroy(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(newest_overlapping),
		cmocka_unit_test(neighbours_do_not_overlap),
		cmocka_unit_test(retired_forgotten),
		cmocka_unit_test(room_reused),
		cmocka_unit_test(overflow_overlaps_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
