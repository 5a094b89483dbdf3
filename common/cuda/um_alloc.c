/*
 * um_alloc.c: cudaMalloc and friends served from the arena (see um_alloc.h).
 *
 * These definitions take the place of libcudart's for every library that
 * imports them dynamically (PyTorch's libc10_cuda does). Differences from
 * the real functions, on purpose:
 *  - cudaFree does not synchronize the device: the arena fences the freed
 *    range instead and hands it out again only after the work queued before
 *    the free has finished;
 *  - past UMKIT_MAX_MANAGED bytes, allocation fails with
 *    cudaErrorMemoryAllocation, which frameworks report as out of memory;
 *  - cudaMallocPitch and cudaMalloc3D learn the runtime's row alignment
 *    from one real allocation, at the first call;
 *  - cudaMallocAsync into a capturing stream is the runtime's (into_capture);
 *  - after a cudaDeviceReset that destroyed the arena's memory, every call
 *    is the runtime's (arena_gone).
 * As the real ones do, they leave the calling thread with a context bound
 * (bind_context).
 */
#include "um_alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "capture.h"
#include "clock.h"
#include "cudart.h"
#include "log.h"
#include "pitch.h"
#include "size.h"
#include "trace_schema.h"
#include "um_backend.h"

static arena *the_arena;
static bool managed = true;
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;
static struct um_alloc_hooks hooks;
static atomic_uint_fast64_t n_allocs, n_frees, served_ns;
/* Set, for good, once a device reset destroyed the arena's memory
 * (cudaDeviceReset). */
static atomic_bool arena_lost;
/* The process the arena serves; a forked child's CUDA is not its. */
static pid_t arena_pid;
/* The context the arena serves, and so maps its memory in: the one
 * current at the program's first allocation (in_arena_context). */
static _Atomic(CUcontext) arena_context;

static void create_arena(void)
{
	struct arena_config cfg = { 0 };
	struct arena_backend backend;
	arena_pid = getpid();
	const char *cap = getenv("UMKIT_MAX_MANAGED");
	if (cap && *cap && um_size_parse(cap, &cfg.max_bytes) != 0) {
		um_error("UMKIT_MAX_MANAGED='%s' is not a size; allocations are not converted", cap);
		return;
	}
	const char *no_managed = getenv("UMKIT_NO_MANAGED");
	managed = !(no_managed && *no_managed && *no_managed != '0');
	um_backend_init(&backend, managed);
	the_arena = arena_create(&cfg, &backend);
	if (!the_arena)
		um_error("cannot create the allocation arena; allocations are not converted");
}

arena *um_alloc_arena(void)
{
	pthread_once(&arena_once, create_arena);
	return the_arena;
}

bool um_alloc_managed(void)
{
	um_alloc_arena();
	return managed;
}

void um_alloc_set_hooks(const struct um_alloc_hooks *h)
{
	hooks = *h;
}

/* The runtime binds the current device's primary context to a thread at
 * the thread's first call, which may be one the arena serves without
 * calling the runtime at all. The fences' driver calls need it bound: on a
 * thread with none, a cuCtxSynchronize synchronizes nothing, and a free's
 * deferred fence passed as done (tests/gpu/fence_probe.cu, two-threads in
 * a process umrec does not record). The program may need it too, as it
 * would have it after the real call. cudaFree(NULL) is the runtime's idiom
 * for that binding, made only on a thread with no context (or before CUDA
 * is initialised): one that has may be capturing a graph, which the call
 * would break. While another thread captures in global mode it fails and
 * breaks that capture (bench/results/2026-11-29/s46/sync_in_capture.log),
 * as the runtime's binding at that thread's first real call presumably
 * would (not measured); the failure is not left as this thread's last
 * error. */
static __thread bool context_checked;

/* Returns the context current after it; NULL when none could be bound. */
static CUcontext bind_if_unbound(void)
{
	CUcontext current = NULL;
	if (cuCtxGetCurrent(&current) == CUDA_SUCCESS && current)
		return current;
	const struct cudart *rt = cudart_get();
	bool clean = rt->PeekAtLastError() == cudaSuccess;
	if (rt->Free(NULL) != cudaSuccess && clean)
		rt->GetLastError();
	return cuCtxGetCurrent(&current) == CUDA_SUCCESS ? current : NULL;
}

static void bind_context(void)
{
	if (context_checked)
		return;
	context_checked = true;
	(void)bind_if_unbound();
}

/* Whether the calling thread allocates in the context the arena serves,
 * which the program's first allocation claims. With another context
 * current (another device's, or one of the program's own) the runtime
 * serves it, as without umkit: the arena's memory stays in one context,
 * and a device reset takes from each context only what is its own. Said
 * once: that memory is neither managed nor followed. */
static bool in_arena_context(void)
{
	static atomic_int told;
	CUcontext current = bind_if_unbound(), claimed = NULL;
	if (!current)
		return true; /* as before the check: the runtime's mapping binds */
	if (atomic_compare_exchange_strong(&arena_context, &claimed, current) || claimed == current)
		return true;
	if (!atomic_exchange(&told, 1))
		um_warn("the program allocates with another CUDA context current than its first allocation's (another "
			"device's, or one of its own): that memory is the runtime's plain device memory, which umkit "
			"neither manages nor follows");
	return false;
}

/* The calling thread's stream capture mode set to relaxed, as PyTorch's
 * allocator sets it to call cudaMalloc: a graph capture under way, this
 * thread's or another's, then allows the runtime calls the shim makes of
 * its own, where the default mode would break the capture. Returns whether
 * it was set; relaxed_capture_end puts back *saved. */
static bool relaxed_capture_begin(CUstreamCaptureMode *saved)
{
	*saved = CU_STREAM_CAPTURE_MODE_RELAXED;
	return cuThreadExchangeStreamCaptureMode(saved) == CUDA_SUCCESS;
}

static void relaxed_capture_end(bool begun, CUstreamCaptureMode saved)
{
	if (begun)
		cuThreadExchangeStreamCaptureMode(&saved);
}

/* Returns err, left as the calling thread's last runtime error as the
 * runtime's own refusal is (cudaGetLastError returns it once): a program
 * may check that rather than the call's answer. No runtime call sets it,
 * so the runtime is asked for what it refuses alike: more memory than any
 * device has (2^50 bytes, which no allocation can get, so none is left to
 * free), or an allocation with no pointer to fill. */
static cudaError_t refused(cudaError_t err)
{
	const struct cudart *rt = cudart_get();
	CUstreamCaptureMode mode;
	bool relaxed = relaxed_capture_begin(&mode);
	void *p;
	if (err == cudaErrorMemoryAllocation)
		(void)rt->Malloc(&p, (size_t)1 << 50);
	else
		(void)rt->Malloc(NULL, 1);
	relaxed_capture_end(relaxed, mode);
	return err;
}

static cudaError_t serve(void **ptr, size_t size, const char *api, cudaStream_t stream)
{
	struct arena_alloc a;
	if (!ptr)
		return refused(cudaErrorInvalidValue);
	bind_context();
	uint64_t t0 = um_now_ns();
	bool served = arena_alloc(the_arena, size, &a) == ARENA_OK;
	um_backend_forget_refusal(served);
	if (!served) {
		*ptr = NULL;
		return refused(cudaErrorMemoryAllocation);
	}
	*ptr = (void *)(uintptr_t)a.address;
	if (hooks.on_alloc)
		hooks.on_alloc(&a, api, (CUstream)stream);
	atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&served_ns, um_now_ns() - t0, memory_order_relaxed);
	return cudaSuccess;
}

/* Returns true if ptr was the arena's and is now released. */
static bool release(void *ptr)
{
	struct arena_alloc a;
	uint64_t t0 = um_now_ns();
	bind_context();
	if (arena_free(the_arena, (uint64_t)(uintptr_t)ptr, &a) != ARENA_OK)
		return false;
	if (hooks.on_free)
		hooks.on_free(&a);
	atomic_fetch_add_explicit(&n_frees, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&served_ns, um_now_ns() - t0, memory_order_relaxed);
	return true;
}

void um_alloc_get_stats(struct um_alloc_stats *out)
{
	struct arena_stats as = { 0 };
	if (the_arena)
		arena_get_stats(the_arena, &as);
	out->allocs = atomic_load(&n_allocs);
	out->frees = atomic_load(&n_frees);
	out->ns = atomic_load(&served_ns);
	out->fence_waits = as.fence_waits;
	out->fence_wait_ns = um_backend_fence_wait_ns();
	out->fence_refusals = as.fence_refusals;
	out->last_resort_waits = as.last_resort_waits;
	out->one_stream = !um_backend_multi_stream();
}

/* Whether a device reset destroyed the arena's memory: then the runtime
 * serves the program. Said at its first allocation after the reset (a
 * reset just before the exit, as CUDA's samples make, needs no word). */
static bool arena_gone(bool allocating)
{
	static atomic_int told;
	if (!atomic_load(&arena_lost))
		return false;
	if (allocating && !atomic_exchange(&told, 1))
		um_warn("the program allocates again after resetting the device (cudaDeviceReset): that memory "
			"is the runtime's plain device memory, which umkit neither manages nor follows");
	return true;
}

cudaError_t cudaMalloc(void **ptr, size_t size)
{
	if (!um_alloc_arena() || arena_gone(true) || !in_arena_context())
		return cudart_get()->Malloc(ptr, size);
	return serve(ptr, size, "cudaMalloc", NULL);
}

/* The runtime's row alignment for pitched allocations: the pitch it gives
 * one row of one byte, asked for once (a real allocation, freed at once;
 * it synchronizes the device, as a free does). 0 when the runtime refused:
 * then each pitched allocation is the runtime's. */
static size_t pitch_alignment(void)
{
	static _Atomic size_t learned;
	size_t align = atomic_load(&learned);
	if (align)
		return align;
	const struct cudart *rt = cudart_get();
	CUstreamCaptureMode mode;
	bool relaxed = relaxed_capture_begin(&mode);
	void *p;
	if (rt->MallocPitch(&p, &align, 1, 1) == cudaSuccess)
		rt->Free(p);
	else
		align = 0;
	relaxed_capture_end(relaxed, mode);
	atomic_store(&learned, align); /* two threads learn the same */
	return align;
}

/* Pitched allocations are laid out as the runtime lays them out
 * (common/pitch.h) and served whole: rows padded to its pitch. A request
 * the arena would not serve as it asks (no pointer to fill, a zero or
 * overflowing extent) is the runtime's to answer. */
cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
	size_t align, row, bytes;
	if (!um_alloc_arena() || arena_gone(true) || !in_arena_context() || !ptr || !pitch ||
	    !(align = pitch_alignment()) || !um_pitched_layout(width, height, 1, align, &row, &bytes))
		return cudart_get()->MallocPitch(ptr, pitch, width, height);
	cudaError_t err = serve(ptr, bytes, "cudaMallocPitch", NULL);
	if (err == cudaSuccess)
		*pitch = row;
	return err;
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *out, struct cudaExtent extent)
{
	size_t align, row, bytes;
	void *p;
	if (!um_alloc_arena() || arena_gone(true) || !in_arena_context() || !out ||
	    !(align = pitch_alignment()) ||
	    !um_pitched_layout(extent.width, extent.height, extent.depth, align, &row, &bytes))
		return cudart_get()->Malloc3D(out, extent);
	cudaError_t err = serve(&p, bytes, "cudaMalloc3D", NULL);
	if (err == cudaSuccess)
		*out = (struct cudaPitchedPtr){ .ptr = p, .pitch = row, .xsize = extent.width, .ysize = extent.height };
	return err;
}

/* The program's own managed memory, served alike: the arena's memory is
 * managed too, attached to every stream as cudaMemAttachGlobal attaches
 * it. Not with UMKIT_NO_MANAGED, whose device memory the host cannot
 * touch, nor memory attached to the host at first (cudaMemAttachHost),
 * nor a size of 0, which the runtime refuses. */
cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
	if (!um_alloc_arena() || !managed || flags != cudaMemAttachGlobal || !size || arena_gone(true) ||
	    !in_arena_context())
		return cudart_get()->MallocManaged(ptr, size, flags);
	return serve(ptr, size, TRACE_API_MANAGED, NULL);
}

/* Stream-ordered allocations and frees queued into a capture belong to
 * the graph: each of its launches allocates and frees again (memory
 * nodes). The arena cannot follow them, so an allocation there is the
 * runtime's; a free there of the arena's memory is refused, as the runtime
 * refuses one of memory the graph did not allocate. */
static bool into_capture(cudaStream_t stream)
{
	return capture_stream_capturing((CUstream)stream);
}

cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
	if (!um_alloc_arena() || arena_gone(true) || into_capture(stream) || !in_arena_context())
		return cudart_get()->MallocAsync(ptr, size, stream);
	bind_context(); /* the stream's note may queue work */
	um_backend_note_stream((CUstream)stream);
	return serve(ptr, size, "cudaMallocAsync", stream);
}

/* The names a program built with --default-stream per-thread calls (the
 * runtime's header renames the stream-ordered calls, not cudaMalloc and
 * cudaFree), where stream 0 is the calling thread's default stream. Left
 * to the runtime, their allocations would not be the arena's, and a free
 * of the arena's memory there would reach the runtime. */
cudaError_t cudaMallocAsync_ptsz(void **ptr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *ptr, cudaStream_t stream);

cudaError_t cudaMallocAsync_ptsz(void **ptr, size_t size, cudaStream_t stream)
{
	return cudaMallocAsync(ptr, size, stream ? stream : cudaStreamPerThread);
}

/* Whether ptr points into the arena's memory, which is never the
 * runtime's to free (that would unmap a whole segment). Such a pointer
 * that is not a live allocation's start (freed twice, or never allocated)
 * is an error, as the runtime would say. */
static bool in_arena(void *ptr)
{
	return arena_owns(the_arena, (uint64_t)(uintptr_t)ptr);
}

cudaError_t cudaFree(void *ptr)
{
	/* cudaFree(NULL) is the idiom for "initialise the runtime": pass it on. */
	if (ptr && um_alloc_arena() && !arena_gone(false)) {
		if (release(ptr))
			return cudaSuccess;
		if (in_arena(ptr))
			return refused(cudaErrorInvalidValue);
	}
	return cudart_get()->Free(ptr);
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
	/* Memory the runtime served (another context's, say) is the runtime's
	 * to free, without the stream's note. */
	if (ptr && um_alloc_arena() && !arena_gone(false) && in_arena(ptr)) {
		if (into_capture(stream))
			return cudaErrorInvalidValue;
		bind_context(); /* the stream's note may queue work */
		um_backend_note_stream((CUstream)stream);
		return release(ptr) ? cudaSuccess : refused(cudaErrorInvalidValue);
	}
	return cudart_get()->FreeAsync(ptr, stream);
}

cudaError_t cudaFreeAsync_ptsz(void *ptr, cudaStream_t stream)
{
	return cudaFreeAsync(ptr, stream ? stream : cudaStreamPerThread);
}

/* Collects the allocations live at the reset (arena_foreach_live). */
struct live_list {
	struct arena_alloc *a;
	size_t n, cap;
	size_t missed; /* not listed: out of memory */
};

static void collect_live(void *ctx, const struct arena_alloc *a)
{
	struct live_list *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct arena_alloc *grown = realloc(l->a, cap * sizeof *grown);
		if (!grown) {
			l->missed++;
			return;
		}
		l->a = grown;
		l->cap = cap;
	}
	l->a[l->n++] = *a;
}

/* The context a reset made now destroys everything in: current, the
 * calling thread's, when it is its device's primary context. NULL when a
 * context of the program's own is current (the runtime then resets only
 * its own state for that one), or none can be told. */
static CUcontext context_reset(CUcontext current)
{
	CUcontext primary = NULL;
	CUdevice dev;
	unsigned flags;
	int active = 0;
	if (!current || cuCtxGetDevice(&dev) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active ||
	    cuDevicePrimaryCtxRetain(&primary, dev) != CUDA_SUCCESS)
		return NULL;
	cuDevicePrimaryCtxRelease(dev);
	return current == primary ? current : NULL;
}

/* A primary context is about to be reset: every stream and event in it
 * goes, the tool's with the program's, and with them the arena's memory
 * and the backend's events if they live there (arena_lost); a reset
 * before the program's first allocation leaves the arena to serve on,
 * and one of another device's context leaves it alone. While they still
 * exist: the tool ends what uses its own (on_device_reset); each live
 * allocation is freed, as the reset frees it (on_free, so a trace says
 * when it died); the backend forgets its streams and events. */
static void context_resets(CUcontext ctx)
{
	CUcontext memory = atomic_load(&arena_context);
	bool lost = memory == ctx;
	if (hooks.on_device_reset)
		hooks.on_device_reset(lost);
	if (lost) {
		struct live_list live = { 0 };
		arena_foreach_live(the_arena, collect_live, &live);
		if (live.missed)
			um_warn("out of memory listing the allocations the device reset frees: %zu of them "
				"stay live in umkit's books", live.missed);
		for (size_t i = 0; i < live.n; i++)
			release((void *)(uintptr_t)live.a[i].address);
		free(live.a);
		atomic_store(&arena_lost, true);
	}
	if (lost || !memory)
		um_backend_device_reset();
}

/* From a reset that destroyed the arena's memory on, the runtime serves
 * the program, and a pointer from before it gets the runtime's answer.
 * That differs from a run without umkit for memory from
 * cudaMallocAsync, which the runtime's reset leaves alone (its pools
 * outlive it) and which the arena serves like the rest. */
cudaError_t cudaDeviceReset(void)
{
	um_alloc_arena();
	if (getpid() == arena_pid && !atomic_load(&arena_lost)) {
		/* Every time: a thread with no context current resets the
		 * primary one of its device, which binding names. */
		CUcontext ctx = context_reset(bind_if_unbound());
		if (ctx)
			context_resets(ctx);
	}
	return cudart_get()->DeviceReset();
}
