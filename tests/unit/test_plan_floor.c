/*
 * Unit tests for the capacity floor (plan/floor.c) on iterations built by
 * hand, whose windows can be worked out on paper. The property that no
 * schedule beats it, on every fixture, is test_plan_sim's.
 */
#include "testutil.h"

#include "plan/floor.h"

#define MS 1000000ull

/* Four kernels of 1 ms each, one after another, over three tensors of 100
 * bytes: A lives the whole cycle (used by kernels 0 and 3), B is made at
 * kernel 0 and freed at 3 (used by 0 and 2), C is made at 1 and freed at
 * 3 (used by 1 and 2). Evictions move 100 bytes a millisecond. */
static struct tensor tensors[3] = {
	{ .origin = PLAN_ALLOC_PERSISTENT, .bytes = 100, .alloc_pos = 0, .live_len = 4 },
	{ .origin = PLAN_ALLOC_ITERATION, .bytes = 100, .alloc_pos = 0, .live_len = 3, .freed = true },
	{ .origin = PLAN_ALLOC_ITERATION, .bytes = 100, .alloc_pos = 1, .live_len = 2, .freed = true },
};
static uint32_t first[5] = { 0, 2, 3, 5, 6 };
static uint32_t used[6] = { 0, 1, /* k1 */ 2, /* k2 */ 1, 2, /* k3 */ 0 };
static uint64_t start_ns[5] = { 0, 1 * MS, 2 * MS, 3 * MS, 4 * MS };
static uint64_t end_ns[5] = { 1 * MS, 2 * MS, 3 * MS, 4 * MS, 4 * MS };

static struct capacity_floor floor_at(uint64_t capacity)
{
	struct tensor_set ts = { .n_pos = 4, .n = 3, .t = tensors };
	struct access_set a = { .n_pos = 4, .first = first, .tensor = used, .n_refs = 6 };
	struct vital v = { .n_pos = 4, .start_ns = start_ns, .end_ns = end_ns, .cycle_ns = 4 * MS };
	struct capacity_floor f;
	assert_int_equal(capacity_floor(&ts, &a, &v, capacity, 100000, &f), 0);
	return f;
}

/* At 150 bytes, kernel 1 needs A, B and C held since kernel 0 began (all
 * three live there): 150 bytes must leave first, 1.5 ms of the link, in
 * the 1 ms kernel 0 takes. The iteration takes at least 4.5 ms. */
static void the_tightest_window_sets_the_floor(void **state)
{
	struct capacity_floor f = floor_at(150);
	assert_int_equal(f.kernel_ns, 4 * MS);
	assert_int_equal(f.from, 0);
	assert_int_equal(f.to, 1);
	assert_int_equal(f.evict_bytes, 150);
	assert_int_equal(f.window_kernel_ns, 1 * MS);
	assert_int_equal(f.ns, 4 * MS + MS / 2);
	assert_int_equal(f.starts_tried, 4);
}

/* With room for all three, or for a kernel's own tensors where they are
 * more than the capacity (kernel 0 and 2 use 200 bytes), nothing needs
 * evicting before its kernel can spare the time: the kernels set it. */
static void room_enough_leaves_the_kernels(void **state)
{
	struct capacity_floor f = floor_at(300);
	assert_int_equal(f.ns, 4 * MS);
	assert_int_equal(f.evict_bytes, 0);
	/* At 200 bytes kernel 1 needs 100 evicted in 1 ms: no excess. */
	f = floor_at(200);
	assert_int_equal(f.ns, 4 * MS);
	assert_int_equal(f.evict_bytes, 0);
	/* At 50, below every kernel's own tensors: kernel 1 keeps its own
	 * 100 (C), so 200 bytes leave before it, 2 ms, in kernel 0's 1 ms. */
	f = floor_at(50);
	assert_int_equal(f.ns, 5 * MS);
	assert_int_equal(f.evict_bytes, 200);
}

/* Bytes kept on the host never migrate: with B on the host whole (its
 * host part from offset 0), kernel 1 holds A and C alone, 50 bytes over
 * 150, which leave in 0.5 ms, within kernel 0's 1 ms. */
static void host_bytes_are_left_out(void **state)
{
	tensors[1].host = true;
	struct capacity_floor f = floor_at(150);
	tensors[1].host = false;
	assert_int_equal(f.evict_bytes, 0);
	assert_int_equal(f.ns, 4 * MS);
}

/* A long iteration strides its window starts, keeping the work under
 * FLOOR_MAX_WORK pairs: 5000 kernels of 1 us, no tensors. */
static void long_iterations_stride_their_starts(void **state)
{
	enum { P = 5000 };
	static uint32_t none[P + 1];
	static uint64_t s[P + 1], e[P + 1];
	for (uint32_t k = 0; k <= P; k++) {
		s[k] = k * 1000ull;
		e[k] = k < P ? s[k] + 1000 : s[k];
	}
	struct tensor_set ts = { .n_pos = P };
	struct access_set a = { .n_pos = P, .first = none };
	struct vital v = { .n_pos = P, .start_ns = s, .end_ns = e, .cycle_ns = P * 1000ull };
	struct capacity_floor f;
	assert_int_equal(capacity_floor(&ts, &a, &v, 1, 100000, &f), 0);
	uint64_t stride = (uint64_t)P * (P + 1) / FLOOR_MAX_WORK + 1;
	assert_true(stride > 1);
	assert_int_equal(f.starts_tried, (P + stride - 1) / stride);
	assert_int_equal(f.ns, P * 1000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_tightest_window_sets_the_floor),
		cmocka_unit_test(room_enough_leaves_the_kernels),
		cmocka_unit_test(host_bytes_are_left_out),
		cmocka_unit_test(long_iterations_stride_their_starts),
	};
	return cmocka_run_group_tests_name("plan_floor", tests, NULL, NULL);
}
