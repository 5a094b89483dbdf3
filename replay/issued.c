/* issued.c: prefetch jobs the worker has issued (see issued.h). */
#include "issued.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

/* Bytes per second, measured on the H100 (issued.h). */
#define FAULT_BPS 4.3e9
#define EVICT_BPS 10e9
#define PREFETCH_BPS 48e9

struct issued_tickets {
	pthread_mutex_t lock;
	pthread_cond_t published; /* on the monotonic clock */
	size_t n;
	_Atomic uint64_t *slot;   /* read without the lock by issued_get */
};

issued_tickets *issued_create(size_t slots)
{
	if (!slots)
		return NULL;
	issued_tickets *t = calloc(1, sizeof *t);
	if (t && !(t->slot = calloc(slots, sizeof *t->slot))) {
		free(t);
		return NULL;
	}
	if (!t)
		return NULL;
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&t->published, &attr);
	pthread_condattr_destroy(&attr);
	pthread_mutex_init(&t->lock, NULL);
	t->n = slots;
	return t;
}

void issued_destroy(issued_tickets *t)
{
	if (!t)
		return;
	pthread_cond_destroy(&t->published);
	pthread_mutex_destroy(&t->lock);
	free(t->slot);
	free(t);
}

void issued_publish(issued_tickets *t, uint64_t ticket)
{
	_Atomic uint64_t *s = &t->slot[ticket % t->n];
	pthread_mutex_lock(&t->lock);
	if (atomic_load_explicit(s, memory_order_relaxed) < ticket)
		atomic_store_explicit(s, ticket, memory_order_release);
	pthread_cond_broadcast(&t->published);
	pthread_mutex_unlock(&t->lock);
}

uint64_t issued_get(issued_tickets *t, uint64_t ticket)
{
	return atomic_load_explicit(&t->slot[ticket % t->n], memory_order_acquire);
}

uint64_t issued_wait(issued_tickets *t, uint64_t ticket, uint64_t timeout_ns)
{
	uint64_t now = issued_get(t, ticket);
	if (now >= ticket || !timeout_ns)
		return now;
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	uint64_t ns = (uint64_t)until.tv_nsec + timeout_ns;
	until.tv_sec += (time_t)(ns / 1000000000u);
	until.tv_nsec = (long)(ns % 1000000000u);
	pthread_mutex_lock(&t->lock);
	while ((now = issued_get(t, ticket)) < ticket)
		if (pthread_cond_timedwait(&t->published, &t->lock, &until) != 0)
			break;
	pthread_mutex_unlock(&t->lock);
	return issued_get(t, ticket);
}

bool issued_worth_waiting(uint64_t needed, uint64_t evict_backlog, uint64_t prefetch_backlog)
{
	double fault_s = (double)needed / FAULT_BPS;
	double queue_s = (double)evict_backlog / EVICT_BPS + (double)prefetch_backlog / PREFETCH_BPS;
	return fault_s > queue_s;
}
