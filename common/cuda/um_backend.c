/*
 * um_backend.c: the arena's memory and fences on CUDA (see um_backend.h).
 *
 * All calls into the ring happen under the arena's lock (the arena calls its
 * backend only while holding it), so the ring needs no lock of its own; the
 * stream registry is fed from launch callbacks on any thread and has one.
 */
#include "um_backend.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "clock.h"
#include "cudart.h"
#include "log.h"

#define FENCE_SLOTS 1024  /* fences in flight before recording waits */
#define MAX_STREAMS 64    /* non-blocking streams tracked */

struct fence {
	uint64_t token;   /* 0: slot unused */
	int nevents;
	cudaEvent_t ev[1 + MAX_STREAMS];
	int created;      /* events created in this slot so far (reused) */
};

static struct fence ring[FENCE_SLOTS];
static uint64_t next_token = 1;
static uint64_t done_upto; /* every fence <= this has completed */

/* Streams that have had work, whether each is non-blocking and has had
 * work since the last fence; and whether a fence must wait for the whole
 * context instead: work on a stream beyond MAX_STREAMS (for good), or a
 * stream destroyed with work maybe still queued (for the next fence). */
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { CUstream s; int nonblocking; int dirty; } streams[MAX_STREAMS];
static int nstreams;
static atomic_bool streams_overflow, destroyed_dirty;

static bool managed_memory;
static atomic_uint_fast64_t wait_ns; /* blocked in fence_slot_wait */

/* Set once work is queued anywhere but the legacy default stream. Until
 * then every kernel runs in one stream order, so a kernel that uses a
 * reused range is queued behind every kernel that used it before the free:
 * a fence needs no waiting (PyTorch's caching allocator relies on the same
 * stream order). This assumes the program touches device allocations only
 * through stream-ordered CUDA calls, as a program written for cudaMalloc
 * memory must. */
static atomic_bool multi_stream;
static atomic_bool launches_unseen;

void um_backend_stream_begin(CUstream s)
{
	if (s == NULL || s == CU_STREAM_LEGACY)
		return;
	if (!atomic_load_explicit(&multi_stream, memory_order_relaxed))
		atomic_store(&multi_stream, true);
}

/* streams[] index of s, or nstreams; under streams_lock. */
static int stream_index(CUstream s)
{
	int i;
	for (i = 0; i < nstreams && streams[i].s != s; i++)
		;
	return i;
}

void um_backend_stream_queued(CUstream s)
{
	/* The per-thread default streams are blocking: the event on the legacy
	 * stream already orders after their work. */
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return;
	pthread_mutex_lock(&streams_lock);
	int i = stream_index(s);
	if (i == nstreams) {
		unsigned flags = 0;
		if (nstreams == MAX_STREAMS) {
			if (!atomic_exchange(&streams_overflow, true))
				um_warn("work on more than %d CUDA streams: a free now waits for the whole GPU",
					MAX_STREAMS);
			pthread_mutex_unlock(&streams_lock);
			return;
		}
		cuStreamGetFlags(s, &flags);
		streams[i].s = s;
		streams[i].nonblocking = (flags & CU_STREAM_NON_BLOCKING) != 0;
		nstreams++;
	}
	streams[i].dirty = streams[i].nonblocking;
	pthread_mutex_unlock(&streams_lock);
}

void um_backend_note_stream(CUstream s)
{
	um_backend_stream_begin(s);
	um_backend_stream_queued(s);
}

void um_backend_stream_destroyed(CUstream s)
{
	pthread_mutex_lock(&streams_lock);
	int i = stream_index(s);
	if (i < nstreams) {
		if (streams[i].dirty)
			atomic_store(&destroyed_dirty, true);
		streams[i] = streams[--nstreams];
	}
	pthread_mutex_unlock(&streams_lock);
}

void um_backend_launches_unseen(bool unseen)
{
	if (!unseen)
		cuCtxSynchronize();
	atomic_store(&launches_unseen, unseen);
}

bool um_backend_multi_stream(void)
{
	return atomic_load(&multi_stream);
}

uint64_t um_backend_fence_wait_ns(void)
{
	return atomic_load(&wait_ns);
}

static int event_at(struct fence *f, int i, const struct cudart *rt)
{
	for (; f->created <= i; f->created++)
		if (rt->EventCreateWithFlags(&f->ev[f->created], cudaEventDisableTiming) != cudaSuccess)
			return -1;
	return 0;
}

static bool fence_slot_done(struct fence *f, const struct cudart *rt)
{
	for (int i = 0; i < f->nevents; i++)
		if (rt->EventQuery(f->ev[i]) == cudaErrorNotReady)
			return false;
	return true;
}

static void fence_slot_wait(struct fence *f, const struct cudart *rt)
{
	/* In one stream order a fence has no events: a full ring passes here
	 * at every free, with nothing to time. */
	if (!f->nevents)
		return;
	uint64_t t0 = um_now_ns();
	for (int i = 0; i < f->nevents; i++)
		rt->EventSynchronize(f->ev[i]);
	atomic_fetch_add_explicit(&wait_ns, um_now_ns() - t0, memory_order_relaxed);
}

/* Advances done_upto over completed fences, oldest first: a fence counts as
 * done only once every earlier one is, which keeps "later implies earlier"
 * even though each fence covers only the streams busy since the last. */
static void advance(uint64_t limit, bool wait)
{
	const struct cudart *rt = cudart_get();
	while (done_upto < limit && done_upto + 1 < next_token) {
		struct fence *f = &ring[(done_upto + 1) % FENCE_SLOTS];
		if (wait)
			fence_slot_wait(f, rt);
		else if (!fence_slot_done(f, rt))
			return;
		f->token = 0;
		done_upto++;
	}
}

static uint64_t fence_record(void *ctx)
{
	const struct cudart *rt = cudart_get();
	uint64_t token = next_token;
	struct fence *f = &ring[token % FENCE_SLOTS];
	if (f->token)
		advance(f->token, true); /* ring full: the oldest must finish first */

	f->nevents = 0;
	bool whole = atomic_load(&launches_unseen) || atomic_load(&streams_overflow) ||
		     atomic_exchange(&destroyed_dirty, false);
	if (whole)
		cuCtxSynchronize(); /* as cudaFree does: the fence is complete */
	if (whole || !atomic_load(&multi_stream)) {
		/* Nothing left to wait for, or one stream order (see multi_stream). */
		f->token = token;
		return next_token++;
	}
	if (event_at(f, 0, rt) == 0 && rt->EventRecord(f->ev[0], cudaStreamLegacy) == cudaSuccess)
		f->nevents = 1;
	pthread_mutex_lock(&streams_lock);
	for (int i = 0; i < nstreams; i++) {
		if (!streams[i].dirty)
			continue;
		streams[i].dirty = 0;
		if (event_at(f, f->nevents, rt) == 0 &&
		    rt->EventRecord(f->ev[f->nevents], (cudaStream_t)streams[i].s) == cudaSuccess)
			f->nevents++;
	}
	pthread_mutex_unlock(&streams_lock);
	f->token = token;
	next_token++;
	return token;
}

static bool fence_done(void *ctx, uint64_t token)
{
	if (!atomic_load(&multi_stream))
		return true;
	advance(token, false);
	return done_upto >= token;
}

static void fence_wait(void *ctx, uint64_t token)
{
	advance(token, true);
}

static int map(void *ctx, uint64_t bytes, uint64_t *base)
{
	const struct cudart *rt = cudart_get();
	void *p = NULL;
	bool clean = rt->PeekAtLastError() == cudaSuccess;
	cudaError_t err = managed_memory ? rt->MallocManaged(&p, bytes, cudaMemAttachGlobal)
					 : rt->Malloc(&p, bytes);
	if (err != cudaSuccess) {
		/* The arena may free idle segments and try again, and succeed:
		 * then the program must not find this failure as its last
		 * error (PyTorch checks it after its next launch). An error the
		 * program left pending is its own, and stays. */
		if (clean)
			rt->GetLastError();
		return -1;
	}
	/* The arena's promise that tensors never share a UM block rests on
	 * 2 MB-aligned segments; CUDA aligns allocations of this size so, but
	 * check rather than assume. */
	if ((uintptr_t)p % ARENA_BLOCK_SIZE) {
		um_warn("CUDA returned a segment at %p, not 2 MB-aligned; not using it", p);
		rt->Free(p);
		return -1;
	}
	*base = (uint64_t)(uintptr_t)p;
	return 0;
}

static void unmap(void *ctx, uint64_t base, uint64_t bytes)
{
	cudart_get()->Free((void *)(uintptr_t)base);
}

void um_backend_init(struct arena_backend *b, bool managed)
{
	managed_memory = managed;
	memset(b, 0, sizeof *b);
	b->map = map;
	b->unmap = unmap;
	b->fence_record = fence_record;
	b->fence_done = fence_done;
	b->fence_wait = fence_wait;
}
