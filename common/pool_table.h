/*
 * pool_table.h: the shim's book of the program's memory pools
 * (common/cuda/um_pools.c), by handle: the pools the program created, each
 * with its device and whether it is plain (device memory and nothing
 * more), and those it shared with another device or the host. What the
 * arena may stand in for follows: a pool created plain, for its own
 * device, until shared; a device's default pool, which the caller names
 * (the table does not know it), until shared; no other.
 *
 * Programs make few pools: a small array behind a mutex, read without the
 * lock while it is empty.
 */
#ifndef UMKIT_POOL_TABLE_H
#define UMKIT_POOL_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pool_entry {
	uint64_t pool;
	int device;  /* of a pool the program created; -1: not known */
	bool served; /* created plain, and not shared since */
};

struct pool_table {
	pthread_mutex_t lock;
	struct pool_entry *e;
	size_t n, cap;
	atomic_size_t size;          /* n, for the lock-free empty check */
	atomic_bool defaults_unsure; /* a shared pool could not be noted (out of
					memory): no default pool is served */
};

#define POOL_TABLE_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, false }

/* The program created pool on device, plain or not. It replaces an entry a
 * pool destroyed unseen (through the driver) left under the same handle;
 * out of memory, the pool goes unnoted, and is never served. */
void pool_table_created(struct pool_table *t, uint64_t pool, int device, bool plain);

/* The program destroyed pool: its handle may name another pool next. */
void pool_table_destroyed(struct pool_table *t, uint64_t pool);

/* Another device or the host was given access to pool: never served again. */
void pool_table_shared(struct pool_table *t, uint64_t pool);

/* The device of a pool the program created; -1 when not known. */
int pool_table_device(struct pool_table *t, uint64_t pool);

enum pool_verdict {
	POOL_SERVED,
	POOL_NOT_SERVED,
	POOL_IF_DEFAULT, /* a pool the table does not hold: served if it is
			    the device's default pool */
};

/* What the table says of an allocation from pool for device. */
enum pool_verdict pool_table_verdict(struct pool_table *t, uint64_t pool, int device);

#endif
