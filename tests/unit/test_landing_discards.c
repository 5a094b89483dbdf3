/*
 * test_landing_discards.c: discards that may be in flight
 * (replay/landing_discards.c): a range waits for the newest batch that
 * discarded any of it, and for nothing once that batch has landed; ranges
 * dropped to keep the table bounded (half of it at a time, or a whole
 * batch larger than it) make every query wait for the newest batch they
 * belonged to until it lands; ranges at the top of the address space; a
 * batch said landed after a newer one was.
 */
#include "testutil.h"

#include "replay/landing_discards.h"

#define MB (UINT64_C(1) << 20)

static landing_discards *table(void)
{
	landing_discards *l = landing_discards_create();
	assert_non_null(l);
	return l;
}

static void a_range_waits_for_its_newest_batch(void **state)
{
	landing_discards *l = table();
	assert_int_equal(landing_discards_wait_for(l, 0, 2 * MB), 0);
	const struct engine_range one[] = { { 0, 2 * MB }, { 8 * MB, 4 * MB } };
	const struct engine_range two[] = { { 10 * MB, 2 * MB } };
	assert_int_equal(landing_discards_issued(l, one, 2), 1);
	assert_int_equal(landing_discards_issued(l, two, 1), 2);
	assert_int_equal(landing_discards_wait_for(l, 1 * MB, 4096), 1);
	assert_int_equal(landing_discards_wait_for(l, 11 * MB, 4 * MB), 2); /* both overlap: the newer */
	assert_int_equal(landing_discards_wait_for(l, 2 * MB, 6 * MB), 0);  /* between them, touching */
	landing_discards_landed(l, 1);
	assert_int_equal(landing_discards_wait_for(l, 0, 2 * MB), 0);
	assert_int_equal(landing_discards_wait_for(l, 8 * MB, 2 * MB), 0);
	assert_int_equal(landing_discards_wait_for(l, 10 * MB, 1), 2);
	landing_discards_landed(l, 2);
	assert_int_equal(landing_discards_wait_for(l, 10 * MB, 1), 0);
	landing_discards_destroy(l);
}

static void forgotten_ranges_wait_for_their_batch(void **state)
{
	landing_discards *l = table();
	struct engine_range r = { 0, 2 * MB };
	uint64_t last = 0;
	/* One range a batch, each 2 MiB further: the table overflows once,
	 * and its older half goes. */
	for (uint64_t i = 0; i <= LANDING_MAX_RANGES; i++, r.address += 2 * MB)
		last = landing_discards_issued(l, &r, 1);
	assert_int_equal(last, LANDING_MAX_RANGES + 1);
	const uint64_t forgot = LANDING_MAX_RANGES / 2, far = (LANDING_MAX_RANGES + 8) * 2 * MB;
	assert_int_equal(landing_discards_wait_for(l, far, 2 * MB), forgot);
	assert_int_equal(landing_discards_wait_for(l, 0, 2 * MB), forgot);
	assert_int_equal(landing_discards_wait_for(l, forgot * 2 * MB, 2 * MB), forgot + 1); /* kept */
	assert_int_equal(landing_discards_wait_for(l, LANDING_MAX_RANGES * 2 * MB, 2 * MB), last);
	landing_discards_landed(l, forgot);
	assert_int_equal(landing_discards_wait_for(l, far, 2 * MB), 0);
	assert_int_equal(landing_discards_wait_for(l, 0, 2 * MB), 0);
	assert_int_equal(landing_discards_wait_for(l, forgot * 2 * MB, 2 * MB), forgot + 1);
	/* A large batch into the half-full table drops the rest of the old. */
	struct engine_range *big = calloc(LANDING_MAX_RANGES, sizeof *big);
	assert_non_null(big);
	for (size_t i = 0; i < LANDING_MAX_RANGES; i++)
		big[i] = (struct engine_range){ (UINT64_C(1) << 40) + i * 2 * MB, 2 * MB };
	uint64_t large = landing_discards_issued(l, big, LANDING_MAX_RANGES);
	assert_int_equal(landing_discards_wait_for(l, far, 2 * MB), last); /* all older ones forgotten */
	assert_int_equal(landing_discards_wait_for(l, UINT64_C(1) << 40, 1), large);
	landing_discards_landed(l, last);
	assert_int_equal(landing_discards_wait_for(l, far, 2 * MB), 0);
	assert_int_equal(landing_discards_wait_for(l, UINT64_C(1) << 40, 1), large);
	free(big);
	landing_discards_destroy(l);
}

/* A table holding fewer than half its ranges, overflowed by one large
 * batch: what it held goes, and no more (the table's half would be more
 * than it has). A range of the old waits for the newest old batch, one
 * of the large batch for it. */
static void overflow_of_a_nearly_empty_table_drops_what_it_holds(void **state)
{
	landing_discards *l = table();
	struct engine_range r = { 0, 2 * MB };
	for (uint64_t i = 0; i < 10; i++, r.address += 2 * MB)
		assert_int_equal(landing_discards_issued(l, &r, 1), i + 1);
	const size_t n = LANDING_MAX_RANGES - 6;
	struct engine_range *big = calloc(n, sizeof *big);
	assert_non_null(big);
	for (size_t i = 0; i < n; i++)
		big[i] = (struct engine_range){ (UINT64_C(1) << 40) + i * 2 * MB, 2 * MB };
	assert_int_equal(landing_discards_issued(l, big, n), 11);
	assert_int_equal(landing_discards_wait_for(l, 0, 2 * MB), 10);
	assert_int_equal(landing_discards_wait_for(l, big[n - 1].address, 1), 11);
	landing_discards_landed(l, 10);
	assert_int_equal(landing_discards_wait_for(l, 0, 2 * MB), 0);
	assert_int_equal(landing_discards_wait_for(l, big[0].address, 1), 11);
	free(big);
	landing_discards_destroy(l);
}

static void a_batch_larger_than_the_table_is_forgotten(void **state)
{
	landing_discards *l = table();
	const struct engine_range first = { 0, 2 * MB };
	assert_int_equal(landing_discards_issued(l, &first, 1), 1);
	struct engine_range *big = calloc(LANDING_MAX_RANGES + 3, sizeof *big);
	assert_non_null(big);
	for (size_t i = 0; i < LANDING_MAX_RANGES + 3; i++)
		big[i] = (struct engine_range){ (i + 1) * 2 * MB, 2 * MB };
	assert_int_equal(landing_discards_issued(l, big, LANDING_MAX_RANGES + 3), 2);
	assert_int_equal(landing_discards_wait_for(l, UINT64_C(1) << 50, 1), 2);
	assert_int_equal(landing_discards_wait_for(l, 0, 1), 2);
	landing_discards_landed(l, 2);
	assert_int_equal(landing_discards_wait_for(l, 0, 1), 0);
	assert_int_equal(landing_discards_wait_for(l, 4 * MB, 1), 0);
	free(big);
	/* Ranges that end at the top of the address space overlap as well. */
	const struct engine_range top = { UINT64_MAX - 2 * MB + 1, 2 * MB };
	assert_int_equal(landing_discards_issued(l, &top, 1), 3);
	assert_int_equal(landing_discards_wait_for(l, UINT64_MAX - 4096 + 1, 4096), 3);
	assert_int_equal(landing_discards_wait_for(l, UINT64_MAX - 4 * MB, 2 * MB), 0);
	landing_discards_destroy(l);
}

/* Batches are found landed out of order: two allocating threads wait for
 * different batches, and the one that waited for the newer may say so
 * first (replay/cuda/rp_exec.c, wait_landed), or the issuing thread says
 * an old one landed (call_batch). The late word on an older batch changes
 * nothing: what the newer one dropped stays dropped, a forgotten batch
 * older than it is not waited for again, and a batch issued since still
 * is. */
static void a_late_older_batch_changes_nothing(void **state)
{
	landing_discards *l = table();
	const struct engine_range a = { 0, 2 * MB }, c = { 4 * MB, 2 * MB }, d = { 6 * MB, 2 * MB };
	assert_int_equal(landing_discards_issued(l, &a, 1), 1);
	struct engine_range *big = calloc(LANDING_MAX_RANGES + 1, sizeof *big);
	assert_non_null(big);
	for (size_t i = 0; i < LANDING_MAX_RANGES + 1; i++)
		big[i] = (struct engine_range){ (UINT64_C(1) << 40) + i * 2 * MB, 2 * MB };
	assert_int_equal(landing_discards_issued(l, big, LANDING_MAX_RANGES + 1), 2); /* forgotten */
	free(big);
	assert_int_equal(landing_discards_issued(l, &c, 1), 3);
	assert_int_equal(landing_discards_wait_for(l, c.address, 1), 3);
	assert_int_equal(landing_discards_wait_for(l, 1 << 30, 1), 2);

	landing_discards_landed(l, 3);
	landing_discards_landed(l, 1); /* late */
	assert_int_equal(landing_discards_wait_for(l, a.address, 1), 0);
	assert_int_equal(landing_discards_wait_for(l, c.address, 1), 0);
	assert_int_equal(landing_discards_wait_for(l, 1 << 30, 1), 0);

	assert_int_equal(landing_discards_issued(l, &d, 1), 4);
	landing_discards_landed(l, 2); /* late too */
	assert_int_equal(landing_discards_wait_for(l, d.address, 1), 4);
	assert_int_equal(landing_discards_wait_for(l, c.address, 1), 0);
	landing_discards_landed(l, 4);
	assert_int_equal(landing_discards_wait_for(l, d.address, 1), 0);
	landing_discards_destroy(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_range_waits_for_its_newest_batch),
		cmocka_unit_test(forgotten_ranges_wait_for_their_batch),
		cmocka_unit_test(a_batch_larger_than_the_table_is_forgotten),
		cmocka_unit_test(overflow_of_a_nearly_empty_table_drops_what_it_holds),
		cmocka_unit_test(a_late_older_batch_changes_nothing),
	};
	return cmocka_run_group_tests_name("landing_discards", tests, NULL, NULL);
}
