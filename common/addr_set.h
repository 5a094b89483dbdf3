/*
 * addr_set.h: a set of addresses that threads share, for the allocations
 * the shim must tell apart from the rest (the program's own managed
 * memory, common/cuda/um_alloc.c: every tensor, with PyTorch on it). A
 * sorted array behind a mutex: a query while the set is empty takes no
 * lock; an insertion or removal moves the entries after it.
 */
#ifndef UMKIT_ADDR_SET_H
#define UMKIT_ADDR_SET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addr_set {
	pthread_mutex_t lock;
	uint64_t *a; /* sorted, no repeats */
	size_t n, cap;
	atomic_size_t size; /* n, for the lock-free empty check */
};

#define ADDR_SET_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0 }

/* Adds address (already there: nothing to do). Returns 0, or -1 when out
 * of memory, the set as it was. */
int addr_set_add(struct addr_set *s, uint64_t address);

/* Removes address; returns whether it was there. */
bool addr_set_remove(struct addr_set *s, uint64_t address);

bool addr_set_has(struct addr_set *s, uint64_t address);

#endif
