/* pool_table.c: the shim's book of memory pools (see pool_table.h). */
#include "pool_table.h"

#include "grow.h"

/* The entry of pool; the lock held. */
static struct pool_entry *find(struct pool_table *t, uint64_t pool)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].pool == pool)
			return &t->e[i];
	return NULL;
}

/* The entry of pool, added (device -1, not served) if new; the lock held.
 * NULL when out of memory. */
static struct pool_entry *entry(struct pool_table *t, uint64_t pool)
{
	struct pool_entry *e = find(t, pool);
	if (e)
		return e;
	struct pool_entry *grown = room_for_one(t->e, t->n, &t->cap, sizeof *grown, 8);
	if (!grown)
		return NULL;
	t->e = grown;
	e = &t->e[t->n++];
	*e = (struct pool_entry){ pool, -1, false };
	atomic_store(&t->size, t->n);
	return e;
}

void pool_table_created(struct pool_table *t, uint64_t pool, int device, bool plain)
{
	pthread_mutex_lock(&t->lock);
	struct pool_entry *e = entry(t, pool);
	if (e)
		*e = (struct pool_entry){ pool, device, plain };
	pthread_mutex_unlock(&t->lock);
}

void pool_table_destroyed(struct pool_table *t, uint64_t pool)
{
	pthread_mutex_lock(&t->lock);
	struct pool_entry *e = find(t, pool);
	if (e) {
		*e = t->e[--t->n];
		atomic_store(&t->size, t->n);
	}
	pthread_mutex_unlock(&t->lock);
}

void pool_table_shared(struct pool_table *t, uint64_t pool)
{
	pthread_mutex_lock(&t->lock);
	struct pool_entry *e = entry(t, pool);
	if (e)
		e->served = false;
	else /* only a pool the table did not hold (a default one) needs room */
		atomic_store(&t->defaults_unsure, true);
	pthread_mutex_unlock(&t->lock);
}

int pool_table_device(struct pool_table *t, uint64_t pool)
{
	if (!atomic_load(&t->size))
		return -1;
	pthread_mutex_lock(&t->lock);
	struct pool_entry *e = find(t, pool);
	int device = e ? e->device : -1;
	pthread_mutex_unlock(&t->lock);
	return device;
}

enum pool_verdict pool_table_verdict(struct pool_table *t, uint64_t pool, int device)
{
	enum pool_verdict v = POOL_IF_DEFAULT;
	if (atomic_load(&t->size)) {
		pthread_mutex_lock(&t->lock);
		struct pool_entry *e = find(t, pool);
		if (e)
			v = e->served && e->device == device ? POOL_SERVED : POOL_NOT_SERVED;
		pthread_mutex_unlock(&t->lock);
	}
	if (v == POOL_IF_DEFAULT && atomic_load(&t->defaults_unsure))
		v = POOL_NOT_SERVED;
	return v;
}
