/* fence_order.c: the program's streams queued behind the arena's fences
 * on the GPU (see fence_order.h). */
#include "fence_order.h"

#include <pthread.h>
#include <stdatomic.h>

#include "capture.h"
#include "log.h"
#include "ordered_streams.h"

/* The join stream and the order's event, made once (again after a
 * reset); closed while launches go unseen. Set under order_lock, which
 * the arena's lock is taken before, never after; the event is read by the
 * program's calls without it. */
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static CUstream join;
static _Atomic(CUevent) ordered;
static bool closed = true;
/* The newest fence ordered: each stream's next call waits for `ordered`
 * as recorded at or after it was set. 0: none. */
static _Atomic uint64_t newest;
static __thread struct ordered_streams behind;

/* The driver calls below, on events and streams, are made in the relaxed
 * capture mode once a capture was seen (capture_relaxed_if_watching), as
 * um_backend.c's event calls are, so that another thread's capture in the
 * global mode does not count them among the calls it refuses. */

bool fence_order_await(void *ctx, void *event, void *stream)
{
	CUstreamCaptureMode mode;
	bool relaxed = capture_relaxed_if_watching(&mode);
	CUresult res = cuStreamWaitEvent(stream, event, 0);
	capture_relaxed_end(relaxed, mode);
	return res == CUDA_SUCCESS;
}

/* The join stream and the order's event, in context; under order_lock. */
static bool made(CUcontext context)
{
	if (atomic_load(&ordered))
		return true;
	CUcontext was;
	CUevent event = NULL;
	bool pushed = context && cuCtxPushCurrent(context) == CUDA_SUCCESS;
	CUstreamCaptureMode mode;
	bool relaxed = capture_relaxed_if_watching(&mode);
	CUresult res = cuStreamCreate(&join, CU_STREAM_NON_BLOCKING);
	if (res == CUDA_SUCCESS && (res = cuEventCreate(&event, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
		cuStreamDestroy(join);
	capture_relaxed_end(relaxed, mode);
	if (res == CUDA_SUCCESS)
		atomic_store(&ordered, event);
	if (pushed)
		cuCtxPopCurrent(&was);
	if (res != CUDA_SUCCESS)
		um_debug("no stream to order freed memory's reuse on (CUDA error %d): allocations wait for fences",
			 (int)res);
	return res == CUDA_SUCCESS;
}

bool fence_order_promise(struct fence_ring *ring, uint64_t token, CUcontext context)
{
	pthread_mutex_lock(&order_lock);
	/* The join stream already waits for every fence up to newest, and the
	 * order's event was recorded after. */
	bool promised = !closed && (token <= atomic_load(&newest) ||
				    (made(context) && fence_ring_join(ring, token, join)));
	if (promised && token > atomic_load(&newest)) {
		CUstreamCaptureMode mode;
		bool relaxed = capture_relaxed_if_watching(&mode);
		promised = cuEventRecord(atomic_load(&ordered), join) == CUDA_SUCCESS;
		capture_relaxed_end(relaxed, mode);
		if (promised)
			atomic_store(&newest, token);
	}
	pthread_mutex_unlock(&order_lock);
	return promised;
}

/* The context a special handle names (the calling thread's current one),
 * which tells one context's legacy stream from another's; NULL for a
 * stream the program made, which is one stream in any context. */
static CUcontext special_context(CUstream s)
{
	CUcontext current = NULL;
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		cuCtxGetCurrent(&current);
	return current;
}

void fence_order_stream(CUstream s, unsigned gen)
{
	uint64_t token = atomic_load(&newest);
	if (!token)
		return;
	CUcontext context = special_context(s);
	if (ordered_streams_behind(&behind, s, context, token, gen))
		return;
	/* The event as recorded for token or a later order: recorded before
	 * newest was set. (A reset destroys it, and makes newest 0 again.) */
	CUevent event = atomic_load(&ordered);
	CUstreamCaptureMode mode;
	bool relaxed = capture_relaxed_if_watching(&mode);
	CUresult res = cuStreamWaitEvent(s, event, 0);
	if (res != CUDA_SUCCESS) /* the host waits instead */
		res = cuEventSynchronize(event);
	capture_relaxed_end(relaxed, mode);
	if (res != CUDA_SUCCESS)
		um_debug("cannot queue stream %p behind the last use of freed memory (CUDA error %d)", (void *)s,
			 (int)res);
	ordered_streams_note(&behind, s, context, token, gen);
}

void fence_order_settle(void)
{
	pthread_mutex_lock(&order_lock);
	closed = true;
	if (atomic_load(&newest)) {
		CUstreamCaptureMode mode;
		bool relaxed = capture_relaxed_if_watching(&mode);
		cuEventSynchronize(atomic_load(&ordered));
		capture_relaxed_end(relaxed, mode);
	}
	pthread_mutex_unlock(&order_lock);
}

void fence_order_reopen(void)
{
	pthread_mutex_lock(&order_lock);
	closed = false;
	pthread_mutex_unlock(&order_lock);
}

void fence_order_reset(void)
{
	pthread_mutex_lock(&order_lock);
	atomic_store(&newest, 0);
	atomic_store(&ordered, NULL);
	join = NULL;
	pthread_mutex_unlock(&order_lock);
}
