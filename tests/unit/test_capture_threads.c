/* Unit tests for the count of threads capturing on their per-thread
 * default stream. Each test leaves no thread counted. */
#include "testutil.h"

#include <pthread.h>
#include <sys/wait.h>

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

static void *begin_end_and_exit(void *arg)
{
	(void)arg;
	capture_threads_begin();
	capture_threads_end();
	return NULL;
}

/* Begins a capture, then waits twice at the barrier (once counted, once
 * the main thread has looked) before it ends it. */
static void *begin_wait_and_end(void *arg)
{
	pthread_barrier_t *barrier = arg;
	capture_threads_begin();
	pthread_barrier_wait(barrier);
	pthread_barrier_wait(barrier);
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

/* Uncounted once: at its end, not again at its exit, which would leave
 * the count below zero and the next capturing thread unseen. */
static void thread_that_ended_is_not_uncounted_at_exit(void **state)
{
	(void)state;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, begin_end_and_exit, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	capture_threads_begin();
	assert_true(capture_threads_any());
	capture_threads_end();
	assert_false(capture_threads_any());
}

/* A forked child has the forking thread alone: another thread's capture
 * is not its own. */
static void forked_child_counts_the_forking_thread_alone(void **state)
{
	(void)state;
	pthread_barrier_t barrier;
	pthread_barrier_init(&barrier, NULL, 2);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, begin_wait_and_end, &barrier), 0);
	pthread_barrier_wait(&barrier);
	assert_true(capture_threads_any());
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(capture_threads_any() ? 1 : 0);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	pthread_barrier_wait(&barrier);
	assert_int_equal(pthread_join(t, NULL), 0);
	pthread_barrier_destroy(&barrier);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(capture_threads_any());
}

static void threads_counted_apart(void **state)
{
	(void)state;
	pthread_barrier_t both_counted;
	pthread_barrier_init(&both_counted, NULL, 2);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, begin_wait_and_end, &both_counted), 0);
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
		cmocka_unit_test(thread_that_ended_is_not_uncounted_at_exit),
		cmocka_unit_test(threads_counted_apart),
		cmocka_unit_test(forked_child_counts_the_forking_thread_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
