/*
 * test_pending_discards.c: discards waiting for their markers
 * (replay/pending_discards.c): taken only once their marker completed, in
 * order, at most as many as asked; forgotten, 2 MB block by block, where
 * their range gets a new owner, even one freed again before the old marker
 * completes; a full queue refuses.
 */
#include "testutil.h"

#include "replay/pending_discards.h"

#define MB (UINT64_C(1) << 20)

/* Markers up to this one have completed. */
static uint64_t completed;

static bool done(uint64_t mark)
{
	return mark <= completed;
}

static pending_discards *queue(size_t cap)
{
	pending_discards *p = pending_discards_create(cap);
	assert_non_null(p);
	completed = 0;
	return p;
}

static void taken_when_marker_completes(void **state)
{
	pending_discards *p = queue(8);
	struct engine_range out[8];
	assert_true(pending_discards_add(p, 1, (struct engine_range){ 0 * MB, 2 * MB }));
	assert_true(pending_discards_add(p, 3, (struct engine_range){ 2 * MB, 2 * MB }));
	assert_true(pending_discards_add(p, 2, (struct engine_range){ 4 * MB, 2 * MB }));
	assert_int_equal(pending_discards_take_ready(p, done, out, 8), 0);
	completed = 2;
	assert_int_equal(pending_discards_take_ready(p, done, out, 8), 2);
	assert_int_equal(out[0].address, 0 * MB);
	assert_int_equal(out[1].address, 4 * MB);
	assert_int_equal(pending_discards_count(p), 1);
	completed = 3;
	assert_int_equal(pending_discards_take_ready(p, done, out, 8), 1);
	assert_int_equal(out[0].address, 2 * MB);
	assert_int_equal(pending_discards_count(p), 0);
	pending_discards_destroy(p);
}

static void take_at_most_max(void **state)
{
	pending_discards *p = queue(8);
	struct engine_range out[2];
	for (uint64_t i = 0; i < 5; i++)
		assert_true(pending_discards_add(p, 1, (struct engine_range){ i * 2 * MB, 2 * MB }));
	completed = 1;
	assert_int_equal(pending_discards_take_ready(p, done, out, 2), 2);
	assert_int_equal(out[1].address, 2 * MB);
	assert_int_equal(pending_discards_count(p), 3);
	pending_discards_destroy(p);
}

/* The race the H100 showed: A freed (discard pending behind A's marker),
 * B allocated in the same range, B's kernels queued, B freed; A's marker
 * completes while B's kernels still read the range. Allocating B must
 * have forgotten the discard of the 2 MB block B is in, and only that:
 * the block before it, freed with A, is still discarded (the whole range
 * was forgotten until session 77). */
static void new_owner_forgets_its_block(void **state)
{
	pending_discards *p = queue(8);
	struct engine_range out[8];
	assert_true(pending_discards_add(p, 1, (struct engine_range){ 10 * MB, 4 * MB }));
	assert_true(pending_discards_add(p, 1, (struct engine_range){ 20 * MB, 2 * MB }));
	/* B overlaps the first range's last byte only. */
	assert_int_equal(pending_discards_forget(p, 14 * MB - 1, 512), 1);
	completed = 1;
	assert_int_equal(pending_discards_take_ready(p, done, out, 8), 2);
	assert_int_equal(out[0].address, 10 * MB);
	assert_int_equal(out[0].bytes, 2 * MB);
	assert_int_equal(out[1].address, 20 * MB);
	pending_discards_destroy(p);
}

/* A new owner in the middle of a pending range cuts it in two, the part
 * after it in a slot of its own; with no slot free, that part is
 * forgotten too, a second run of blocks left undiscarded (it went
 * uncounted). One covering the whole range forgets it. */
static void new_owner_in_the_middle(void **state)
{
	for (size_t cap = 1; cap <= 2; cap++) {
		pending_discards *p = queue(cap);
		struct engine_range out[2];
		assert_true(pending_discards_add(p, 1, (struct engine_range){ 0, 8 * MB }));
		assert_int_equal(pending_discards_forget(p, 4 * MB + 4096, 512), cap == 1 ? 2 : 1);
		completed = 1;
		assert_int_equal(pending_discards_take_ready(p, done, out, 2), cap);
		assert_int_equal(out[0].address, 0);
		assert_int_equal(out[0].bytes, 4 * MB);
		if (cap == 2) {
			assert_int_equal(out[1].address, 6 * MB);
			assert_int_equal(out[1].bytes, 2 * MB);
		}
		pending_discards_destroy(p);
	}
	pending_discards *p = queue(2);
	assert_true(pending_discards_add(p, 1, (struct engine_range){ 2 * MB, 4 * MB }));
	assert_int_equal(pending_discards_forget(p, 1 * MB, 6 * MB), 1);
	assert_int_equal(pending_discards_count(p), 0);
	pending_discards_destroy(p);
}

/* A new owner of one byte, a block's first, forgets that whole block and
 * not the one before it: rounding the owner's end up to a block boundary
 * (where its last byte is the boundary) would forget nothing. */
static void one_byte_owner_forgets_its_block(void **state)
{
	pending_discards *p = queue(8);
	struct engine_range out[8];
	assert_true(pending_discards_add(p, 1, (struct engine_range){ 10 * MB, 4 * MB }));
	assert_int_equal(pending_discards_forget(p, 12 * MB, 1), 1);
	completed = 1;
	assert_int_equal(pending_discards_take_ready(p, done, out, 8), 1);
	assert_int_equal(out[0].address, 10 * MB);
	assert_int_equal(out[0].bytes, 2 * MB);
	pending_discards_destroy(p);
}

/* The last blocks of the address space: a range may end at 2^64
 * (engine_ranges_overlap), and a new owner reaching into the last block
 * forgets both blocks it touches (block_end of the last block wraps to 0,
 * and compared with that end nothing was forgotten). */
static void new_owner_at_the_top(void **state)
{
	const uint64_t top_block = UINT64_MAX - 2 * MB + 1;
	pending_discards *p = queue(8);
	struct engine_range out[8];
	assert_true(pending_discards_add(p, 1, (struct engine_range){ top_block - 4 * MB, 4 * MB }));
	assert_true(pending_discards_add(p, 1, (struct engine_range){ top_block, 2 * MB }));
	assert_int_equal(pending_discards_forget(p, top_block - 4096, 8192), 2);
	completed = 1;
	assert_int_equal(pending_discards_take_ready(p, done, out, 8), 1);
	assert_true(out[0].address == top_block - 4 * MB);
	assert_int_equal(out[0].bytes, 2 * MB);
	pending_discards_destroy(p);
}

static void neighbours_kept(void **state)
{
	pending_discards *p = queue(8);
	assert_true(pending_discards_add(p, 1, (struct engine_range){ 10 * MB, 2 * MB }));
	assert_int_equal(pending_discards_forget(p, 8 * MB, 2 * MB), 0);  /* ends where it starts */
	assert_int_equal(pending_discards_forget(p, 12 * MB, 2 * MB), 0); /* starts where it ends */
	assert_int_equal(pending_discards_forget(p, 11 * MB, 0), 0);      /* empty */
	assert_int_equal(pending_discards_count(p), 1);
	pending_discards_destroy(p);
}

static void full_refuses(void **state)
{
	pending_discards *p = queue(2);
	struct engine_range r = { 0, 2 * MB };
	assert_true(pending_discards_add(p, 1, r));
	assert_true(pending_discards_add(p, 1, r));
	assert_false(pending_discards_add(p, 1, r));
	assert_int_equal(pending_discards_count(p), 2);
	pending_discards_destroy(p);
}

/* At the replayer's end every pending discard goes, each counted. */
static void clear_counts_every_discard(void **state)
{
	pending_discards *p = queue(8);
	assert_true(pending_discards_add(p, 1, (struct engine_range){ 0 * MB, 4 * MB }));
	assert_true(pending_discards_add(p, 2, (struct engine_range){ 8 * MB, 2 * MB }));
	assert_int_equal(pending_discards_clear(p), 2);
	assert_int_equal(pending_discards_count(p), 0);
	assert_int_equal(pending_discards_clear(p), 0);
	pending_discards_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(taken_when_marker_completes),
		cmocka_unit_test(take_at_most_max),
		cmocka_unit_test(new_owner_forgets_its_block),
		cmocka_unit_test(new_owner_in_the_middle),
		cmocka_unit_test(one_byte_owner_forgets_its_block),
		cmocka_unit_test(new_owner_at_the_top),
		cmocka_unit_test(neighbours_kept),
		cmocka_unit_test(full_refuses),
		cmocka_unit_test(clear_counts_every_discard),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
