/*
 * test_block_heap.c: the simulator's min-heap (plan/block_heap.c): entries
 * come out by key, then by block, as the scans it replaced chose them;
 * block_heap_keep drops what its test rejects and keeps the order; random
 * pushes and pops match a sorted array.
 */
#include "testutil.h"

#include "plan/block_heap.h"

static void pops_by_key_then_block(void **state)
{
	struct block_heap h = { 0 };
	struct block_key x;
	assert_false(block_heap_top(&h, &x));
	block_heap_pop(&h); /* empty: nothing */
	const struct block_key in[] = { { 5, 2 }, { 3, 9 }, { 5, 1 }, { 3, 4 }, { 7, 0 } };
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(block_heap_push(&h, in[i].key, in[i].block), 0);
	const struct block_key out[] = { { 3, 4 }, { 3, 9 }, { 5, 1 }, { 5, 2 }, { 7, 0 } };
	for (size_t i = 0; i < 5; i++) {
		assert_true(block_heap_top(&h, &x));
		assert_true(x.key == out[i].key && x.block == out[i].block);
		block_heap_pop(&h);
	}
	assert_false(block_heap_top(&h, &x));
	block_heap_free(&h);
}

static bool odd_block(const void *ctx, struct block_key x)
{
	(void)ctx;
	return x.block % 2;
}

static void keep_drops_and_reorders(void **state)
{
	struct block_heap h = { 0 };
	for (size_t b = 0; b < 100; b++)
		assert_int_equal(block_heap_push(&h, 1000 - b, b), 0);
	block_heap_keep(&h, odd_block, NULL);
	assert_int_equal(h.n, 50);
	struct block_key x;
	for (size_t b = 99; b < 100; b -= 2) {
		assert_true(block_heap_top(&h, &x));
		assert_int_equal(x.block, b);
		block_heap_pop(&h);
	}
	assert_false(block_heap_top(&h, &x));
	block_heap_free(&h);
}

static int by_key_block(const void *a, const void *b)
{
	const struct block_key *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->block > y->block) - (x->block < y->block);
}

static void matches_a_sorted_array(void **state)
{
	struct block_heap h = { 0 };
	struct block_key ref[4096], x;
	size_t n = 0;
	uint64_t r = 12345;
	for (int step = 0; step < 20000; step++) {
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		if ((r >> 60) < 10 && n < 4096) {
			uint64_t key = (r >> 20) % 64;
			size_t block = (size_t)((r >> 8) % 512);
			assert_int_equal(block_heap_push(&h, key, block), 0);
			ref[n++] = (struct block_key){ key, block };
			qsort(ref, n, sizeof *ref, by_key_block);
		} else if (n) {
			assert_true(block_heap_top(&h, &x));
			assert_true(x.key == ref[0].key && x.block == ref[0].block);
			block_heap_pop(&h);
			memmove(ref, ref + 1, --n * sizeof *ref);
		}
		assert_int_equal(h.n, n);
	}
	block_heap_free(&h);
}

/* block_heap_keep on heaps of every size from 1 to 300 entries, random
 * keys and blocks: what comes out is the sorted survivors, nothing
 * dropped coming back (the array past the heap's end still holds the
 * dropped entries, where a sift that looked one child too far found
 * them). */
static void keep_matches_the_sorted_survivors(void **state)
{
	static struct block_key ref[300];
	uint64_t r = 777;
	for (size_t size = 1; size <= 300; size++) {
		struct block_heap h = { 0 };
		size_t n = 0;
		for (size_t i = 0; i < size; i++) {
			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			uint64_t key = (r >> 20) % 50;
			size_t block = (size_t)((r >> 40) % 1000);
			assert_int_equal(block_heap_push(&h, key, block), 0);
			if (block % 2)
				ref[n++] = (struct block_key){ key, block };
		}
		block_heap_keep(&h, odd_block, NULL);
		assert_int_equal(h.n, n);
		qsort(ref, n, sizeof *ref, by_key_block);
		struct block_key x;
		for (size_t i = 0; i < n; i++) {
			assert_true(block_heap_top(&h, &x));
			if (x.key != ref[i].key || x.block != ref[i].block)
				fail_msg("heap of %zu: entry %zu is (%llu, %zu), not (%llu, %zu)", size, i,
					 (unsigned long long)x.key, x.block, (unsigned long long)ref[i].key,
					 ref[i].block);
			block_heap_pop(&h);
		}
		assert_false(block_heap_top(&h, &x));
		block_heap_free(&h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pops_by_key_then_block),
		cmocka_unit_test(keep_drops_and_reorders),
		cmocka_unit_test(matches_a_sorted_array),
		cmocka_unit_test(keep_matches_the_sorted_survivors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
