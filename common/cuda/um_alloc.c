/*
 * um_alloc.c: cudaMalloc and friends served from the arena (see um_alloc.h).
 *
 * These definitions take the place of libcudart's for every library that
 * imports them dynamically (PyTorch's libc10_cuda does). Differences from
 * the real functions, on purpose:
 *  - cudaFree does not synchronize the device: the arena fences the freed
 *    range instead and hands it out again only after the work queued before
 *    the free has finished, or, for device memory, once the program's GPU
 *    work from then on is queued behind it (common/cuda/fence_order.h);
 *  - past UMKIT_MAX_MANAGED bytes, allocation fails with
 *    cudaErrorMemoryAllocation, which frameworks report as out of memory
 *    (the program's own managed memory counts too);
 *  - cudaMallocPitch and cudaMalloc3D learn the runtime's row alignment
 *    from one real allocation and free, which synchronizes the device, at
 *    the first call where that is allowed (pitch_alignment);
 *  - cudaStreamAttachMemAsync on the program's own managed memory is
 *    answered for the arena's, and changes nothing;
 *  - cudaMallocAsync and cudaMallocFromPoolAsync into a capturing stream
 *    are the runtime's (into_capture), and so are allocations from pools
 *    that promise more than device memory (pool_served);
 *  - after a cudaDeviceReset that destroyed the arena's memory, every call
 *    is the runtime's (arena_gone).
 * As the real ones do, they leave the calling thread with a context bound
 * (bind_context).
 */
#include "um_alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr_set.h"
#include "capture.h"
#include "clock.h"
#include "cudart.h"
#include "driver_allocs.h"
#include "log.h"
#include "pitch.h"
#include "pytorch_conf.h"
#include "size.h"
#include "trace_schema.h"
#include "um_backend.h"
#include "um_pools.h"

static arena *the_arena;
static bool managed = true;
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;
static struct um_alloc_hooks hooks;
static atomic_uint_fast64_t n_allocs, n_frees, served_ns, runtime_allocs, runtime_bytes;
/* Set, for good, once a device reset destroyed the arena's memory
 * (cudaDeviceReset). */
static atomic_bool arena_lost;
/* Set in a forked child of the process the arena serves: the child's
 * CUDA is not its. */
static atomic_bool forked;
/* The context the arena serves, and so maps its memory in: the one
 * current at the program's first allocation (in_arena_context). */
static _Atomic(CUcontext) arena_context;
/* The live allocations served as the program's own managed memory
 * (cudaMallocManaged), which alone a stream association may name; once
 * one could not be noted (out of memory), any allocation may. */
static struct addr_set managed_allocs = ADDR_SET_INIT;
static atomic_bool managed_allocs_partial;
/* A free since the program's own managed memory last waited for the
 * default stream (wait_for_freed_ranges). */
static atomic_bool freed_unwaited;
/* The live allocations the runtime served in the arena's stead, so that a
 * kernel's parameter word pointing there is known for a pointer
 * (common/param_scan.h); one that could not be noted (out of memory) is
 * not. */
static struct addr_set foreign_allocs = ADDR_SET_INIT;

static void on_fork_child(void)
{
	atomic_store(&forked, true);
}

static void create_arena(void)
{
	struct arena_config cfg = { 0 };
	struct arena_backend backend;
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
	else
		pthread_atfork(NULL, NULL, on_fork_child);
}

arena *um_alloc_arena(void)
{
	pthread_once(&arena_once, create_arena);
	return the_arena;
}

CUcontext um_alloc_context(void)
{
	return atomic_load(&arena_context);
}

bool um_alloc_managed(void)
{
	um_alloc_arena();
	return managed;
}

void um_alloc_warn_unserved(const char *consequence)
{
	const char *name = pytorch_conf_env_setting("expandable_segments", "True");
	if (name && !capture_pytorch_cache_off())
		um_warn("the program runs with %s=%s: PyTorch maps its cache's memory through the driver's "
			"virtual memory calls, which umkit does not serve: %s; set expandable_segments:False or "
			"leave it unset",
			name, getenv(name), consequence);
}

void um_alloc_set_hooks(const struct um_alloc_hooks *h)
{
	hooks = *h;
}

struct addr_set *um_alloc_foreign(void)
{
	return &foreign_allocs;
}

/* Returns err, the answer of the runtime's allocation of size bytes at
 * *ptr, which foreign_allocs notes and the stats count. */
static cudaError_t runtime_served(cudaError_t err, void *const *ptr, size_t size)
{
	if (err != cudaSuccess || !ptr || !*ptr || !size || atomic_load(&forked))
		return err;
	(void)addr_set_add(&foreign_allocs, (uint64_t)(uintptr_t)*ptr, size);
	atomic_fetch_add_explicit(&runtime_allocs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&runtime_bytes, size, memory_order_relaxed);
	return err;
}

/* The runtime is about to free ptr, which may be its own: out of
 * foreign_allocs first, as the address may be handed out again at once.
 * Returns whether it was there, with its size in *size. Never in a forked
 * child (nor runtime_served): the set's lock may have been held at the
 * fork by a parent's thread (a launch's parameter scan), which the child
 * does not have, and the child's CUDA is not its parent's anyway. */
static bool runtime_frees(void *ptr, uint64_t *size)
{
	return !atomic_load(&forked) && addr_set_remove(&foreign_allocs, (uint64_t)(uintptr_t)ptr, size);
}

/* Returns err, the runtime's answer to that free: a refused one leaves the
 * memory live, back in foreign_allocs if it was there (noted). */
static cudaError_t runtime_freed(cudaError_t err, void *ptr, bool noted, uint64_t size)
{
	if (err != cudaSuccess && noted)
		(void)addr_set_add(&foreign_allocs, (uint64_t)(uintptr_t)ptr, size);
	return err;
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
	bool clean = cudart_clean();
	(void)cudart_quiet(clean, cudart_get()->Free(NULL));
	return cuCtxGetCurrent(&current) == CUDA_SUCCESS ? current : NULL;
}

static void bind_context(void)
{
	if (context_checked)
		return;
	context_checked = true;
	(void)bind_if_unbound();
}

/* Says, once per told, why the runtime serves an allocation in the
 * arena's stead. */
static void say_runtime_serves(atomic_int *told, const char *why)
{
	if (!atomic_exchange(told, 1))
		um_warn("the program allocates %s: that memory is the runtime's plain device memory, which umkit "
			"neither manages nor follows", why);
}

/* The context whose memory current, the calling thread's current
 * context, allocates in: its device's primary one for a green context's,
 * as um_backend_stream_context names it, asked of the legacy stream. Not
 * asked while a capture may be under way (capture_watching): a query of
 * the legacy stream breaks a blocking stream's capture (GPU check "graphs:
 * frees inside a capture"); current stands for itself then. */
static CUcontext memory_context(CUcontext current)
{
	CUcontext memory = capture_watching() ? NULL : um_backend_stream_context(CU_STREAM_LEGACY);
	return memory ? memory : current;
}

/* Whether the calling thread allocates in the context the arena serves,
 * which the program's first allocation claims (as memory_context names
 * it: a green context current is its device's). With another context
 * current (another device's, or one of the program's own) the runtime
 * serves it, as without umkit: the arena's memory stays in one context,
 * and a device reset takes from each context only what is its own. Said
 * once: that memory is neither managed nor followed. Only a context other
 * than the claimed one is asked after (memory_context). */
static bool in_arena_context(void)
{
	static atomic_int told;
	CUcontext current = bind_if_unbound(), claimed = atomic_load(&arena_context);
	if (!current || current == claimed)
		return true; /* !current: as before the check, the runtime's mapping binds */
	CUcontext memory = memory_context(current);
	if (!claimed && atomic_compare_exchange_strong(&arena_context, &claimed, memory)) {
		um_backend_serve_context(memory);
		return true;
	}
	if (memory == claimed)
		return true;
	say_runtime_serves(&told, "with another CUDA context current than its first allocation's (another "
				  "device's, or one of its own)");
	return false;
}

/* Returns err, left as the calling thread's last runtime error as the
 * runtime's own refusal is (cudaGetLastError returns it once): a program
 * may check that rather than the call's answer. No runtime call sets it,
 * so the runtime is asked for what it refuses alike (cudart_leave: more
 * memory than any device has, 2^50 bytes, which no allocation can get, so
 * none is left to free; or an allocation with no pointer to fill). */
static cudaError_t refused(cudaError_t err)
{
	cudart_leave(err);
	return err;
}

static cudaError_t serve(void **ptr, size_t size, const char *api, cudaStream_t stream)
{
	struct arena_alloc a;
	if (!ptr)
		return refused(cudaErrorInvalidValue);
	bind_context();
	uint64_t t0 = um_now_ns();
	/* The host may touch the program's own managed memory at once, in no
	 * stream's order: that waits for its range's fence; the rest is only
	 * the GPU's, which the backend can order after the fence instead. */
	bool host_access = strcmp(api, TRACE_API_MANAGED) == 0;
	bool served = (host_access ? arena_alloc(the_arena, size, &a) : arena_alloc_device(the_arena, size, &a)) ==
		      ARENA_OK;
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

/* A free's fence records its events in the calling thread's context, and
 * the tool's hook issues its driver calls there: from another context
 * than the arena's (a program on two GPUs freeing with the other device
 * current) the events could order nothing of the arena's streams, and the
 * fence passed as done while the arena's kernels still used the range.
 * So the arena's context is made current for the free. */
bool um_alloc_enter_context(void)
{
	CUcontext served = atomic_load(&arena_context), current = NULL;
	return served && cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != served &&
	       cuCtxPushCurrent(served) == CUDA_SUCCESS;
}

void um_alloc_leave_context(bool entered)
{
	CUcontext was;
	if (entered)
		cuCtxPopCurrent(&was);
}

void um_alloc_wait_for_gpu(void)
{
	bool entered = um_alloc_enter_context();
	cuCtxSynchronize();
	um_alloc_leave_context(entered);
	if (entered)
		cuCtxSynchronize();
}

/* Returns true if ptr was the arena's and is now released. */
static bool release(void *ptr)
{
	struct arena_alloc a;
	uint64_t t0 = um_now_ns();
	bind_context();
	bool entered = um_alloc_enter_context();
	/* Out of the set, and the managed allocations told to wait, first:
	 * once freed, the range may be handed out at once, to another
	 * thread's allocation (wait_for_freed_ranges). */
	addr_set_remove(&managed_allocs, (uint64_t)(uintptr_t)ptr, NULL);
	atomic_store(&freed_unwaited, true);
	bool freed = arena_free(the_arena, (uint64_t)(uintptr_t)ptr, &a) == ARENA_OK;
	if (freed && hooks.on_free)
		hooks.on_free(&a);
	um_alloc_leave_context(entered);
	if (!freed)
		return false;
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
	out->fence_orders = as.fence_orders;
	out->fence_refusals = as.fence_refusals;
	out->last_resort_waits = as.last_resort_waits;
	out->runtime_allocs = atomic_load(&runtime_allocs);
	out->runtime_bytes = atomic_load(&runtime_bytes);
	driver_allocs_get(DRIVER_MEM_DEVICE, &out->driver_allocs, &out->driver_bytes, &out->driver_peak_bytes);
	driver_allocs_get(DRIVER_MEM_MANAGED, &out->driver_managed_allocs, &out->driver_managed_bytes,
			  &out->driver_managed_peak_bytes);
	out->one_stream = !um_backend_multi_stream();
}

/* Whether a device reset destroyed the arena's memory, or this is a
 * forked child, whose CUDA is not its parent's (the arena's lock may even
 * have been held by a thread the child does not have): then the runtime
 * serves the program, and answers a child as without umkit. A reset is
 * said at the first allocation after it (a reset just before the exit, as
 * CUDA's samples make, needs no word). */
static bool arena_gone(bool allocating)
{
	static atomic_int told;
	if (atomic_load(&forked))
		return true;
	if (!atomic_load(&arena_lost))
		return false;
	if (allocating)
		say_runtime_serves(&told, "again after resetting the device (cudaDeviceReset)");
	return true;
}

cudaError_t cudaMalloc(void **ptr, size_t size)
{
	if (!um_alloc_arena() || arena_gone(true) || !in_arena_context())
		return runtime_served(cudart_get()->Malloc(ptr, size), ptr, size);
	return serve(ptr, size, "cudaMalloc", NULL);
}

/* pitch_alignment's answer for an alignment the arena's packing cannot
 * keep for every row: one that does not divide ARENA_SMALL_ALIGN. */
#define PITCH_UNUSABLE SIZE_MAX

/* The runtime's row alignment for pitched allocations: the pitch it gives
 * one row of one byte. Learned at the first pitched allocation made where
 * the device may be synchronized (um_backend_may_synchronize), by a real
 * allocation freed at once, whose free synchronizes; a failure is not left
 * as the program's last error. 0 until then: the runtime serves the
 * allocation, and the next one asks again. */
static size_t pitch_alignment(void)
{
	static _Atomic size_t learned;
	size_t align = atomic_load(&learned);
	if (align || !um_backend_may_synchronize())
		return align;
	const struct cudart *rt = cudart_get();
	bool clean = cudart_clean();
	void *p;
	cudaError_t err = rt->MallocPitch(&p, &align, 1, 1);
	if (err == cudaSuccess)
		err = rt->Free(p);
	else
		align = 0;
	(void)cudart_quiet(clean, err);
	if (align && (align > ARENA_SMALL_ALIGN || ARENA_SMALL_ALIGN % align))
		align = PITCH_UNUSABLE;
	atomic_store(&learned, align); /* two threads learn the same */
	return align;
}

/* Whether the arena serves a pitched allocation of depth slices of height
 * rows of width bytes, and its layout as the runtime lays it out
 * (common/pitch.h): *row, the pitch, and *bytes. Not while the runtime's
 * alignment is unknown or unusable (pitch_alignment), nor a zero or
 * overflowing extent: the runtime answers those. */
static bool pitched_request(size_t width, size_t height, size_t depth, size_t *row, size_t *bytes)
{
	if (!um_alloc_arena() || arena_gone(true) || !in_arena_context())
		return false;
	size_t align = pitch_alignment();
	return align && align != PITCH_UNUSABLE && um_pitched_layout(width, height, depth, align, row, bytes);
}

/* Served whole: the rows padded to the runtime's pitch. */
cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
	size_t row, bytes;
	if (!ptr || !pitch || !pitched_request(width, height, 1, &row, &bytes)) {
		cudaError_t err = cudart_get()->MallocPitch(ptr, pitch, width, height);
		return runtime_served(err, ptr, err == cudaSuccess ? *pitch * height : 0);
	}
	cudaError_t err = serve(ptr, bytes, "cudaMallocPitch", NULL);
	if (err == cudaSuccess)
		*pitch = row;
	return err;
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *out, struct cudaExtent extent)
{
	size_t row, bytes;
	void *p;
	if (!out || !pitched_request(extent.width, extent.height, extent.depth, &row, &bytes)) {
		cudaError_t err = cudart_get()->Malloc3D(out, extent);
		return runtime_served(err, out ? &out->ptr : NULL,
				      err == cudaSuccess ? out->pitch * extent.height * extent.depth : 0);
	}
	cudaError_t err = serve(&p, bytes, "cudaMalloc3D", NULL);
	if (err == cudaSuccess)
		*out = (struct cudaPitchedPtr){ .ptr = p, .pitch = row, .xsize = extent.width, .ysize = extent.height };
	return err;
}

/* Whether the device of the calling thread's context lets the host and
 * the GPU use managed memory at once (concurrent managed access: Linux,
 * any GPU since Pascal). There a stream association
 * (cudaStreamAttachMemAsync) changes nothing, so the arena's memory, whose
 * association is a whole segment's, can stand for the program's own. Asked
 * until the driver answers. */
static bool concurrent_managed_access(void)
{
	static atomic_int known; /* 0: not yet answered; 1: yes; 2: no */
	int k = atomic_load(&known);
	CUdevice dev;
	int on;
	if (!k && cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
	    cuDeviceGetAttribute(&on, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev) == CUDA_SUCCESS) {
		k = on ? 1 : 2;
		atomic_store(&known, k);
	}
	return k == 1;
}

/* Waits for stream's work, in the relaxed capture mode: in the global
 * one the driver may count the call among those it refuses while another
 * thread captures, breaking that capture. The caller has asked
 * um_backend_may_synchronize. */
static void synchronize_relaxed(CUstream stream)
{
	CUstreamCaptureMode mode;
	bool relaxed = capture_relaxed_begin(&mode);
	(void)cuStreamSynchronize(stream);
	capture_relaxed_end(relaxed, mode);
}

/* The host may write the program's own managed memory as soon as the
 * program has it, in no stream's order. In the one stream order a freed
 * range goes to the next allocation at once (its fence is done:
 * um_backend.c), since whatever uses it next is queued behind the old
 * owner's kernels; the host's writes are not, and could reach what those
 * kernels still read (tests/gpu/fence_probe.cu, managed-host-write). A
 * plain cudaFree waits for the GPU; here the allocation waits for the
 * default stream instead, and only when something was freed since it
 * last did. Not where a synchronize could break a capture under way. */
static void wait_for_freed_ranges(void)
{
	if (!atomic_exchange(&freed_unwaited, false))
		return;
	if (!um_backend_may_synchronize()) {
		atomic_store(&freed_unwaited, true);
		return;
	}
	bool entered = um_alloc_enter_context();
	synchronize_relaxed(CU_STREAM_LEGACY);
	um_alloc_leave_context(entered);
}

/* The program's own managed memory, served alike: the arena's memory is
 * managed too, attached to every stream as cudaMemAttachGlobal attaches
 * it. Not with UMKIT_NO_MANAGED, whose device memory the host cannot
 * touch, nor memory attached to the host at first (cudaMemAttachHost),
 * nor a size of 0, which the runtime refuses, nor on a device where stream
 * associations matter (concurrent_managed_access), or not yet known to
 * be. Each is kept in managed_allocs; one that finds no memory there is
 * served all the same. */
cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
	if (!um_alloc_arena() || !managed || flags != cudaMemAttachGlobal || !size || arena_gone(true) ||
	    !in_arena_context() || !concurrent_managed_access())
		return runtime_served(cudart_get()->MallocManaged(ptr, size, flags), ptr, size);
	cudaError_t err = serve(ptr, size, TRACE_API_MANAGED, NULL);
	if (err != cudaSuccess)
		return err;
	if (addr_set_add(&managed_allocs, (uint64_t)(uintptr_t)*ptr, size) != 0)
		atomic_store(&managed_allocs_partial, true);
	wait_for_freed_ranges();
	return err;
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

/* Whether a stream-ordered allocation into stream is the arena's to make
 * in its context: it is the stream's device's, not the calling thread's.
 * The legacy and per-thread streams are the current context's. */
static bool stream_in_arena_context(cudaStream_t stream)
{
	CUcontext context = um_backend_stream_context((CUstream)stream);
	return context && context == atomic_load(&arena_context);
}

/* Whether a stream-ordered allocation into stream may be the arena's,
 * whatever its pool: not into a capture, and in the arena's context as
 * the calling thread and the stream both are. */
static bool ordered_in_arena(cudaStream_t stream)
{
	return um_alloc_arena() && !arena_gone(true) && !into_capture(stream) && in_arena_context() &&
	       stream_in_arena_context(stream);
}

/* Whether the arena stands in for pool (common/cuda/um_pools.h), or with
 * current, for the current pool of the calling thread's device (the
 * stream's: stream_in_arena_context). Said once when not: that memory is
 * the runtime's. */
static bool pool_served(cudaMemPool_t pool, bool current)
{
	static atomic_int told;
	bool clean = cudart_clean();
	int device;
	if (cudart_quiet(clean, cudart_get()->GetDevice(&device)) != cudaSuccess)
		return false;
	if (current ? um_pool_current_served(device) : um_pool_served(pool, device))
		return true;
	say_runtime_serves(&told, "from a memory pool that is more than device memory (one it can export, "
				  "caps, or shares with another device or the host) or that umkit did not see made");
	return false;
}

/* Stream-ordered: the arena fences the memory's reuse by the stream's
 * work too. */
static cudaError_t serve_ordered(void **ptr, size_t size, const char *api, cudaStream_t stream)
{
	bind_context(); /* the stream's note may queue work */
	um_backend_note_stream((CUstream)stream, api);
	return serve(ptr, size, api, stream);
}

cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
	if (!ordered_in_arena(stream) || !pool_served(NULL, true))
		return runtime_served(cudart_get()->MallocAsync(ptr, size, stream), ptr, size);
	return serve_ordered(ptr, size, TRACE_API_ASYNC, stream);
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
	if (!ordered_in_arena(stream) || !pool_served(pool, false))
		return runtime_served(cudart_get()->MallocFromPoolAsync(ptr, size, pool, stream), ptr, size);
	return serve_ordered(ptr, size, TRACE_API_FROM_POOL, stream);
}

/* The names a program built with --default-stream per-thread calls (the
 * runtime's header renames the stream-ordered calls, not cudaMalloc and
 * cudaFree), where stream 0 is the calling thread's default stream. Left
 * to the runtime, their allocations would not be the arena's, and a free
 * of the arena's memory there would reach the runtime. */
cudaError_t cudaMallocAsync_ptsz(void **ptr, size_t size, cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *ptr, cudaStream_t stream);

cudaError_t cudaMallocAsync_ptsz(void **ptr, size_t size, cudaStream_t stream)
{
	return cudaMallocAsync(ptr, size, stream ? stream : cudaStreamPerThread);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
	return cudaMallocFromPoolAsync(ptr, size, pool, stream ? stream : cudaStreamPerThread);
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
	uint64_t size = 0;
	bool noted = runtime_frees(ptr, &size);
	return runtime_freed(cudart_get()->Free(ptr), ptr, noted, size);
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
	/* Memory the runtime served (another context's, say) is the runtime's
	 * to free, without the stream's note. */
	if (ptr && um_alloc_arena() && !arena_gone(false) && in_arena(ptr)) {
		if (into_capture(stream))
			return refused(cudaErrorInvalidValue);
		bind_context(); /* the stream's note may queue work */
		/* Asked with the caller's context current, whose legacy and
		 * per-thread streams the special handles name. Another
		 * context's stream could take none of the fence's events, and
		 * the range may go to the next allocation at once: its work
		 * (a kernel of another GPU using the memory through peer
		 * access) is waited for here instead, where the runtime would
		 * hold the memory back until the stream's next
		 * synchronization. Not where a graph capture may be under way
		 * (um_backend_may_synchronize): a capture on a blocking stream
		 * of that context leaves its legacy stream unusable, which
		 * into_capture's query does not tell; the range then goes on
		 * at once, as it did before. */
		bool ours = stream_in_arena_context(stream);
		if (!ours && um_backend_may_synchronize())
			synchronize_relaxed((CUstream)stream);
		/* In the arena's context, as release() is made: the note may mark
		 * the end of the one stream order on the legacy stream. */
		bool entered = um_alloc_enter_context();
		if (ours)
			um_backend_note_stream((CUstream)stream, "cudaFreeAsync");
		bool freed = release(ptr);
		um_alloc_leave_context(entered);
		return freed ? cudaSuccess : refused(cudaErrorInvalidValue);
	}
	/* Into a capture, the free is made at the graph's launch. */
	if (into_capture(stream))
		return cudart_get()->FreeAsync(ptr, stream);
	uint64_t size = 0;
	bool noted = runtime_frees(ptr, &size);
	return runtime_freed(cudart_get()->FreeAsync(ptr, stream), ptr, noted, size);
}

cudaError_t cudaFreeAsync_ptsz(void *ptr, cudaStream_t stream)
{
	return cudaFreeAsync(ptr, stream ? stream : cudaStreamPerThread);
}

/* A stream association of memory the arena served. The program's own
 * managed memory is served only where associations change nothing
 * (concurrent_managed_access), and the runtime would apply one to the
 * arena's whole segment and refuse the allocation's size as its length:
 * so a request the runtime takes for such an allocation (the whole of it:
 * a length of 0 or its size; a single stream other than the legacy one)
 * is done as it stands. Any other is refused, as the runtime refuses one
 * naming device memory (the arena's other allocations). The stream itself
 * is not checked. */
cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *ptr, size_t length, unsigned int flags)
{
	struct arena_alloc a;
	if (!ptr || !um_alloc_arena() || arena_gone(false) || !in_arena(ptr))
		return cudart_get()->StreamAttachMemAsync(stream, ptr, length, flags);
	uint64_t address = (uint64_t)(uintptr_t)ptr;
	bool own = addr_set_has(&managed_allocs, address) || atomic_load(&managed_allocs_partial);
	bool whole = own && arena_lookup(the_arena, address, &a) && a.address == address &&
		     (!length || length == a.size);
	bool single = flags == cudaMemAttachSingle && stream != NULL && stream != cudaStreamLegacy;
	bool valid = flags == cudaMemAttachGlobal || flags == cudaMemAttachHost || single;
	return whole && valid ? cudaSuccess : refused(cudaErrorInvalidValue);
}

cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *ptr, size_t length, unsigned int flags);

cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *ptr, size_t length, unsigned int flags)
{
	return cudaStreamAttachMemAsync(stream ? stream : cudaStreamPerThread, ptr, length, flags);
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
 * when it died); the backend forgets its streams and events; what the
 * program got past the shim in that context is gone too. */
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
	driver_allocs_context_reset(ctx);
}

/* From a reset that destroyed the arena's memory on, the runtime serves
 * the program, and a pointer from before it gets the runtime's answer.
 * That differs from a run without umkit for memory from
 * cudaMallocAsync, which the runtime's reset leaves alone (its pools
 * outlive it) and which the arena serves like the rest. */
cudaError_t cudaDeviceReset(void)
{
	um_alloc_arena();
	if (!atomic_load(&forked)) {
		/* Every time: a thread with no context current resets the
		 * primary one of its device, which binding names. Once the
		 * arena is lost, what the program got past the shim since
		 * still goes with each reset. */
		CUcontext ctx = context_reset(bind_if_unbound());
		if (ctx && !atomic_load(&arena_lost))
			context_resets(ctx);
		else if (ctx)
			driver_allocs_context_reset(ctx);
	}
	return cudart_get()->DeviceReset();
}
