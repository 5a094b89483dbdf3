/*
 * driver_allocs.h: GPU memory the program gets past the shim, seen as the
 * driver calls that make it.
 *
 * The shim serves the runtime's allocation calls that the program imports
 * dynamically (common/cuda/um_alloc.h). Memory can come from elsewhere:
 * the driver API called directly (PyTorch's expandable segments map their
 * memory with cuMemCreate, turned on at run time by
 * torch.cuda.memory._set_allocator_settings, past both launchers' and
 * libraries' checks of the environment), or a library's own static CUDA
 * runtime, whose cudaMalloc calls cuMemAlloc. Such memory is plain device
 * memory: not recorded, not managed, outside the budget. Managed memory
 * from cuMemAllocManaged is counted apart: the driver migrates and evicts
 * it as it does the arena's, so it holds none of the GPU for good, but
 * umkit neither records nor plans it. These calls are counted when CUPTI
 * reports them (the tools subscribe to them; an idle replay, which has no
 * subscription, sees none), for meta.driver_allocs and
 * meta.driver_managed_allocs and the replay's statistics; each is logged
 * at debug level, and the first mapping with cuMemCreate and the first
 * managed allocation are warned of. The calls that give such memory back
 * (cuMemFree*, cuMemRelease) are followed too, for the most of each kind
 * the program held at once: the device memory's is GPU memory the budget
 * never had (umplan's default capacity leaves it out). A pool's memory
 * counts as given back at its free, a mapping's at its handle's release,
 * though the pool may keep it reserved and the mapping keep it until
 * unmapped; the rest at its context's destruction too. CUDA arrays
 * (cuArrayCreate, cuArray3DCreate, cuMipmappedArrayCreate, behind
 * cudaMallocArray and its kin) are not counted: their size is the
 * driver's layout, which the creating call does not report (it would take
 * a cuArrayGetMemoryRequirements per array).
 *
 * The tools' own runtime allocations (the arena's memory, those the shim
 * hands to the runtime, which um_alloc counts apart) reach the driver too;
 * they are told apart by cudart_own_allocation.
 */
#ifndef UMKIT_DRIVER_ALLOCS_H
#define UMKIT_DRIVER_ALLOCS_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>
#include <cupti.h>

/* Enables subscriber's callbacks at the allocating driver calls and at
 * those that free.
 * consequence completes the warnings: what that memory costs the tool's
 * run. */
CUptiResult driver_allocs_enable(CUpti_SubscriberHandle subscriber, const char *consequence);

/* Whether cbid is one of those calls (a driver-API callback id). */
bool driver_allocs_cbid(CUpti_CallbackId cbid);

/* At such a call's callback: at its exit, counts what it granted of the
 * GPU's memory, unless the tools made it (cudart_own_allocation), or
 * what it gave back of that. */
void driver_allocs_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

/* The kinds of memory counted, each apart. */
enum driver_mem {
	DRIVER_MEM_DEVICE,  /* plain device memory */
	DRIVER_MEM_MANAGED, /* cuMemAllocManaged's */
	DRIVER_MEM_KINDS
};

/* The allocations of kind counted so far, their bytes, and the most of
 * those bytes held at once. */
void driver_allocs_get(enum driver_mem kind, uint64_t *count, uint64_t *bytes, uint64_t *peak);

/* context, not NULL, is destroyed (a primary one's reset): what it owned
 * is gone with it. Memory no context owns, stream-ordered allocations'
 * and cuMemCreate's, stays held, as do other contexts'. */
void driver_allocs_context_reset(CUcontext context);

#endif
