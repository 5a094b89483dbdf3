/*
 * thread_scratch.h: a buffer of one size for each thread that asks, made
 * at its first call and freed when it exits.
 *
 * For the injected libraries' callbacks, which run on the program's own
 * threads: the program may have made a thread's stack small
 * (pthread_attr_setstacksize), too small for the tens of KiB a launch's
 * decoding takes. Not a __thread array either: the libraries are
 * preloaded, and glibc carves a preloaded library's thread-local storage
 * out of every thread's stack, launching or not (with 64 KiB of it, glibc
 * 2.36 refused to create a thread with a 32 KiB stack: EINVAL).
 */
#ifndef UMKIT_THREAD_SCRATCH_H
#define UMKIT_THREAD_SCRATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct thread_scratch {
	size_t size;
	atomic_bool made; /* key holds each thread's buffer */
	pthread_key_t key;
};

#define THREAD_SCRATCH_INIT(bytes) { .size = (bytes) }

/* The calling thread's buffer of s->size bytes, its contents left from
 * its last use; NULL without memory for it, or without a key for it (a
 * process that used up its keys). */
void *thread_scratch_get(struct thread_scratch *s);

#endif
