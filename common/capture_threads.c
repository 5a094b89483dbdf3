/*
 * capture_threads.c: threads capturing on their per-thread default stream
 * (see capture_threads.h).
 */
#include "capture_threads.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int counted;

/* Whether the calling thread is counted, and whether its last beginning
 * counted it. */
static __thread bool counted_here, begin_counted;

/* Non-NULL for a thread while it is counted: the destructor, run at the
 * thread's exit, uncounts a thread that never ended its capture. Without
 * a key, or room for the thread's value (the process has none left), such
 * a thread stays counted. */
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static bool exit_key_made;

static void uncount_at_exit(void *value)
{
	(void)value;
	/* Its __thread storage lives until the key destructors have run: an
	 * end that a later destructor makes is then a no-op. */
	counted_here = false;
	atomic_fetch_sub(&counted, 1);
}

/* A forked child has the forking thread alone. */
static void count_forking_thread_only(void)
{
	atomic_store(&counted, counted_here ? 1 : 0);
}

static void make_exit_key(void)
{
	exit_key_made = pthread_key_create(&exit_key, uncount_at_exit) == 0;
	pthread_atfork(NULL, NULL, count_forking_thread_only);
}

void capture_threads_begin(void)
{
	begin_counted = !counted_here;
	if (!begin_counted)
		return;
	counted_here = true;
	atomic_fetch_add(&counted, 1);
	pthread_once(&exit_key_once, make_exit_key);
	if (exit_key_made)
		pthread_setspecific(exit_key, &counted);
}

void capture_threads_refused(void)
{
	if (begin_counted)
		capture_threads_end();
}

void capture_threads_end(void)
{
	if (!counted_here)
		return;
	counted_here = false;
	if (exit_key_made)
		pthread_setspecific(exit_key, NULL);
	atomic_fetch_sub(&counted, 1);
}

bool capture_threads_any(void)
{
	return atomic_load(&counted) > 0;
}
