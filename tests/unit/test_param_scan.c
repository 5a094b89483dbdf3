/*
 * test_param_scan.c: finding the arena pointers in a kernel's parameters
 * (common/param_scan.c): words inside struct parameters, offsets into
 * allocations, words ruled out once they hold something else (the padding
 * of PyTorch's functors), zeros never ruled out, nor the runtime's memory;
 * stale words of large
 * parameters found but not steady; the cap on what one launch keeps, which
 * a whole multi-tensor list fits.
 */
#include "testutil.h"

#include <string.h>

#include "param_scan.h"

/* An arena over address space only: nothing is dereferenced. */
static uint64_t next_base = (uint64_t)1 << 44;

static int map_fn(void *ctx, uint64_t bytes, uint64_t *base)
{
	*base = next_base;
	next_base += bytes;
	return 0;
}

static bool unmap_fn(void *ctx, uint64_t base, uint64_t bytes) { return true; }
static uint64_t fence_record(void *ctx) { return 1; }
static bool fence_done(void *ctx, uint64_t token) { return true; }
static bool fence_wait(void *ctx, uint64_t token) { return true; }

static arena *new_arena(void)
{
	struct arena_config cfg = { 0 };
	struct arena_backend b = { .map = map_fn, .unmap = unmap_fn, .fence_record = fence_record,
				   .fence_done = fence_done, .fence_wait = fence_wait };
	arena *a = arena_create(&cfg, &b);
	assert_non_null(a);
	return a;
}

static uint64_t alloc(arena *a, uint64_t size)
{
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, size, &out), ARENA_OK);
	return out.address;
}

/* The memory the runtime served, for scan. */
static struct addr_set *foreign;

/* Scans words[] as one parameter at byte base; returns how many it found. */
static uint32_t scan(param_slots *s, arena *a, uint32_t base, const uint64_t *words, size_t n,
		     struct param_arg *found, uint32_t cap)
{
	struct param_args out = { found, 0, cap, false };
	param_scan(s, a, foreign, base, (const unsigned char *)words, n * 8, &out);
	return out.n;
}

static void pointers_inside_structs(void **state)
{
	arena *a = new_arena();
	uint64_t x = alloc(a, 1000), y = alloc(a, 5 << 20);
	/* int + padding, a pointer, a float, a pointer into y's middle */
	uint64_t words[] = { 7, x, 0x3f800000, y + 4096 };
	struct param_arg found[8];
	assert_int_equal(scan(NULL, a, 16, words, 4, found, 8), 2);
	assert_int_equal(found[0].param_offset, 24);
	assert_int_equal(found[0].alloc.address, x);
	assert_int_equal(found[0].offset, 0);
	assert_int_equal(found[1].param_offset, 40);
	assert_int_equal(found[1].alloc.size, 5 << 20);
	assert_int_equal(found[1].offset, 4096);
	arena_destroy(a);
}

static void padding_is_ruled_out(void **state)
{
	/* With the runtime's memory known (none here), as the shim scans. */
	struct addr_set none = ADDR_SET_INIT;
	foreign = &none;
	arena *a = new_arena();
	uint64_t x = alloc(a, 1 << 20), y = alloc(a, 1 << 20);
	param_slots *s = param_slots_create(64);
	assert_non_null(s);
	struct param_arg found[4];
	/* A float with stale pointer bits above it: by chance inside y. */
	uint64_t launch1[] = { y + 0x3f8e38e4 % (1 << 20), x };
	assert_int_equal(scan(s, a, 8, launch1, 2, found, 4), 2);
	/* Next launch: the same word holds a non-address; the pointer word 0. */
	uint64_t launch2[] = { 0x7f00000000003f8eULL, 0 };
	assert_int_equal(scan(s, a, 8, launch2, 2, found, 4), 0);
	/* From now on the padding word is no pointer, even when it looks like
	 * one; the word that held 0 still is. */
	uint64_t launch3[] = { y + 64, x + 8 };
	assert_int_equal(scan(s, a, 8, launch3, 2, found, 4), 1);
	assert_int_equal(found[0].param_offset, 16);
	assert_int_equal(found[0].alloc.address, x);
	/* Another function's slots know nothing of it. */
	param_slots *other = param_slots_create(64);
	assert_int_equal(scan(other, a, 8, launch3, 2, found, 4), 2);
	param_slots_destroy(other);
	param_slots_destroy(s);
	arena_destroy(a);
	foreign = NULL;
}

/* A kernel given memory the runtime served (a pool's the arena does not
 * stand in for) and, at another launch, the arena's: the word is a
 * pointer, found whenever it points into the arena, never steady again.
 * Without knowing that memory, it would be ruled out as padding. */
static void runtime_memory_is_no_padding(void **state)
{
	struct addr_set runtime = ADDR_SET_INIT;
	uint64_t theirs = (uint64_t)1 << 40;
	assert_int_equal(addr_set_add(&runtime, theirs, 4 << 20), 0);
	arena *a = new_arena();
	uint64_t x = alloc(a, 1 << 20);
	struct param_arg found[4];
	for (int known = 0; known < 2; known++) {
		param_slots *s = param_slots_create(64);
		foreign = known ? &runtime : NULL;
		uint64_t launch1[] = { x, 1 << 20 }, launch2[] = { theirs + 64, 1 << 20 };
		assert_int_equal(scan(s, a, 0, launch1, 2, found, 4), 1);
		assert_true(found[0].steady);
		assert_int_equal(scan(s, a, 0, launch2, 2, found, 4), 0);
		assert_int_equal(scan(s, a, 0, launch1, 2, found, 4), known);
		if (known)
			assert_false(found[0].steady);
		/* Just past the runtime's memory is no address: ruled out. */
		uint64_t launch3[] = { theirs + (4 << 20), 1 << 20 };
		assert_int_equal(scan(s, a, 0, launch3, 2, found, 4), 0);
		assert_int_equal(scan(s, a, 0, launch1, 2, found, 4), 0);
		param_slots_destroy(s);
	}
	foreign = NULL;
	free(runtime.a);
	arena_destroy(a);
}

static void large_parameters_stale_words_not_steady(void **state)
{
	arena *a = new_arena();
	uint64_t x = alloc(a, 1 << 20), y = alloc(a, 2 << 20);
	param_slots *s = param_slots_create(4096);
	struct param_arg found[16];
	/* A multi-tensor list of 9 words (72 bytes): unused slots hold junk. */
	uint64_t list[9] = { x, 0x1234567, 0xdeadbeef00 };
	assert_int_equal(scan(s, a, 0, list, 9, found, 16), 1);
	assert_true(found[0].steady);
	/* The junk slots hold tensors now: still found, never ruled out, but
	 * not steady; nor is a slot that held 0 (words 3..8). */
	list[1] = x + 100, list[2] = x + 200, list[3] = y;
	assert_int_equal(scan(s, a, 0, list, 9, found, 16), 4);
	assert_int_equal(found[2].offset, 200);
	assert_true(found[0].steady);
	assert_false(found[1].steady);
	assert_false(found[2].steady);
	assert_int_equal(found[3].alloc.address, y);
	assert_false(found[3].steady);
	/* A small parameter's zero word stays steady (an optional pointer). */
	param_slots *small = param_slots_create(64);
	uint64_t two[2] = { 0, x };
	assert_int_equal(scan(small, a, 0, two, 2, found, 16), 1);
	two[0] = y;
	assert_int_equal(scan(small, a, 0, two, 2, found, 16), 2);
	assert_true(found[0].steady && found[1].steady);
	/* Without slots every word is steady. */
	assert_int_equal(scan(NULL, a, 0, list, 9, found, 16), 4);
	assert_true(found[1].steady && found[3].steady);
	param_slots_destroy(small);
	param_slots_destroy(s);
	arena_destroy(a);
}

static void cap_truncates(void **state)
{
	arena *a = new_arena();
	uint64_t x = alloc(a, 1 << 20);
	uint64_t words[] = { x, x + 1, x + 2, x + 3 };
	struct param_arg found[2];
	struct param_args out = { found, 0, 2, false };
	param_scan(NULL, a, NULL, 0, (const unsigned char *)words, sizeof words, &out);
	assert_int_equal(out.n, 2);
	assert_true(out.truncated);
	/* Trailing bytes short of a word are not read as one. */
	struct param_args rest = { found, 0, 2, false };
	param_scan(NULL, a, NULL, 0, (const unsigned char *)words, 7, &rest);
	assert_int_equal(rest.n, 0);
	arena_destroy(a);
}

/* PyTorch's multi-tensor list for AdamW (depth 4: parameters, gradients
 * and the two moments, 36 tensors each), then the tensors' sizes and the
 * block maps: 144 addresses in one 4 KB parameter, every one kept. */
static void multi_tensor_list_kept_whole(void **state)
{
	enum { DEPTH = 4, TENSORS = 36 };
	struct {
		uint64_t addresses[DEPTH][TENSORS];
		int64_t numel[TENSORS];
		unsigned char block_to_tensor[320];
		int32_t block_to_chunk[320];
		int32_t start_tensor;
	} list;
	memset(&list, 0, sizeof list);
	arena *a = new_arena();
	for (int d = 0; d < DEPTH; d++)
		for (int t = 0; t < TENSORS; t++)
			list.addresses[d][t] = alloc(a, 4096);
	for (int t = 0; t < TENSORS; t++)
		list.numel[t] = 1024;
	for (int b = 0; b < 320; b++)
		list.block_to_tensor[b] = (unsigned char)(b % TENSORS), list.block_to_chunk[b] = b / TENSORS;
	assert_true(sizeof list <= 4096);
	param_slots *s = param_slots_create(sizeof list);
	static struct param_arg found[PARAM_MAX_POINTERS];
	struct param_args out = { found, 0, PARAM_MAX_POINTERS, false };
	param_scan(s, a, NULL, 0, (const unsigned char *)&list, sizeof list, &out);
	assert_int_equal(out.n, DEPTH * TENSORS);
	assert_false(out.truncated);
	assert_int_equal(found[DEPTH * TENSORS - 1].alloc.address, list.addresses[DEPTH - 1][TENSORS - 1]);
	/* The 64 words umrec kept before fd27a38 held the 36 parameters and
	 * 28 of the gradients, and none of the moments. */
	struct param_args old = { found, 0, 64, false };
	param_scan(s, a, NULL, 0, (const unsigned char *)&list, sizeof list, &old);
	assert_true(old.truncated);
	param_slots_destroy(s);
	arena_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pointers_inside_structs),
		cmocka_unit_test(padding_is_ruled_out),
		cmocka_unit_test(runtime_memory_is_no_padding),
		cmocka_unit_test(large_parameters_stale_words_not_steady),
		cmocka_unit_test(cap_truncates),
		cmocka_unit_test(multi_tensor_list_kept_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
