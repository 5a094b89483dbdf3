/*
 * test_evicting.c: evictions on their way out of the GPU
 * (replay/evicting.c): a discard-and-prefetch may land ahead of the newest
 * of them while their bytes fit the room it is given and none shares a 2 MB
 * block with it, behind the older ones; jobs are forgotten oldest first as
 * they land, never past one that has not; a job whose ranges could not be
 * kept (memory ran out) must land before anything goes ahead of the jobs
 * after it.
 */
#include "testutil.h"

#include "failing_alloc.h"
#include "replay/evicting.h"

#define MB (UINT64_C(1) << 20)

static evicting *queue(void)
{
	evicting *v = evicting_create();
	assert_non_null(v);
	return v;
}

/* Jobs up to *ctx have landed. */
static bool landed_upto(void *ctx, uint64_t job)
{
	return job <= *(uint64_t *)ctx;
}

static void nothing_evicting_leaves_any_room_enough(void **state)
{
	evicting *v = queue();
	const struct engine_range r = { 0, 2 * MB };
	assert_int_equal(evicting_must_land(v, &r, 1, 0), 0);
	assert_int_equal(evicting_bytes(v), 0);
	evicting_destroy(v);
}

static void the_evictions_must_fit_the_room(void **state)
{
	evicting *v = queue();
	const struct engine_range out[] = { { 64 * MB, 4 * MB }, { 80 * MB, 2 * MB } };
	const struct engine_range fresh = { 0, 2 * MB };
	assert_int_equal(evicting_queued(v, out, 2), 1);
	assert_int_equal(evicting_bytes(v), 6 * MB);
	assert_int_equal(evicting_must_land(v, &fresh, 1, 6 * MB), 0);
	assert_int_equal(evicting_must_land(v, &fresh, 1, 6 * MB - 1), 1);
	evicting_destroy(v);
}

/* Sharing a 2 MB block, not a byte, is what counts: the eviction would
 * move the whole block's pages, the new tensor's among them. */
static void a_shared_block_keeps_it_behind(void **state)
{
	evicting *v = queue();
	const struct engine_range out = { 4 * MB + 4096, 4096 };
	const struct engine_range same_block = { 5 * MB, MB };
	const struct engine_range next_block = { 6 * MB, 2 * MB };
	const struct engine_range before = { 2 * MB, 2 * MB };
	const struct engine_range across[] = { { 0, MB }, { 3 * MB, 2 * MB } };
	evicting_queued(v, &out, 1);
	assert_int_equal(evicting_must_land(v, &same_block, 1, UINT64_MAX), 1);
	assert_int_equal(evicting_must_land(v, across, 2, UINT64_MAX), 1);
	assert_int_equal(evicting_must_land(v, &next_block, 1, UINT64_MAX), 0);
	assert_int_equal(evicting_must_land(v, &before, 1, UINT64_MAX), 0);
	evicting_destroy(v);
}

/* The newest jobs that fit the room go ahead; the one that would not fit
 * beside them, or that touches the range, must land, and the older ones
 * with it. */
static void it_waits_for_the_oldest_that_make_its_room(void **state)
{
	evicting *v = queue();
	const struct engine_range out[] = { { 0, 4 * MB }, { 16 * MB, 4 * MB }, { 32 * MB, 4 * MB } };
	const struct engine_range fresh = { 64 * MB, 2 * MB }, beside_second = { 18 * MB, 2 * MB };
	for (int i = 0; i < 3; i++)
		evicting_queued(v, &out[i], 1);
	assert_int_equal(evicting_must_land(v, &fresh, 1, 12 * MB), 0);
	assert_int_equal(evicting_must_land(v, &fresh, 1, 12 * MB - 1), 1);
	assert_int_equal(evicting_must_land(v, &fresh, 1, 8 * MB), 1);
	assert_int_equal(evicting_must_land(v, &fresh, 1, 4 * MB), 2);
	assert_int_equal(evicting_must_land(v, &fresh, 1, 4 * MB - 1), 3);
	assert_int_equal(evicting_must_land(v, &beside_second, 1, UINT64_MAX), 2);
	evicting_destroy(v);
}

static void landed_jobs_go_oldest_first(void **state)
{
	evicting *v = queue();
	const struct engine_range a = { 0, 2 * MB }, b = { 8 * MB, 4 * MB }, c = { 16 * MB, 2 * MB };
	uint64_t upto = 0;
	evicting_queued(v, &a, 1);
	evicting_queued(v, &b, 1);
	evicting_queued(v, &c, 1);
	evicting_drop_landed(v, landed_upto, &upto);
	assert_int_equal(evicting_bytes(v), 8 * MB);
	upto = 2;
	evicting_drop_landed(v, landed_upto, &upto);
	assert_int_equal(evicting_bytes(v), 2 * MB);
	assert_int_equal(evicting_must_land(v, &a, 1, 2 * MB), 0);
	assert_int_equal(evicting_must_land(v, &c, 1, UINT64_MAX), 3);
	upto = 3;
	evicting_drop_landed(v, landed_upto, &upto);
	assert_int_equal(evicting_bytes(v), 0);
	assert_int_equal(evicting_must_land(v, &c, 1, 0), 0);
	/* Emptied, it takes jobs again from the front. */
	assert_int_equal(evicting_queued(v, &a, 1), 4);
	assert_int_equal(evicting_must_land(v, &a, 1, UINT64_MAX), 4);
	evicting_destroy(v);
}

/* Only the oldest end is dropped: a newer job said landed before an older
 * one has stays, as the stream lands them in order. */
static void a_job_behind_an_unlanded_one_stays(void **state)
{
	evicting *v = queue();
	const struct engine_range a = { 0, 2 * MB }, b = { 8 * MB, 2 * MB };
	evicting_queued(v, &a, 1);
	evicting_queued(v, &b, 1);
	evicting_drop_landed(v, landed_upto, &(uint64_t){ 0 });
	assert_int_equal(evicting_bytes(v), 4 * MB);
	evicting_destroy(v);
}

/* Many jobs queued and landed in turn: the table reuses its front. */
static void a_long_run_stays_small(void **state)
{
	evicting *v = queue();
	uint64_t upto = 0;
	for (uint64_t i = 0; i < 10000; i++) {
		const struct engine_range r = { i * 2 * MB, 2 * MB };
		evicting_queued(v, &r, 1);
		upto = i; /* every job but the newest has landed */
		evicting_drop_landed(v, landed_upto, &upto);
		assert_int_equal(evicting_bytes(v), 2 * MB);
	}
	evicting_destroy(v);
}

static void a_job_not_kept_holds_everything_back(void **state)
{
	evicting *v = queue();
	const struct engine_range a = { 0, 2 * MB }, far = { 64 * MB, 2 * MB };
	uint64_t upto = 0;
	malloc_fails = true;
	assert_int_equal(evicting_queued(v, &a, 1), 1);
	malloc_fails = false;
	assert_int_equal(evicting_must_land(v, &far, 1, UINT64_MAX), 1);
	evicting_queued(v, &a, 1);
	evicting_drop_landed(v, landed_upto, &upto);
	assert_int_equal(evicting_must_land(v, &far, 1, UINT64_MAX), 1);
	upto = 1;
	evicting_drop_landed(v, landed_upto, &upto);
	assert_int_equal(evicting_must_land(v, &far, 1, UINT64_MAX), 0);
	assert_int_equal(evicting_must_land(v, &a, 1, UINT64_MAX), 2);
	evicting_destroy(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_evicting_leaves_any_room_enough),
		cmocka_unit_test(the_evictions_must_fit_the_room),
		cmocka_unit_test(a_shared_block_keeps_it_behind),
		cmocka_unit_test(it_waits_for_the_oldest_that_make_its_room),
		cmocka_unit_test(landed_jobs_go_oldest_first),
		cmocka_unit_test(a_job_behind_an_unlanded_one_stays),
		cmocka_unit_test(a_long_run_stays_small),
		cmocka_unit_test(a_job_not_kept_holds_everything_back),
	};
	return cmocka_run_group_tests_name("evicting", tests, NULL, NULL);
}
