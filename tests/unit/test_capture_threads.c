/* Unit tests for the count of threads capturing on their per-thread
 * default stream. Each test leaves no thread counted. */
#include "testutil.h"

#include <pthread.h>

#include "capture_threads.h"

static void counted_once_however_many_beginnings(void **state)
{
	(void)state;
	assert_false(capture_threads_any());
	capture_threads_begin();
	capture_threads_begin();
	assert_true(capture_threads_any());
	capture_threads_end();
	assert_false(capture_threads_any());
	capture_threads_end(); /* an end without a counted beginning */
	assert_false(capture_threads_any());
}

static void refused_beginning_taken_back_only_if_it_counted(void **state)
{
	(void)state;
	capture_threads_begin();
	capture_threads_refused();
	assert_false(capture_threads_any());

	/* A second beginning, refused while the first capture runs, leaves
	 * the thread counted for the first. */
	capture_threads_begin();
	capture_threads_begin();
	capture_threads_refused();
	assert_true(capture_threads_any());
	capture_threads_end();
	assert_false(capture_threads_any());
}

static void refused_after_end_changes_nothing(void **state)
{
	(void)state;
	capture_threads_begin();
	capture_threads_end();
	capture_threads_refused();
	assert_false(capture_threads_any());
}

static void *begin_and_exit(void *arg)
{
	(void)arg;
	capture_threads_begin();
	return NULL;
}

static void *begin_and_end(void *arg)
{
	pthread_barrier_t *both_counted = arg;
	capture_threads_begin();
	pthread_barrier_wait(both_counted);
	pthread_barrier_wait(both_counted); /* the main thread looked */
	capture_threads_end();
	return NULL;
}

static void thread_exiting_inside_its_capture_is_uncounted(void **state)
{
	(void)state;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, begin_and_exit, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_false(capture_threads_any());
}

static void threads_counted_apart(void **state)
{
	(void)state;
	pthread_barrier_t both_counted;
	pthread_barrier_init(&both_counted, NULL, 2);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, begin_and_end, &both_counted), 0);
	capture_threads_begin();
	pthread_barrier_wait(&both_counted);
	capture_threads_end(); /* the other thread is still counted */
	assert_true(capture_threads_any());
	pthread_barrier_wait(&both_counted);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_false(capture_threads_any());
	pthread_barrier_destroy(&both_counted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counted_once_however_many_beginnings),
		cmocka_unit_test(refused_beginning_taken_back_only_if_it_counted),
		cmocka_unit_test(refused_after_end_changes_nothing),
		cmocka_unit_test(thread_exiting_inside_its_capture_is_uncounted),
		cmocka_unit_test(threads_counted_apart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
