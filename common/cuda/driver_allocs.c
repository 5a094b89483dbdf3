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
static atomic_int told_mapped, told_managed;

/* The memory counted, and what the program holds of it, for its peak: an
 * allocation by its pointer, a mapping's physical memory by its handle,
 * with its kind and the context whose destruction frees it (NULL for
 * memory no context owns). Such calls are few (four in a PyTorch
 * program, one per expandable segment), so a list searched from the end
 * will do; they come from any thread, and all of it is under held_lock. */
struct held {
	uint64_t key, bytes;
	bool handle;
	enum driver_mem kind;
	CUcontext owner;
};
/* Each kind's allocations, their bytes, those held now and the most held. */
struct tally {
	uint64_t allocs, bytes, held, peak;
};
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tally tallies[DRIVER_MEM_KINDS];
static struct held *held;
static size_t n_held, held_cap;

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
	enum driver_mem kind = cbid == D(cuMemAllocManaged) ? DRIVER_MEM_MANAGED : DRIVER_MEM_DEVICE;
	CUcontext owner = context_owned(cbid) ? context : NULL;
	switch (cbid) {
	case D(cuMemAlloc):
		return (struct held){ *((const cuMemAlloc_params *)p)->dptr, bytes, false, kind, owner };
	case D(cuMemAllocPitch):
		return (struct held){ *((const cuMemAllocPitch_params *)p)->dptr, bytes, false, kind, owner };
	case D(cuMemCreate):
		return (struct held){ *((const cuMemCreate_params *)p)->handle, bytes, true, kind, owner };
	default: /* the rest start with a CUdeviceptr * */
		return (struct held){ **(CUdeviceptr *const *)p, bytes, false, kind, owner };
	}
}

/* What a call giving memory back names: a pointer or a handle; the
 * memory held under it says its kind. */
static struct held given_back(CUpti_CallbackId cbid, const void *p)
{
	switch (cbid) {
	case D(cuMemFree):
		return (struct held){ .key = ((const cuMemFree_params *)p)->dptr };
	case D(cuMemRelease):
		return (struct held){ .key = ((const cuMemRelease_params *)p)->handle, .handle = true };
	default: /* the rest start with the pointer */
		return (struct held){ .key = *(const CUdeviceptr *)p };
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
	tallies[h->kind].held -= h->bytes;
	*h = held[--n_held];
}

/* Counts h's bytes in its kind and holds them until given back. */
static void hold(struct held h)
{
	pthread_mutex_lock(&held_lock);
	struct tally *t = &tallies[h.kind];
	t->allocs++;
	t->bytes += h.bytes;
	struct held *same = find(h);
	if (same) /* given back unseen */
		drop(same);
	t->held += h.bytes;
	if (t->held > t->peak)
		t->peak = t->held;
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
	 * turn off; managed memory made past umkit competes with the arena's
	 * for the GPU, unplanned. */
	if (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemCreate && !atomic_exchange(&told_mapped, 1))
		um_warn("the program mapped %s with cuMemCreate, past umkit's allocator (PyTorch's expandable "
			"segments map their memory so): that memory is plain device memory, and %s",
			size, consequence);
	if (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged && !atomic_exchange(&told_managed, 1))
		um_warn("the program allocated %s of managed memory with cuMemAllocManaged, past umkit's "
			"allocator: the driver migrates and evicts that memory on its own, and %s", size, consequence);
}

void driver_allocs_get(enum driver_mem kind, uint64_t *count, uint64_t *bytes, uint64_t *peak)
{
	pthread_mutex_lock(&held_lock);
	*count = tallies[kind].allocs;
	*bytes = tallies[kind].bytes;
	*peak = tallies[kind].peak;
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
