/* driver_allocs.c: GPU memory got past the shim (see driver_allocs.h). */
#include "driver_allocs.h"

#include <stdatomic.h>
#include <stddef.h>

#include <cuda.h>

#include "cbids.h"
#include "cudart.h"
#include "log.h"
#include "size.h"

#define D(name) CUPTI_DRIVER_TRACE_CBID_##name
static const CUpti_CallbackId alloc_cbids[] = {
	D(cuMemAlloc), D(cuMemAlloc_v2), D(cuMemAllocPitch), D(cuMemAllocPitch_v2), D(cuMemAllocManaged),
	D(cuMemAllocAsync), D(cuMemAllocAsync_ptsz), D(cuMemAllocFromPoolAsync),
	D(cuMemAllocFromPoolAsync_ptsz), D(cuMemCreate),
};
#define N_CBIDS (sizeof alloc_cbids / sizeof alloc_cbids[0])

static const char *consequence = "";
static atomic_uint_fast64_t n_allocs, n_bytes;
static atomic_int told;

CUptiResult driver_allocs_enable(CUpti_SubscriberHandle subscriber, const char *what_it_costs)
{
	consequence = what_it_costs;
	return cbids_enable(subscriber, alloc_cbids, N_CBIDS);
}

bool driver_allocs_cbid(CUpti_CallbackId cbid)
{
	return cbid_index(alloc_cbids, N_CBIDS, cbid) >= 0;
}

/* The GPU memory a successful call granted: 0 for physical memory
 * cuMemCreate makes elsewhere than on a device (the host's). */
static uint64_t granted(CUpti_CallbackId cbid, const void *p)
{
	switch (cbid) {
	case D(cuMemAlloc):
		return ((const cuMemAlloc_params *)p)->bytesize;
	case D(cuMemAllocPitch): {
		const cuMemAllocPitch_params *a = p;
		return (uint64_t)*a->pPitch * a->Height;
	}
	case D(cuMemAllocPitch_v2): {
		const cuMemAllocPitch_v2_params *a = p;
		return (uint64_t)*a->pPitch * a->Height;
	}
	case D(cuMemCreate): {
		const cuMemCreate_params *a = p;
		return a->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? a->size : 0;
	}
	default: /* the rest start with the pointer and the size */
		return ((const cuMemAlloc_v2_params *)p)->bytesize;
	}
}
#undef D
_Static_assert(offsetof(cuMemAllocManaged_params, bytesize) == offsetof(cuMemAlloc_v2_params, bytesize) &&
		       offsetof(cuMemAllocAsync_params, bytesize) == offsetof(cuMemAlloc_v2_params, bytesize) &&
		       offsetof(cuMemAllocFromPoolAsync_ptsz_params, bytesize) ==
			       offsetof(cuMemAlloc_v2_params, bytesize),
	       "the sized allocation calls keep their size in one place");

void driver_allocs_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	if (cb->callbackSite != CUPTI_API_EXIT || *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS ||
	    cudart_own_allocation())
		return;
	uint64_t bytes = granted(cbid, cb->functionParams);
	if (!bytes)
		return;
	atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n_bytes, bytes, memory_order_relaxed);
	char size[32];
	um_size_format(bytes, size, sizeof size);
	um_debug("%s granted %s past umkit's allocator", cb->functionName, size);
	/* Libraries with a CUDA runtime of their own make a few such
	 * allocations in every PyTorch program (64 MiB on an H200, session
	 * 66), which the exit's counts tell; memory mapped with cuMemCreate
	 * is a framework's allocator working past umkit, which the user can
	 * turn off. */
	if (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemCreate && !atomic_exchange(&told, 1))
		um_warn("the program mapped %s with cuMemCreate, past umkit's allocator (PyTorch's expandable "
			"segments map their memory so): that memory is plain device memory, and %s",
			size, consequence);
}

void driver_allocs_get(uint64_t *count, uint64_t *bytes)
{
	*count = atomic_load(&n_allocs);
	*bytes = atomic_load(&n_bytes);
}
