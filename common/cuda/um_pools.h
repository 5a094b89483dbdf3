/*
 * um_pools.h: the stream-ordered memory pools the arena stands in for.
 *
 * An allocation from a pool (cudaMallocFromPoolAsync, or cudaMallocAsync
 * through the device's current pool) may be the arena's when all the pool
 * promises is device memory of one device: the device's default pool, or
 * a pool the program created pinned on a device with no export handle
 * type, no size cap and no special usage. Not once another device or the
 * host is given access to it (cudaMemPoolSetAccess), and never a pool of
 * another kind (exportable to other processes, capped, on the host,
 * managed) or one created through the driver API, which this library does
 * not see: what the program asked of those pools the arena could not
 * keep, so their allocations stay the runtime's.
 *
 * The library defines cudaMemPoolCreate, cudaMemPoolDestroy and
 * cudaMemPoolSetAccess to keep that list; each calls the runtime's first.
 */
#ifndef UMKIT_UM_POOLS_H
#define UMKIT_UM_POOLS_H

#include <stdbool.h>

#include <cuda_runtime_api.h>

/* Whether the arena may serve an allocation from pool for device. */
bool um_pool_served(cudaMemPool_t pool, int device);

/* Whether the arena may serve cudaMallocAsync on device: its current pool
 * (cudaDeviceSetMemPool, cudaMemSetMemPool) is one it stands in for. */
bool um_pool_current_served(int device);

#endif
