/*
 * um_alloc.h: the allocator shim shared by libumrec.so and libumreplay.so.
 *
 * The library defines cudaMalloc, cudaMallocPitch, cudaMalloc3D,
 * cudaMallocManaged, cudaStreamAttachMemAsync, cudaFree, cudaMallocAsync,
 * cudaMallocFromPoolAsync and cudaFreeAsync (LD_PRELOAD puts these
 * definitions ahead of libcudart's; the pool calls it follows are
 * common/cuda/um_pools.h's)
 * and serves what it can from the arena (common/arena.h) over managed
 * memory, or over plain device memory with UMKIT_NO_MANAGED=1
 * (um_alloc.c says which requests the runtime serves instead). Pointers the arena did not hand out are
 * passed to the real functions, and so is every call after a
 * cudaDeviceReset that destroyed the arena's memory. Settings come from
 * the environment the launcher prepared: UMKIT_MAX_MANAGED (bytes),
 * UMKIT_NO_MANAGED.
 *
 * The tool registers hooks to see each allocation and free; the hooks run on
 * the allocating thread after the arena's lock is released.
 */
#ifndef UMKIT_UM_ALLOC_H
#define UMKIT_UM_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "addr_set.h"
#include "arena.h"
#include "um_alloc_stats.h"

struct um_alloc_hooks {
	void (*on_alloc)(const struct arena_alloc *a, const char *api, CUstream stream);
	void (*on_free)(const struct arena_alloc *a);
	/* The program is about to reset the device (cudaDeviceReset), which
	 * destroys the tool's streams and events with the program's: the
	 * tool's last chance to use them. arena_lost: the reset destroys the
	 * arena's memory too, on_free follows for each allocation still live,
	 * and the runtime serves the program from then on (not called again);
	 * false when the arena has mapped nothing yet, or mapped it in
	 * another context. Called on the resetting thread, with the context
	 * being reset current. NULL: nothing to do. */
	void (*on_device_reset)(bool arena_lost);
};

/* Installs hooks (may be called before or after the first allocation). */
void um_alloc_set_hooks(const struct um_alloc_hooks *hooks);

/* The process's arena, created on first use; NULL if it could not be. */
arena *um_alloc_arena(void);

/* The context the arena serves (the one current at the program's first
 * allocation); NULL until then. */
CUcontext um_alloc_context(void);

/* Makes the arena's context current where another (or none) is; returns
 * whether it did, for um_alloc_leave_context, which puts the calling
 * thread's back. */
bool um_alloc_enter_context(void);
void um_alloc_leave_context(bool entered);

/* Waits for the GPU's work in the arena's context, whichever context the
 * calling thread has current (at exit perhaps none, where another thread
 * trained), and in the current one too, which may be another GPU's. A
 * torn-down context has nothing to wait for. Before a forced flush of
 * CUPTI's activity records: kernels still queued would be handed over
 * without their times, and CUPTI never sends them again. */
void um_alloc_wait_for_gpu(void);

/* True when allocations are served from managed memory. */
bool um_alloc_managed(void);

/* Warns when the program's own PyTorch settings, as they stand when CUDA
 * starts, take its memory past this shim: the cache kept
 * (PYTORCH_NO_CUDA_MEMORY_CACHING not 1) with expandable segments on
 * (common/pytorch_conf.h), as a script may set them before importing
 * torch, after the launcher turned them off. consequence says what that
 * costs the run. */
void um_alloc_warn_unserved(const char *consequence);

/* The live allocations the runtime served in the arena's stead (another
 * context's, a pool's it does not stand in for, after a device reset),
 * for telling pointers from other words in a kernel's parameters. */
struct addr_set *um_alloc_foreign(void);

/* What serving the program's allocations has cost so far. */
void um_alloc_get_stats(struct um_alloc_stats *out);

#endif
