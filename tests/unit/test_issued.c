/*
 * test_issued.c: prefetch jobs the worker has issued (replay/issued.c): a
 * slot holds the newest ticket published there and never goes back; a
 * wait returns at once for a published ticket, wakes when another thread
 * publishes, and gives up after its timeout; a launch waits only when
 * faulting its bytes in would take longer than the worker's queue.
 */
#include "testutil.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "replay/issued.h"

#define MS (UINT64_C(1000000))

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void slots_hold_the_newest_ticket(void **state)
{
	issued_tickets *t = issued_create(4);
	assert_non_null(t);
	assert_int_equal(issued_get(t, 3), 0);
	issued_publish(t, 3);
	assert_int_equal(issued_get(t, 3), 3);
	assert_int_equal(issued_get(t, 7), 3); /* same slot, not yet issued */
	assert_int_equal(issued_get(t, 2), 0);
	issued_publish(t, 7);
	assert_int_equal(issued_get(t, 3), 7); /* reused: 3 is long issued */
	issued_publish(t, 3);                  /* late: never goes back */
	assert_int_equal(issued_get(t, 7), 7);
	issued_destroy(t);
	assert_null(issued_create(0));
	issued_destroy(NULL);
}

static void wait_returns_at_once_when_issued(void **state)
{
	issued_tickets *t = issued_create(8);
	issued_publish(t, 5);
	uint64_t t0 = now_ns();
	assert_int_equal(issued_wait(t, 5, 10000 * MS), 5);
	assert_int_equal(issued_wait(t, 13, 0), 5); /* no time to wait */
	assert_true(now_ns() - t0 < 1000 * MS);
	issued_destroy(t);
}

static void wait_gives_up_after_its_timeout(void **state)
{
	issued_tickets *t = issued_create(8);
	issued_publish(t, 1);
	uint64_t t0 = now_ns();
	assert_int_equal(issued_wait(t, 9, 30 * MS), 1);
	uint64_t took = now_ns() - t0;
	assert_true(took >= 30 * MS);
	assert_true(took < 3000 * MS);
	issued_destroy(t);
}

struct publisher {
	issued_tickets *t;
	uint64_t first, last;
};

/* Publishes first .. last, a millisecond apart. */
static void *publish_later(void *arg)
{
	struct publisher *p = arg;
	for (uint64_t k = p->first; k <= p->last; k++) {
		usleep(1000);
		issued_publish(p->t, k);
	}
	return NULL;
}

static void wait_wakes_when_the_worker_publishes(void **state)
{
	issued_tickets *t = issued_create(64);
	struct publisher p = { t, 1, 20 };
	pthread_t th;
	uint64_t t0 = now_ns();
	assert_int_equal(pthread_create(&th, NULL, publish_later, &p), 0);
	/* Tickets published before the one waited for wake the waiter
	 * without satisfying it. */
	assert_int_equal(issued_wait(t, 20, 60000 * MS), 20);
	assert_true(now_ns() - t0 < 30000 * MS);
	pthread_join(th, NULL);
	for (uint64_t k = 1; k <= 20; k++)
		assert_int_equal(issued_get(t, k), k);
	issued_destroy(t);
}

#define MB (UINT64_C(1) << 20)

static void waiting_pays_when_faulting_costs_more(void **state)
{
	/* 64 MB fault in at 4.3 GB/s in about 15.6 ms; 64 MB of evictions
	 * ahead take about 6.7 ms. */
	assert_true(issued_worth_waiting(64 * MB, 64 * MB, 64 * MB));
	/* 10 MB: 2.4 ms of faults against 10 ms of evictions. */
	assert_false(issued_worth_waiting(10 * MB, 100 * MB, 10 * MB));
	/* An empty queue: the prefetch is about to be issued. */
	assert_true(issued_worth_waiting(2 * MB, 0, 0));
	assert_false(issued_worth_waiting(0, 0, 0));
	/* Prefetches ahead count at their own, faster rate. */
	assert_true(issued_worth_waiting(10 * MB, 0, 100 * MB));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slots_hold_the_newest_ticket),
		cmocka_unit_test(wait_returns_at_once_when_issued),
		cmocka_unit_test(wait_gives_up_after_its_timeout),
		cmocka_unit_test(wait_wakes_when_the_worker_publishes),
		cmocka_unit_test(waiting_pays_when_faulting_costs_more),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
