/*
 * addr_set.h: a set of address ranges that threads share, for the
 * allocations the shim must tell apart from the rest
 * (common/cuda/um_alloc.c): the program's own managed memory, asked by
 * start address, and the memory the runtime served instead of the arena,
 * asked by any address inside. The ranges never overlap. A sorted array
 * behind a mutex: a query while the set is empty takes no lock; an
 * insertion or removal moves the entries after it.
 */
#ifndef UMKIT_ADDR_SET_H
#define UMKIT_ADDR_SET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addr_range {
	uint64_t address, size;
};

struct addr_set {
	pthread_mutex_t lock;
	struct addr_range *a; /* sorted by address, no repeats */
	size_t n, cap;
	atomic_size_t size; /* n, for the lock-free empty check */
};

#define ADDR_SET_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0 }

/* Adds the range of size bytes at address. The ranges it overlaps go:
 * memory handed out again was freed, whether or not the set was told
 * (a free through the driver, a device reset). Returns 0, or -1 when out
 * of memory, the overlapped ranges gone all the same. */
int addr_set_add(struct addr_set *s, uint64_t address, uint64_t size);

/* Removes the range starting at address, its size in *size (size may be
 * NULL); returns whether it was there. */
bool addr_set_remove(struct addr_set *s, uint64_t address, uint64_t *size);

/* Whether a range starts at address. */
bool addr_set_has(struct addr_set *s, uint64_t address);

/* Whether a range holds address. */
bool addr_set_covers(struct addr_set *s, uint64_t address);

#endif
