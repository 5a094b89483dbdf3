/* driver_allocs.c: GPU memory got past the shim (see driver_allocs.h). */
#include "driver_allocs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

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
static const CUpti_CallbackId free_cbids[] = {
	D(cuMemFree), D(cuMemFree_v2), D(cuMemFreeAsync), D(cuMemFreeAsync_ptsz), D(cuMemRelease),
};
#define N_ALLOC (sizeof alloc_cbids / sizeof alloc_cbids[0])
#define N_FREE (sizeof free_cbids / sizeof free_cbids[0])

static const char *consequence = "";
static atomic_int told;

/* The memory counted, and what the program holds of it, for its peak: an
 * allocation by its pointer, a mapping's physical memory by its handle,
 * with the context whose destruction frees it (NULL for memory no
 * context owns). Such calls are few (four in a PyTorch program, one per
 * expandable segment), so a list searched from the end will do; they
 * come from any thread, and all of it is under held_lock. */
struct held {
	uint64_t key, bytes;
	bool handle;
	CUcontext owner;
};
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t n_allocs, n_bytes;
static struct held *held;
static size_t n_held, held_cap;
static uint64_t held_bytes, peak_bytes;

CUptiResult driver_allocs_enable(CUpti_SubscriberHandle subscriber, const char *what_it_costs)
{
	consequence = what_it_costs;
	CUptiResult r = cbids_enable(subscriber, alloc_cbids, N_ALLOC);
	return r == CUPTI_SUCCESS ? cbids_enable(subscriber, free_cbids, N_FREE) : r;
}

bool driver_allocs_cbid(CUpti_CallbackId cbid)
{
	return cbid_index(alloc_cbids, N_ALLOC, cbid) >= 0 || cbid_index(free_cbids, N_FREE, cbid) >= 0;
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

/* Whether a context owns what the call makes, which its destruction then
 * frees. The driver documents that it does not own stream-ordered
 * allocations nor cuMemCreate's memory: they outlive a device reset. */
static bool context_owned(CUpti_CallbackId cbid)
{
	switch (cbid) {
	case D(cuMemAllocAsync):
	case D(cuMemAllocAsync_ptsz):
	case D(cuMemAllocFromPoolAsync):
	case D(cuMemAllocFromPoolAsync_ptsz):
	case D(cuMemCreate):
		return false;
	default:
		return true;
	}
}

/* A successful call's bytes, by what names them when they are given
 * back: the pointer, or cuMemCreate's handle; made in context. */
static struct held made(CUpti_CallbackId cbid, const void *p, uint64_t bytes, CUcontext context)
{
	CUcontext owner = context_owned(cbid) ? context : NULL;
	switch (cbid) {
	case D(cuMemAlloc):
		return (struct held){ *((const cuMemAlloc_params *)p)->dptr, bytes, false, owner };
	case D(cuMemAllocPitch):
		return (struct held){ *((const cuMemAllocPitch_params *)p)->dptr, bytes, false, owner };
	case D(cuMemCreate):
		return (struct held){ *((const cuMemCreate_params *)p)->handle, bytes, true, owner };
	default: /* the rest start with a CUdeviceptr * */
		return (struct held){ **(CUdeviceptr *const *)p, bytes, false, owner };
	}
}

/* What a call giving memory back names. */
static struct held given_back(CUpti_CallbackId cbid, const void *p)
{
	switch (cbid) {
	case D(cuMemFree):
		return (struct held){ ((const cuMemFree_params *)p)->dptr, 0, false, NULL };
	case D(cuMemRelease):
		return (struct held){ ((const cuMemRelease_params *)p)->handle, 0, true, NULL };
	default: /* the rest start with the pointer */
		return (struct held){ *(const CUdeviceptr *)p, 0, false, NULL };
	}
}
#undef D
_Static_assert(offsetof(cuMemAllocManaged_params, bytesize) == offsetof(cuMemAlloc_v2_params, bytesize) &&
		       offsetof(cuMemAllocAsync_params, bytesize) == offsetof(cuMemAlloc_v2_params, bytesize) &&
		       offsetof(cuMemAllocFromPoolAsync_ptsz_params, bytesize) ==
			       offsetof(cuMemAlloc_v2_params, bytesize),
	       "the sized allocation calls keep their size in one place");
_Static_assert(offsetof(cuMemAlloc_v2_params, dptr) == 0 && offsetof(cuMemAllocPitch_v2_params, dptr) == 0 &&
		       offsetof(cuMemAllocManaged_params, dptr) == 0 && offsetof(cuMemAllocAsync_params, dptr) == 0 &&
		       offsetof(cuMemAllocAsync_ptsz_params, dptr) == 0 &&
		       offsetof(cuMemAllocFromPoolAsync_params, dptr) == 0 &&
		       offsetof(cuMemAllocFromPoolAsync_ptsz_params, dptr) == 0 &&
		       offsetof(cuMemFree_v2_params, dptr) == 0 && offsetof(cuMemFreeAsync_params, dptr) == 0 &&
		       offsetof(cuMemFreeAsync_ptsz_params, dptr) == 0,
	       "the pointer comes first");

static struct held *find(struct held key)
{
	for (size_t i = n_held; i-- > 0;)
		if (held[i].key == key.key && held[i].handle == key.handle)
			return &held[i];
	return NULL;
}

/* Caller holds held_lock. */
static void drop(struct held *h)
{
	held_bytes -= h->bytes;
	*h = held[--n_held];
}

/* Counts h's bytes and holds them until given back. */
static void hold(struct held h)
{
	pthread_mutex_lock(&held_lock);
	n_allocs++;
	n_bytes += h.bytes;
	struct held *same = find(h);
	if (same) /* given back unseen */
		drop(same);
	held_bytes += h.bytes;
	if (held_bytes > peak_bytes)
		peak_bytes = held_bytes;
	if (n_held == held_cap) {
		size_t cap = held_cap ? 2 * held_cap : 16;
		struct held *more = realloc(held, cap * sizeof *more);
		if (more) {
			held = more;
			held_cap = cap;
		}
	}
	if (n_held < held_cap) /* else held to the end: the peak errs high */
		held[n_held++] = h;
	pthread_mutex_unlock(&held_lock);
}

static void give_back(struct held key)
{
	pthread_mutex_lock(&held_lock);
	struct held *h = find(key);
	if (h) /* else not counted: the tools', or from before the subscription */
		drop(h);
	pthread_mutex_unlock(&held_lock);
}

void driver_allocs_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	if (cb->callbackSite != CUPTI_API_EXIT || *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
		return;
	if (cbid_index(free_cbids, N_FREE, cbid) >= 0) {
		give_back(given_back(cbid, cb->functionParams));
		return;
	}
	if (cudart_own_allocation())
		return;
	uint64_t bytes = granted(cbid, cb->functionParams);
	if (!bytes)
		return;
	hold(made(cbid, cb->functionParams, bytes, cb->context));
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

void driver_allocs_get(uint64_t *count, uint64_t *bytes, uint64_t *peak)
{
	pthread_mutex_lock(&held_lock);
	*count = n_allocs;
	*bytes = n_bytes;
	*peak = peak_bytes;
	pthread_mutex_unlock(&held_lock);
}

void driver_allocs_context_reset(CUcontext context)
{
	pthread_mutex_lock(&held_lock);
	for (size_t i = n_held; i-- > 0;)
		if (held[i].owner == context)
			drop(&held[i]);
	pthread_mutex_unlock(&held_lock);
}
