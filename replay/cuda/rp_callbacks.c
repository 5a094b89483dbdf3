/*
 * rp_callbacks.c: what the replayer learns on the program's threads —
 * kernel launches (execution ID and the allocations the arguments touch)
 * and allocations — handed to the engine; and the device memory in use,
 * sampled from the first launch on, for the measured peak residency.
 *
 * While the engine is idle (engine_follows_launches), launches cost
 * nothing: once the first ones have turned on what only a launch can (the
 * Unified Memory counters, the residency sampler), the launch callbacks go
 * off, and with them CUPTI's dispatch of every launch. The arena's fences
 * then cannot name the streams that may still use freed memory, so a free
 * synchronizes the context as cudaFree does (um_backend_launches_unseen).
 * The allocation that ends idleness turns the callbacks and the full path
 * on.
 */
#include <pthread.h>
#include <stdatomic.h>

#include <cuda.h>
#include <cupti.h>

#include "common/cuda/cupti_guard.h"
#include "common/cuda/cupti_um.h"
#include "common/cuda/launch_info.h"
#include "common/cuda/um_alloc.h"
#include "common/cuda/um_backend.h"
#include "log.h"
#include "rp.h"

static atomic_uint_fast64_t callback_ns;
static atomic_uint_fast64_t idle_launches;
static CUpti_SubscriberHandle subscriber;
/* The engine's engine_follows_launches, negated and mirrored here so that
 * a launch reads it without the engine's lock; it only ever turns false. */
static atomic_bool idle;
/* Taken to turn the callbacks off or on; launches_off is written under it. */
static pthread_mutex_t waking = PTHREAD_MUTEX_INITIALIZER;
static bool launches_off;
static pthread_mutex_t ends_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rp_iteration_end iteration_ends[RP_MAX_ITERATIONS];
static size_t n_iteration_ends;
static uint64_t seen_iterations;
static atomic_int mismatch_warned;

size_t rp_iteration_ends(struct rp_iteration_end *out, size_t max)
{
	pthread_mutex_lock(&ends_lock);
	size_t n = n_iteration_ends < max ? n_iteration_ends : max;
	for (size_t i = 0; i < n; i++)
		out[i] = iteration_ends[i];
	pthread_mutex_unlock(&ends_lock);
	return n;
}

/* After a launch that completed an iteration or brought the foreign verdict:
 * note iteration boundaries with the running totals (for binning the
 * counters; the launch that ends an iteration counts in the next) and warn
 * once if the engine decided the plan is for another program. */
static void after_engine(void)
{
	struct engine_stats st;
	struct um_alloc_stats as;
	engine_get_stats(rp_engine, &st);
	um_alloc_get_stats(&as);
	pthread_mutex_lock(&ends_lock);
	while (seen_iterations < st.iterations) {
		seen_iterations++;
		if (n_iteration_ends < RP_MAX_ITERATIONS)
			iteration_ends[n_iteration_ends++] = (struct rp_iteration_end){
				.ns = rp_now(), .callback_ns = atomic_load(&callback_ns),
				.allocator_ns = as.ns, .resynced = st.resynced, .lost = st.lost };
	}
	pthread_mutex_unlock(&ends_lock);
	if (st.signature_mismatch && atomic_exchange(&mismatch_warned, 1) == 0)
		um_warn("the plan was made for another program (its kernels or allocations differ); "
			"running without it: re-record and re-plan this program");
}

/* What every launch does, followed or not: the arena's fences learn its
 * stream, and the Unified Memory counters (refused before the first
 * launch) and the residency sampling start. Returns whether both have. */
static bool note_launch(CUstream stream)
{
	um_alloc_note_stream(stream);
	rp_residency_note_launch();
	return cupti_um_enable(NULL) != CUPTI_UM_TRYING;
}

static CUptiResult enable_launches(uint32_t enable)
{
	CUptiResult r = CUPTI_SUCCESS;
	for (int i = 0; i < launch_ncbids && r == CUPTI_SUCCESS; i++)
		r = cuptiEnableCallback(enable, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, launch_cbids[i]);
	return r;
}

static void warn_cupti(const char *what, CUptiResult r)
{
	const char *msg = "?";
	cuptiGetResultString(r, &msg);
	um_warn("cannot %s (%s)", what, msg);
}

/* Idle, with the counters and the sampler on: stop hearing of launches.
 * Called inside a launch callback, so it only tries the lock: a wake in
 * progress holds it while it calls into CUPTI. */
static void stop_hearing_launches(void)
{
	if (pthread_mutex_trylock(&waking) != 0)
		return;
	if (atomic_load(&idle) && !launches_off) {
		um_backend_launches_unseen(true);
		CUptiResult r = enable_launches(0);
		if (r == CUPTI_SUCCESS)
			launches_off = true;
		else
			um_backend_launches_unseen(false);
		um_debug("idle: kernel launch callbacks %s", r == CUPTI_SUCCESS ? "off" : "left on");
	}
	pthread_mutex_unlock(&waking);
}

static void on_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	struct launch_info li;
	struct engine_access acc[LAUNCH_MAX_ARGS];

	/* At exit only the marker is left to record, on the stream the entry
	 * noted: nothing to decode. */
	if (cb->callbackSite != CUPTI_API_ENTER) {
		engine_after_launch(rp_engine);
		return;
	}
	if (!launch_decode(cbid, cb, um_alloc_arena(), &li))
		return;
	rp_exec_set_launch_stream(li.stream);
	note_launch(li.stream);
	for (uint32_t i = 0; i < li.nargs; i++) {
		acc[i].alloc_id = li.args[i].alloc.id;
		acc[i].offset = li.args[i].offset;
	}
	if (engine_on_launch(rp_engine, li.exec_id, li.shape_id, acc, li.nargs))
		after_engine();
}

/* A launch while the engine is idle: nothing but note_launch, until the
 * callbacks can go off. */
static void on_idle_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	CUstream stream;
	if (cb->callbackSite != CUPTI_API_ENTER)
		return;
	atomic_fetch_add_explicit(&idle_launches, 1, memory_order_relaxed);
	if (launch_stream(cbid, cb, &stream) && note_launch(stream))
		stop_hearing_launches();
}

/* Driver calls that write device memory other than through a kernel. Each
 * one's parameter struct starts with the destination pointer (a CUdeviceptr
 * named dstDevice or dst); the 2-D, 3-D and batched copies do not and are
 * not followed. */
static const CUpti_CallbackId write_cbids[] = {
#define W(name) CUPTI_DRIVER_TRACE_CBID_##name
	W(cuMemsetD8_v2), W(cuMemsetD16_v2), W(cuMemsetD32_v2),
	W(cuMemsetD8_v2_ptds), W(cuMemsetD16_v2_ptds), W(cuMemsetD32_v2_ptds),
	W(cuMemsetD8Async), W(cuMemsetD16Async), W(cuMemsetD32Async),
	W(cuMemsetD8Async_ptsz), W(cuMemsetD16Async_ptsz), W(cuMemsetD32Async_ptsz),
	W(cuMemsetD2D8_v2), W(cuMemsetD2D16_v2), W(cuMemsetD2D32_v2),
	W(cuMemsetD2D8Async), W(cuMemsetD2D16Async), W(cuMemsetD2D32Async),
	W(cuMemsetD2D8Async_ptsz), W(cuMemsetD2D16Async_ptsz), W(cuMemsetD2D32Async_ptsz),
	W(cuMemcpyHtoD_v2), W(cuMemcpyHtoD_v2_ptds), W(cuMemcpyHtoDAsync_v2), W(cuMemcpyHtoDAsync_v2_ptsz),
	W(cuMemcpyDtoD_v2), W(cuMemcpyDtoD_v2_ptds), W(cuMemcpyDtoDAsync_v2), W(cuMemcpyDtoDAsync_v2_ptsz),
	W(cuMemcpy), W(cuMemcpy_ptds), W(cuMemcpyAsync), W(cuMemcpyAsync_ptsz),
	W(cuMemcpyPeer), W(cuMemcpyPeer_ptds), W(cuMemcpyPeerAsync), W(cuMemcpyPeerAsync_ptsz),
#undef W
};

static void on_write(const CUpti_CallbackData *cb)
{
	struct arena_alloc a;
	CUdeviceptr dst = *(const CUdeviceptr *)cb->functionParams;
	arena *ar = um_alloc_arena();
	if (cb->callbackSite == CUPTI_API_ENTER && ar && arena_lookup(ar, (uint64_t)dst, &a))
		engine_on_write(rp_engine, a.id);
}

uint64_t rp_callback_ns(void)
{
	return atomic_load(&callback_ns);
}

uint64_t rp_idle_launches(void)
{
	return atomic_load(&idle_launches);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	if (!atomic_load(&rp_active) || domain != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	if (!launch_is_kernel_cbid(cbid)) {
		on_write(data);
		return;
	}
	if (atomic_load_explicit(&idle, memory_order_relaxed)) {
		on_idle_launch(cbid, data);
		return;
	}
	uint64_t t0 = rp_now();
	on_launch(cbid, data);
	atomic_fetch_add(&callback_ns, rp_now() - t0);
}

static void on_free(const struct arena_alloc *a)
{
	if (atomic_load(&rp_active))
		engine_on_free(rp_engine, a->id);
}

static CUptiResult follow_writes(void)
{
	CUptiResult r = CUPTI_SUCCESS;
	for (size_t i = 0; i < sizeof write_cbids / sizeof write_cbids[0] && r == CUPTI_SUCCESS; i++)
		r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, write_cbids[i]);
	return r;
}

/* The engine stopped being idle: launches take the full path from now on,
 * and writes are followed again. */
static void follow_launches(void)
{
	pthread_mutex_lock(&waking);
	if (atomic_load(&idle)) {
		CUptiResult r;
		if (launches_off) {
			if ((r = enable_launches(1)) != CUPTI_SUCCESS)
				warn_cupti("follow the program's kernel launches", r);
			um_backend_launches_unseen(false);
			launches_off = false;
		}
		if ((r = follow_writes()) != CUPTI_SUCCESS)
			warn_cupti("follow the program's writes", r);
		atomic_store(&idle, false);
		um_info("the program's memory outgrew the budget the plan fits in: following its kernel launches from now on");
	}
	pthread_mutex_unlock(&waking);
}

static void on_alloc(const struct arena_alloc *a, const char *api, CUstream stream)
{
	if (!atomic_load(&rp_active))
		return;
	/* The engine first: once it knows the range is live it queues no more
	 * discards of it, so none can be added after the forgetting. */
	bool follows = engine_on_alloc(rp_engine, a->id, a->address, a->size);
	rp_exec_forget_discards(a->address, a->size);
	if (follows && atomic_load(&idle))
		follow_launches();
}

CUptiResult rp_callbacks_start(void)
{
	static const struct um_alloc_hooks hooks = { on_alloc, on_free };
	atomic_store(&idle, !engine_follows_launches(rp_engine));
	CUptiResult r = cupti_real()->Subscribe(&subscriber, on_callback, NULL);
	if (r == CUPTI_SUCCESS)
		r = enable_launches(1);
	if (r == CUPTI_SUCCESS && !atomic_load(&idle))
		r = follow_writes();
	if (r == CUPTI_SUCCESS)
		um_alloc_set_hooks(&hooks);
	return r;
}

void rp_callbacks_stop(void)
{
	cupti_real()->Unsubscribe(subscriber);
}
