/*
 * um_pools.c: the stream-ordered memory pools the arena stands in for
 * (see um_pools.h).
 *
 * What the program did with its pools is kept in a pool_table
 * (common/pool_table.h). A device's default and current pools are the
 * runtime's to name, asked at each allocation; a failed question is not
 * left as the program's last error (cudart_quiet).
 */
#include "um_pools.h"

#include <stdint.h>

#include "cudart.h"
#include "pool_table.h"

static struct pool_table pools = POOL_TABLE_INIT;

static uint64_t handle(cudaMemPool_t pool)
{
	return (uint64_t)(uintptr_t)pool;
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
	switch (pool_table_verdict(&pools, handle(pool), device)) {
	case POOL_SERVED:
		return true;
	case POOL_IF_DEFAULT:
		return is_default(rt, pool, device);
	default:
		return false;
	}
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
	pool_table_created(&pools, handle(*pool), props->location.id, plain_props(props));
	return err;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
	const struct cudart *rt = cudart_get();
	if (!rt)
		return cudaErrorInitializationError;
	cudaError_t err = rt->MemPoolDestroy(pool);
	if (err == cudaSuccess)
		pool_table_destroyed(&pools, handle(pool));
	return err;
}

/* Whether desc gives a location other than pool's own device access. */
static bool shares(const struct cudart *rt, cudaMemPool_t pool, const struct cudaMemAccessDesc *desc)
{
	if (desc->flags == cudaMemAccessFlagsProtNone)
		return false;
	if (desc->location.type != cudaMemLocationTypeDevice)
		return true;
	int device = desc->location.id, own = pool_table_device(&pools, handle(pool));
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
			pool_table_shared(&pools, handle(pool));
			break;
		}
	return err;
}
