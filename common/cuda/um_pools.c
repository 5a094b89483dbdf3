/*
 * um_pools.c: the stream-ordered memory pools the arena stands in for
 * (see um_pools.h).
 *
 * The pools the program created plain, and those it shared with another
 * device or the host, are kept in a small table: programs make few pools.
 * A device's default and current pools are the runtime's to name, asked
 * at each allocation; a failed question is not left as the program's last
 * error (cudart_quiet).
 */
#include "um_pools.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cudart.h"

struct pool_entry {
	cudaMemPool_t pool;
	int device;   /* where a pool the program created lives; -1: not known */
	bool served;  /* false once shared, or created of another kind */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool_entry *table;
static size_t n_entries, cap_entries;
static atomic_size_t entries; /* n_entries, for the lock-free empty check */

/* The entry of pool; call with lock held. */
static struct pool_entry *find(cudaMemPool_t pool)
{
	for (size_t i = 0; i < n_entries; i++)
		if (table[i].pool == pool)
			return &table[i];
	return NULL;
}

/* Sets pool's entry, adding it if new; call with lock held. Returns false
 * when out of memory (a new entry only). */
static bool put(cudaMemPool_t pool, int device, bool served)
{
	struct pool_entry *e = find(pool);
	if (!e) {
		if (n_entries == cap_entries) {
			size_t cap = cap_entries ? 2 * cap_entries : 8;
			struct pool_entry *grown = realloc(table, cap * sizeof *grown);
			if (!grown)
				return false;
			table = grown;
			cap_entries = cap;
		}
		e = &table[n_entries++];
		atomic_store(&entries, n_entries);
	}
	*e = (struct pool_entry){ pool, device, served };
	return true;
}

static void drop(cudaMemPool_t pool)
{
	struct pool_entry *e = find(pool);
	if (e) {
		*e = table[--n_entries];
		atomic_store(&entries, n_entries);
	}
}

/* Set for good when a default pool shared with another device could not
 * be noted (out of memory): from then on no default pool is served. */
static atomic_bool defaults_unsure;

/* pool's allocations are the runtime's from now on. Only a pool with no
 * entry (a default one) can find no room. */
static void forget_served(cudaMemPool_t pool)
{
	pthread_mutex_lock(&lock);
	if (!put(pool, -1, false))
		atomic_store(&defaults_unsure, true);
	pthread_mutex_unlock(&lock);
}

static bool is_default(const struct cudart *rt, cudaMemPool_t pool, int device)
{
	cudaMemPool_t def;
	bool clean = cudart_clean();
	return cudart_quiet(clean, rt->DeviceGetDefaultMemPool(&def, device)) == cudaSuccess && def == pool;
}

bool um_pool_served(cudaMemPool_t pool, int device)
{
	const struct cudart *rt = cudart_get();
	if (!rt || !pool)
		return false;
	if (atomic_load(&entries)) {
		pthread_mutex_lock(&lock);
		struct pool_entry *e = find(pool);
		bool known = e != NULL, served = e && e->served && e->device == device;
		pthread_mutex_unlock(&lock);
		if (known)
			return served;
	}
	return !atomic_load(&defaults_unsure) && is_default(rt, pool, device);
}

bool um_pool_current_served(int device)
{
	const struct cudart *rt = cudart_get();
	cudaMemPool_t current;
	/* A device without pools: the arena serves cudaMallocAsync there as
	 * before pools were told apart. */
	if (!rt)
		return true;
	bool clean = cudart_clean();
	if (cudart_quiet(clean, rt->DeviceGetMemPool(&current, device)) != cudaSuccess)
		return true;
	return um_pool_served(current, device);
}

/* Pinned device memory and nothing more: no handle to export it to
 * another process, no cap on the pool's size, no special usage. */
static bool plain_props(const struct cudaMemPoolProps *p)
{
	return p->allocType == cudaMemAllocationTypePinned && p->handleTypes == cudaMemHandleTypeNone &&
	       p->location.type == cudaMemLocationTypeDevice && p->maxSize == 0 && p->usage == 0;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
	const struct cudart *rt = cudart_get();
	if (!rt)
		return cudaErrorInitializationError;
	cudaError_t err = rt->MemPoolCreate(pool, props);
	if (err != cudaSuccess)
		return err;
	/* An entry a pool destroyed through the driver left under the same
	 * handle is replaced. Out of memory, the new pool goes unnoted, and
	 * the runtime serves it. */
	pthread_mutex_lock(&lock);
	(void)put(*pool, props->location.id, plain_props(props));
	pthread_mutex_unlock(&lock);
	return err;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
	const struct cudart *rt = cudart_get();
	if (!rt)
		return cudaErrorInitializationError;
	cudaError_t err = rt->MemPoolDestroy(pool);
	if (err == cudaSuccess) {
		pthread_mutex_lock(&lock);
		drop(pool);
		pthread_mutex_unlock(&lock);
	}
	return err;
}

/* Whether desc gives a location other than pool's own device access. */
static bool shares(const struct cudart *rt, cudaMemPool_t pool, const struct cudaMemAccessDesc *desc)
{
	if (desc->flags == cudaMemAccessFlagsProtNone)
		return false;
	if (desc->location.type != cudaMemLocationTypeDevice)
		return true;
	int device = desc->location.id;
	pthread_mutex_lock(&lock);
	struct pool_entry *e = find(pool);
	int own = e ? e->device : -1;
	pthread_mutex_unlock(&lock);
	return own >= 0 ? own != device : !is_default(rt, pool, device);
}

/* Another device sharing a pool's memory is more than the arena, which
 * serves one device, stands for: the pool's allocations are the
 * runtime's from then on (those served before stay the arena's). */
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *descs, size_t count)
{
	const struct cudart *rt = cudart_get();
	if (!rt)
		return cudaErrorInitializationError;
	cudaError_t err = rt->MemPoolSetAccess(pool, descs, count);
	if (err != cudaSuccess)
		return err;
	for (size_t i = 0; i < count; i++)
		if (shares(rt, pool, &descs[i])) {
			forget_served(pool);
			break;
		}
	return err;
}
