/*
 * thread.h: starting the injected libraries' own threads.
 *
 * A thread starts with its creator's signal mask, and the creator is one
 * of the traced program's threads: without blocking them, a signal sent to
 * the process (a ^C, a profiler's timer) could run the program's handler
 * on a thread the program does not know, as the handler does not expect.
 */
#ifndef UMKIT_THREAD_H
#define UMKIT_THREAD_H

#include <pthread.h>
#include <signal.h>

/* pthread_create, with every signal blocked in the new thread. Returns
 * pthread_create's result. */
static inline int thread_start_unsignalled(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

#endif
