/*
 * test_pool_table.c: the shim's book of memory pools (common/pool_table.c):
 * a pool created plain is served for its own device only, one of another
 * kind never; any pool is served no more once shared, a default one (not
 * in the table) included; a destroyed pool's handle, and one reused for a
 * pool of another kind, tell nothing of the old pool; many pools at once.
 */
#include "testutil.h"

#include "pool_table.h"

static void a_plain_pool_is_served_on_its_device(void **state)
{
	struct pool_table t = POOL_TABLE_INIT;
	assert_int_equal(pool_table_verdict(&t, 0x10, 0), POOL_IF_DEFAULT);
	assert_int_equal(pool_table_device(&t, 0x10), -1);
	pool_table_created(&t, 0x10, 1, true);
	pool_table_created(&t, 0x20, 1, false);
	assert_int_equal(pool_table_verdict(&t, 0x10, 1), POOL_SERVED);
	assert_int_equal(pool_table_verdict(&t, 0x10, 0), POOL_NOT_SERVED);
	assert_int_equal(pool_table_verdict(&t, 0x20, 1), POOL_NOT_SERVED);
	assert_int_equal(pool_table_device(&t, 0x20), 1);
	/* Any other handle: the caller asks whether it is a default pool. */
	assert_int_equal(pool_table_verdict(&t, 0x30, 1), POOL_IF_DEFAULT);
	free(t.e);
}

static void a_shared_pool_is_served_no_more(void **state)
{
	struct pool_table t = POOL_TABLE_INIT;
	pool_table_created(&t, 0x10, 0, true);
	pool_table_shared(&t, 0x10);
	assert_int_equal(pool_table_verdict(&t, 0x10, 0), POOL_NOT_SERVED);
	assert_int_equal(pool_table_device(&t, 0x10), 0); /* still its own */
	/* A default pool, which the table did not hold, shared. */
	pool_table_shared(&t, 0x40);
	assert_int_equal(pool_table_verdict(&t, 0x40, 0), POOL_NOT_SERVED);
	assert_int_equal(pool_table_device(&t, 0x40), -1);
	assert_int_equal(pool_table_verdict(&t, 0x50, 0), POOL_IF_DEFAULT);
	/* Where such a pool could not be noted, no default pool is served. */
	atomic_store(&t.defaults_unsure, true);
	assert_int_equal(pool_table_verdict(&t, 0x50, 0), POOL_NOT_SERVED);
	free(t.e);
}

static void a_handle_names_only_its_newest_pool(void **state)
{
	struct pool_table t = POOL_TABLE_INIT;
	pool_table_created(&t, 0x10, 0, true);
	pool_table_destroyed(&t, 0x10);
	assert_int_equal(pool_table_verdict(&t, 0x10, 0), POOL_IF_DEFAULT);
	assert_int_equal(atomic_load(&t.size), 0);
	pool_table_destroyed(&t, 0x10); /* twice: nothing there */
	/* Destroyed unseen (through the driver), its handle reused for an
	 * exportable pool: that one is the table's word. */
	pool_table_created(&t, 0x20, 0, true);
	pool_table_created(&t, 0x20, 0, false);
	assert_int_equal(pool_table_verdict(&t, 0x20, 0), POOL_NOT_SERVED);
	pool_table_shared(&t, 0x30);
	pool_table_created(&t, 0x30, 0, true); /* a new pool under a shared one's handle */
	assert_int_equal(pool_table_verdict(&t, 0x30, 0), POOL_SERVED);
	assert_int_equal(t.n, 2);
	free(t.e);
}

static void many_pools(void **state)
{
	struct pool_table t = POOL_TABLE_INIT;
	for (uint64_t p = 1; p <= 100; p++)
		pool_table_created(&t, p * 16, (int)(p % 4), p % 3 != 0);
	for (uint64_t p = 1; p <= 100; p += 2)
		pool_table_destroyed(&t, p * 16);
	assert_int_equal(t.n, 50);
	for (uint64_t p = 1; p <= 100; p++) {
		enum pool_verdict want = p % 2 ? POOL_IF_DEFAULT : p % 3 ? POOL_SERVED : POOL_NOT_SERVED;
		assert_int_equal(pool_table_verdict(&t, p * 16, (int)(p % 4)), want);
	}
	free(t.e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_plain_pool_is_served_on_its_device),
		cmocka_unit_test(a_shared_pool_is_served_no_more),
		cmocka_unit_test(a_handle_names_only_its_newest_pool),
		cmocka_unit_test(many_pools),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
