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

/* Two windows apart, each too short for its evictions, stall the
 * iteration one after the other. Six kernels of 1 ms over four tensors of
 * 200 bytes, made and freed within the iteration: A lives at kernels 0-1
 * (used by 0), B at 1 (used by 1), C at 3-4 (used by 3), D at 4 (used by
 * 4). At 200 bytes, kernel 1 needs A's 200 bytes gone in kernel 0's 1 ms,
 * 2 ms at 100 bytes a millisecond; kernel 4 needs C's gone in kernel 3's.
 * No one window holds both (A and B are freed before D is made), so the
 * tightest alone gives 1 ms; the two together, 2. */
static void disjoint_windows_add_up(void **state)
{
	static struct tensor four[4] = {
		{ .origin = PLAN_ALLOC_ITERATION, .bytes = 200, .alloc_pos = 0, .live_len = 2, .freed = true },
		{ .origin = PLAN_ALLOC_ITERATION, .bytes = 200, .alloc_pos = 1, .live_len = 1, .freed = true },
		{ .origin = PLAN_ALLOC_ITERATION, .bytes = 200, .alloc_pos = 3, .live_len = 2, .freed = true },
		{ .origin = PLAN_ALLOC_ITERATION, .bytes = 200, .alloc_pos = 4, .live_len = 1, .freed = true },
	};
	static uint32_t by_kernel[7] = { 0, 1, 2, 2, 3, 4, 4 };
	static uint32_t uses[4] = { 0, 1, 2, 3 };
	static uint64_t s[7], e[7];
	for (uint32_t k = 0; k <= 6; k++) {
		s[k] = k * MS;
		e[k] = k < 6 ? s[k] + MS : s[k];
	}
	struct tensor_set ts = { .n_pos = 6, .n = 4, .t = four };
	struct access_set a = { .n_pos = 6, .first = by_kernel, .tensor = uses, .n_refs = 4 };
	struct vital v = { .n_pos = 6, .start_ns = s, .end_ns = e, .cycle_ns = 6 * MS };
	struct capacity_floor f;
	assert_int_equal(capacity_floor(&ts, &a, &v, 200, 100000, &f), 0);
	/* The tightest window alone: the first, 200 bytes in 1 ms. */
	assert_int_equal(f.from, 0);
	assert_int_equal(f.to, 1);
	assert_int_equal(f.evict_bytes, 200);
	assert_int_equal(f.window_kernel_ns, 1 * MS);
	assert_int_equal(f.n_windows, 2);
	assert_int_equal(f.windows[0].from, 0);
	assert_int_equal(f.windows[0].to, 1);
	assert_int_equal(f.windows[1].from, 3);
	assert_int_equal(f.windows[1].to, 4);
	assert_int_equal(f.windows[1].evict_bytes, 200);
	assert_int_equal(f.windows[1].kernel_ns, 1 * MS);
	assert_int_equal(f.ns, 8 * MS);
	/* At 400 bytes neither needs anything evicted. */
	assert_int_equal(capacity_floor(&ts, &a, &v, 400, 100000, &f), 0);
	assert_int_equal(f.n_windows, 0);
	assert_int_equal(f.ns, 6 * MS);
}

/* More disjoint windows than a floor keeps: 40 groups of three 1 ms
 * kernels, each group's first two as kernels 0 and 1 above (A then B, 200
 * bytes each, freed before the next group), each window 1 ms short. The
 * floor keeps FLOOR_MAX_WINDOWS of them, in order, and adds up only
 * those: a lower floor, never a wrong one. */
static void windows_past_the_most_kept_are_dropped(void **state)
{
	enum { N = 40, P = 3 * N };
	static struct tensor t[2 * N];
	static uint32_t by_kernel[P + 1], uses[2 * N];
	static uint64_t s[P + 1], e[P + 1];
	for (uint32_t i = 0; i < N; i++) {
		t[2 * i] = (struct tensor){ .origin = PLAN_ALLOC_ITERATION, .bytes = 200, .alloc_pos = 3 * i,
					    .live_len = 2, .freed = true };
		t[2 * i + 1] = (struct tensor){ .origin = PLAN_ALLOC_ITERATION, .bytes = 200, .alloc_pos = 3 * i + 1,
						.live_len = 1, .freed = true };
		uses[2 * i] = 2 * i;
		uses[2 * i + 1] = 2 * i + 1;
	}
	for (uint32_t k = 0; k <= P; k++) {
		/* Kernel 3i uses A_i, 3i + 1 uses B_i, 3i + 2 nothing. */
		by_kernel[k] = 2 * (k / 3) + (k % 3 ? 1 : 0) + (k % 3 == 2 ? 1 : 0);
		s[k] = k * MS;
		e[k] = k < P ? s[k] + MS : s[k];
	}
	struct tensor_set ts = { .n_pos = P, .n = 2 * N, .t = t };
	struct access_set a = { .n_pos = P, .first = by_kernel, .tensor = uses, .n_refs = 2 * N };
	struct vital v = { .n_pos = P, .start_ns = s, .end_ns = e, .cycle_ns = P * MS };
	struct capacity_floor f;
	assert_int_equal(capacity_floor(&ts, &a, &v, 200, 100000, &f), 0);
	assert_int_equal(f.n_windows, FLOOR_MAX_WINDOWS);
	for (size_t i = 1; i < f.n_windows; i++)
		assert_true(f.windows[i - 1].to <= f.windows[i].from);
	assert_int_equal(f.ns, (uint64_t)(P + FLOOR_MAX_WINDOWS) * MS);
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
		cmocka_unit_test(disjoint_windows_add_up),
		cmocka_unit_test(windows_past_the_most_kept_are_dropped),
		cmocka_unit_test(long_iterations_stride_their_starts),
	};
	return cmocka_run_group_tests_name("plan_floor", tests, NULL, NULL);
}
