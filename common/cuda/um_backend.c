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

#include "capture.h"
#include "capture_threads.h"
#include "cudart.h"
#include "fence_order.h"
#include "fence_ring.h"
#include "fence_streams.h"
#include "launch_view.h"
#include "log.h"

/* Streams tracked (every stream the program queued work on, blocking or
 * not, of any context): a fence's events, one each and one on the legacy
 * stream. */
#define MAX_STREAMS (FENCE_RING_EVENTS - 1)

static struct fence_ring ring;

/* Streams that have had work, whether each is non-blocking and has had
 * work since the last fence; and whether fences wait for the whole context
 * instead, for good: work on a stream beyond MAX_STREAMS. No driver call is
 * made holding streams_lock, so no thread waits for it while the driver
 * waits for that thread. */
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	CUstream s;
	CUcontext context; /* its own; NULL when the driver would not say */
	int nonblocking;
	int busy;        /* has had work since the last fence */
	unsigned queued; /* counts the calls that queued work, to see a race */
	/* Its work queued before its capture began has finished, waited for
	 * at the beginning (um_backend_capture_begins); until its next work
	 * outside a capture. */
	int drained;
} streams[MAX_STREAMS];
static int nstreams;
static atomic_bool streams_overflow;
/* Streams whose capture a callback saw begin that have no place in
 * streams[] (it was full): fences take no events once it is, but must not
 * synchronize while one captures (capture_seen_under_way). Under
 * streams_lock; each leaves at its capture's end (or refused beginning),
 * its destroy, or a reset.
 * Beyond their room a capture is not followed, which is said. */
static CUstream unplaced[MAX_STREAMS];
static int nunplaced;
/* Streams being destroyed, not yet taken out of streams[]: the destroy
 * callback runs inside the driver's cuStreamDestroy, where it should wait
 * for nothing that may wait for the driver; it only queues the handle
 * here, under a lock no driver call is made in.
 * The next fence, or the next call that queues work (its handle may be a
 * destroyed one's come back), takes them out; the next fence waits for the
 * whole context if one still had work. Beyond the queue's room, which
 * registry entries are stale is unknown: the registry is emptied. */
static pthread_mutex_t destroyed_lock = PTHREAD_MUTEX_INITIALIZER;
static CUstream destroyed[MAX_STREAMS];
static int ndestroyed;
static bool destroyed_overflow;
static atomic_bool destroyed_pending, destroyed_busy;
/* Counts destroy callbacks: a fence that sees it move while it records
 * events may have lost a destroyed stream's work, and waits for the GPU. */
static atomic_uint destroy_gen;

static bool managed_memory;
/* The context the arena's memory is in (um_backend_serve_context). A
 * stream of another, another GPU's, can take none of a fence's events,
 * and a synchronize of this one would not wait for it either: its work is
 * not the fences' to follow, nor does it end the one stream order below
 * (stream_elsewhere). That it may touch the arena's memory through peer
 * access is left to the program, as plain CUDA's free leaves it. */
static _Atomic(CUcontext) served_context;
/* The calling thread's map was refused while it had no error pending: the
 * refusal is now its last error (the runtime keeps one per thread). */
static __thread bool refused_clean;

/* Set once work is queued anywhere but the legacy default stream. Until
 * then every kernel runs in one stream order, so a kernel that uses a
 * reused range is queued behind every kernel that used it before the free:
 * a fence needs no waiting (PyTorch's caching allocator relies on the same
 * stream order). This assumes the program touches device allocations only
 * through stream-ordered CUDA calls, as a program written for cudaMalloc
 * memory must. */
static atomic_bool multi_stream;
/* Held while work that relies on the one stream order is queued
 * (um_backend_single_stream_hold); the end of that order waits for it. */
static pthread_mutex_t single_stream_lock = PTHREAD_MUTEX_INITIALIZER;
/* Whether fences can name the streams that may use freed memory. */
static launch_view view = LAUNCH_VIEW_INIT;

/* Where the one stream order ended (one_stream_order_ends), while work
 * on other streams must still be queued behind it; order_settled once
 * that end is marked or given up. All three set under single_stream_lock. */
static CUevent order_end;
static atomic_bool order_end_pending;
static atomic_bool order_settled;

/* Set by the replayer (um_backend_order_end_host_wait). */
typedef void (*host_wait_fn)(void);
static _Atomic(host_wait_fn) order_end_host_wait;

static void one_stream_order_ends(const char *call, CUstream s);
static void order_end_waits(CUstream s);

CUcontext um_backend_stream_context(CUstream s)
{
	CUcontext context = NULL;
	CUgreenCtx green;
	return cuStreamGetCtx_v2(s, &context, &green) == CUDA_SUCCESS ? context : NULL;
}

void um_backend_serve_context(CUcontext context)
{
	atomic_store(&served_context, context);
}

/* Whether context, a stream's, is known to be another than the arena's. */
static bool context_elsewhere(CUcontext context)
{
	CUcontext served = atomic_load(&served_context);
	return served && context && context != served;
}

/* The stream the calling thread last asked stream_elsewhere about, and the
 * answer: good while no stream was destroyed since (destroy_gen), as its
 * handle may come back as another's. */
static __thread CUstream asked_stream;
static __thread unsigned asked_gen;
static __thread bool asked_elsewhere;

/* Whether stream s is in another context than the arena's: never before
 * the arena has one. A special handle is the calling thread's current
 * context, which may change, so only a created stream's answer is kept. */
static bool stream_elsewhere(CUstream s)
{
	if (!atomic_load(&served_context))
		return false;
	if (s == CU_STREAM_PER_THREAD)
		return context_elsewhere(um_backend_stream_context(s));
	unsigned gen = atomic_load(&destroy_gen);
	if (s != asked_stream || gen != asked_gen) {
		asked_elsewhere = context_elsewhere(um_backend_stream_context(s));
		asked_stream = s;
		asked_gen = gen;
	}
	return asked_elsewhere;
}

void um_backend_stream_begin(CUstream s, const char *call)
{
	fence_order_stream(s, atomic_load(&destroy_gen));
	if (s == NULL || s == CU_STREAM_LEGACY)
		return;
	/* Asked until the order is settled: another GPU's stream must not end
	 * it, nor wait for its end. Where only other GPUs' streams have work
	 * besides the legacy stream, that is at each of their calls: a driver
	 * query when the thread's created stream changes, and at every call
	 * on its per-thread default stream. */
	if (!atomic_load_explicit(&order_settled, memory_order_acquire) && !stream_elsewhere(s))
		one_stream_order_ends(call, s);
	if (atomic_load(&order_end_pending) && !stream_elsewhere(s))
		order_end_waits(s);
}

void um_backend_default_stream_begin(CUstream s)
{
	fence_order_stream(s, atomic_load(&destroy_gen));
}

void um_backend_order_end_host_wait(void (*wait)(void))
{
	atomic_store(&order_end_host_wait, wait);
}

bool um_backend_single_stream_hold(void)
{
	pthread_mutex_lock(&single_stream_lock);
	/* While launches go unseen, or since they were seen again but before
	 * the synchronize that drains what was queued unseen (an idle replay
	 * woken by an allocation), other streams may hold work that no call
	 * showed: a kernel there may still read a range freed meanwhile. */
	return !atomic_load(&multi_stream) && (atomic_load(&view) & 3) == LAUNCH_VIEW_SEEN;
}

void um_backend_single_stream_release(void)
{
	pthread_mutex_unlock(&single_stream_lock);
}

/* streams[] index of s, or nstreams; under streams_lock. */
static int stream_index(CUstream s)
{
	int i;
	for (i = 0; i < nstreams && streams[i].s != s; i++)
		;
	return i;
}

/* Takes s out of unplaced[], if there; under streams_lock. */
static void unplace(CUstream s)
{
	for (int i = 0; i < nunplaced; i++)
		if (unplaced[i] == s) {
			unplaced[i] = unplaced[--nunplaced];
			return;
		}
}

/* Takes the streams destroyed since this was last called out of the
 * registry, noting in destroyed_busy whether one may still have had work
 * queued. Under streams_lock. */
static void forget_destroyed(void)
{
	if (!atomic_load(&destroyed_pending) || !atomic_exchange(&destroyed_pending, false))
		return;
	bool busy = false;
	pthread_mutex_lock(&destroyed_lock);
	if (destroyed_overflow) {
		busy = nstreams > 0;
		nstreams = 0;
	}
	for (int k = 0; k < ndestroyed; k++) {
		unplace(destroyed[k]);
		int i = stream_index(destroyed[k]);
		if (i < nstreams) {
			busy |= streams[i].busy && streams[i].nonblocking &&
				!context_elsewhere(streams[i].context);
			streams[i] = streams[--nstreams];
		}
	}
	ndestroyed = 0;
	destroyed_overflow = false;
	pthread_mutex_unlock(&destroyed_lock);
	if (busy)
		atomic_store(&destroyed_busy, true);
}

void um_backend_stream_queued(CUstream s)
{
	/* The per-thread default streams are blocking: the event on the legacy
	 * stream already orders after their work. */
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || atomic_load(&streams_overflow))
		return;
	pthread_mutex_lock(&streams_lock);
	forget_destroyed();
	int i = stream_index(s);
	if (i == nstreams) {
		/* A new stream: its flags are asked for outside the lock, but not
		 * while it captures a graph, whose work runs only at the graph's
		 * launch. On the H100 the tools broke every capture on a stream
		 * they first saw inside it, and this query is the one driver call
		 * on that path (tests/gpu/capture_wake_probe.cu). The stream is
		 * taken on at its first work outside a capture. */
		pthread_mutex_unlock(&streams_lock);
		if (capture_stream_capturing(s))
			return;
		unsigned flags = 0;
		cuStreamGetFlags(s, &flags);
		CUcontext context = um_backend_stream_context(s);
		pthread_mutex_lock(&streams_lock);
		i = stream_index(s);
		if (i == nstreams && nstreams == MAX_STREAMS) {
			pthread_mutex_unlock(&streams_lock);
			if (!atomic_exchange(&streams_overflow, true))
				um_warn("work on more than %d CUDA streams: a free now waits for the whole GPU",
					MAX_STREAMS);
			return;
		}
		if (i == nstreams) {
			streams[i].s = s;
			streams[i].context = context;
			streams[i].nonblocking = (flags & CU_STREAM_NON_BLOCKING) != 0;
			nstreams++;
			um_debug("fences follow stream %p: %s", (void *)s,
				 streams[i].nonblocking ? "non-blocking, an event of its own"
							: "blocking, covered by the legacy stream's event");
		}
	}
	streams[i].busy = 1;
	streams[i].queued++;
	streams[i].drained = 0;
	pthread_mutex_unlock(&streams_lock);
}

void um_backend_capture_begins(CUstream s)
{
	/* Not while the end of the one stream order is marked or waited for
	 * (one_stream_order_ends, order_end_waits), which the capture must not
	 * see: those see it from here on (capture_watching). */
	pthread_mutex_lock(&single_stream_lock);
	pthread_mutex_unlock(&single_stream_lock);
	if (s == CU_STREAM_PER_THREAD)
		capture_threads_begin();
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || capture_stream_capturing(s))
		return;
	/* Taken on now, while its flags may still be asked: a fence made
	 * during the capture must know whether it is a blocking stream. And
	 * another GPU's stream too, so that no synchronize is made while it
	 * captures (capture_seen_under_way); but no fence takes events on it,
	 * so its work is not waited for. */
	um_backend_stream_queued(s);
	/* Beyond the registry's places, in unplaced[] instead. */
	static atomic_bool unfollowed;
	bool lost = false;
	pthread_mutex_lock(&streams_lock);
	if (stream_index(s) == nstreams) {
		unplace(s);
		if (nunplaced < MAX_STREAMS)
			unplaced[nunplaced++] = s;
		else
			lost = true;
	}
	pthread_mutex_unlock(&streams_lock);
	if (lost && !atomic_exchange(&unfollowed, true))
		um_warn("graph captures on more than %d CUDA streams besides the %d followed: a free may synchronize "
			"during one, which breaks it", MAX_STREAMS, MAX_STREAMS);
	if (stream_elsewhere(s))
		return;
	pthread_mutex_lock(&streams_lock);
	int i = stream_index(s);
	unsigned queued = i < nstreams ? streams[i].queued : 0;
	pthread_mutex_unlock(&streams_lock);
	cuStreamSynchronize(s);
	/* Drained unless another thread queued work on it meanwhile. */
	pthread_mutex_lock(&streams_lock);
	i = stream_index(s);
	if (i < nstreams && streams[i].queued == queued)
		streams[i].drained = 1;
	pthread_mutex_unlock(&streams_lock);
}

void um_backend_capture_refused(CUstream s)
{
	if (s == CU_STREAM_PER_THREAD) {
		capture_threads_refused();
		return;
	}
	pthread_mutex_lock(&streams_lock);
	unplace(s);
	pthread_mutex_unlock(&streams_lock);
}

void um_backend_capture_ends(CUstream s)
{
	if (s == CU_STREAM_PER_THREAD) {
		capture_threads_end();
		return;
	}
	pthread_mutex_lock(&streams_lock);
	unplace(s);
	pthread_mutex_unlock(&streams_lock);
}

void um_backend_note_stream(CUstream s, const char *call)
{
	um_backend_stream_begin(s, call);
	um_backend_stream_queued(s);
}

void um_backend_stream_destroyed(CUstream s)
{
	pthread_mutex_lock(&destroyed_lock);
	if (ndestroyed < MAX_STREAMS)
		destroyed[ndestroyed++] = s;
	else
		destroyed_overflow = true;
	pthread_mutex_unlock(&destroyed_lock);
	atomic_store(&destroyed_pending, true);
	atomic_fetch_add(&destroy_gen, 1);
}

void um_backend_forget_refusal(bool served)
{
	if (!refused_clean)
		return;
	refused_clean = false;
	if (served)
		cudart_get()->GetLastError();
}

/* Forgets the streams known, whose handles may name other streams by
 * now; their work must be waited for otherwise. But with keep_captures,
 * those whose capture a callback saw begin (drained), whose destroys the
 * callbacks see too: a fence must not synchronize while they capture
 * (capture_seen_under_way). */
static void forget_streams(bool keep_captures)
{
	pthread_mutex_lock(&streams_lock);
	int kept = 0;
	for (int i = 0; i < nstreams; i++)
		if (keep_captures && streams[i].drained)
			streams[kept++] = streams[i];
	nstreams = kept;
	if (!keep_captures)
		nunplaced = 0;
	pthread_mutex_unlock(&streams_lock);
	atomic_fetch_add(&destroy_gen, 1); /* for stream_elsewhere's answers */
}

void um_backend_launches_seen(bool from_start)
{
	/* While launches went unseen, no destroy callback told of the streams
	 * destroyed (an idle replay is subscribed to none), so a stream known
	 * then (from a cudaMallocAsync) may be gone, and its handle another
	 * stream's. The next fence synchronizes, which covers their work:
	 * forgotten before the view says so, so that the fence that claims it
	 * synchronizes after this. A capture seen beginning since the
	 * subscription, made before this call, keeps its stream. */
	if (!from_start)
		forget_streams(true);
	launch_view_seen(&view, from_start);
	fence_order_reopen();
}

void um_backend_launches_unseen(void)
{
	launch_view_unseen(&view);
	fence_order_settle();
}

void um_backend_device_reset(void)
{
	/* The reset finishes the work queued before it, so the one stream
	 * order's end has passed, and it destroys the event that marks it. */
	pthread_mutex_lock(&single_stream_lock);
	atomic_store(&order_end_pending, false);
	order_end = NULL;
	pthread_mutex_unlock(&single_stream_lock);
	/* And every stream: a handle from before it may come back as a new
	 * stream's. */
	forget_streams(false);
	fence_order_reset();
	pthread_mutex_lock(&destroyed_lock);
	ndestroyed = 0;
	destroyed_overflow = false;
	pthread_mutex_unlock(&destroyed_lock);
}

bool um_backend_multi_stream(void)
{
	return atomic_load(&multi_stream);
}

uint64_t um_backend_fence_wait_ns(void)
{
	return atomic_load(&ring.wait_ns);
}

/* The fences' event calls: made in the relaxed capture mode once a
 * capture was seen (or may have begun unseen: capture_watching), as
 * um_alloc.c's synchronize_relaxed: made by a thread in the global mode
 * while another thread captures in it, the driver may count such a call
 * among those it refuses, which breaks that capture (an event query does:
 * PyTorch's NCCL watchdog broke captures so, until it queried in another
 * mode). A failure is not left as the thread's last error, which the
 * program would take for its own (PyTorch checks it after its next
 * launch), nor does it replace the program's (cudart_quiet); "not ready"
 * is a query's answer, no failure. */
struct event_call {
	bool clean, relaxed;
	CUstreamCaptureMode mode;
};

static struct event_call event_call_begin(void)
{
	struct event_call c = { .clean = cudart_clean() };
	c.relaxed = capture_relaxed_if_watching(&c.mode);
	return c;
}

/* Returns err, the call's answer. */
static cudaError_t event_call_end(struct event_call c, cudaError_t err)
{
	capture_relaxed_end(c.relaxed, c.mode);
	return err == cudaErrorNotReady ? err : cudart_quiet(c.clean, err);
}

static bool event_create(void *ctx, void **event)
{
	struct event_call c = event_call_begin();
	return event_call_end(c, cudart_get()->EventCreateWithFlags((cudaEvent_t *)event, cudaEventDisableTiming)) ==
	       cudaSuccess;
}

static bool event_record(void *ctx, void *event, void *stream)
{
	struct event_call c = event_call_begin();
	return event_call_end(c, cudart_get()->EventRecord(event, stream)) == cudaSuccess;
}

/* An event whose query fails otherwise joined a capture after its stream
 * was drained (fence_record): its work is done. */
static bool event_done(void *ctx, void *event)
{
	struct event_call c = event_call_begin();
	return event_call_end(c, cudart_get()->EventQuery(event)) != cudaErrorNotReady;
}

static void event_wait(void *ctx, void *event)
{
	struct event_call c = event_call_begin();
	event_call_end(c, cudart_get()->EventSynchronize(event));
}

/* Whether a graph capture the callbacks saw begin may be under way: a
 * stream the fences know captures, or a per-thread default stream does.
 * A synchronize made then fails and breaks the capture, whichever thread
 * makes it, in whichever mode either thread is (on the H200:
 * bench/results/2026-11-29/s46/sync_in_capture.log). */
static bool capture_seen_under_way(void)
{
	if (capture_threads_any())
		return true;
	if (!capture_watching())
		return false;
	CUstream known[2 * MAX_STREAMS];
	pthread_mutex_lock(&streams_lock);
	int n = 0;
	for (int i = 0; i < nstreams; i++)
		known[n++] = streams[i].s;
	for (int i = 0; i < nunplaced; i++)
		known[n++] = unplaced[i];
	pthread_mutex_unlock(&streams_lock);
	for (int i = 0; i < n; i++)
		if (capture_stream_capturing(known[i]))
			return true;
	return false;
}

/* The program is about to queue its first work outside the legacy
 * stream. Until now a freed range went back to the arena at once, and
 * the replayer discarded ranges ordering only the legacy stream after
 * them: a new owner's work on the legacy stream ran behind both, work on
 * another stream would not (a batch copied in on a loader's stream into
 * a range that kernels still queued read, or that a discard still queued
 * empties). So once the work relying on that order is queued
 * (single_stream_lock), an event on the legacy stream marks where the
 * order ends, and each call on another stream is queued behind it
 * (order_end_waits) until it is seen completed: the GPU orders them, and
 * no thread waits. Only where no graph capture may be under way, which
 * work on the legacy stream could break: the library follows the
 * program's launches from its start (a capture begun unseen is
 * impossible), and none was ever seen (capture_watching). Otherwise
 * the calling thread waits on the host for the replayer's discards
 * (um_backend_order_end_host_wait), and the kernels still queued that
 * read a freed range stay unordered with its new owner's work, as they
 * were before (said at UMKIT_LOG=debug). */
static void one_stream_order_ends(const char *call, CUstream s)
{
	pthread_mutex_lock(&single_stream_lock);
	if (atomic_load(&order_settled)) {
		pthread_mutex_unlock(&single_stream_lock);
		return;
	}
	/* Why a program's allocations start waiting for fences (stats:
	 * host.allocator.fence_waits). */
	um_debug("work on a second stream (%p, %s): from here on a freed range is handed out again "
		 "only once its fence has completed", (void *)s, call);
	/* First, so that a free from here on records events on the legacy
	 * stream (fence_record), and the replayer issues no more discards:
	 * what the event then marks covers every free without them. */
	atomic_store(&multi_stream, true);
	bool seen = (atomic_load(&view) & 3) == LAUNCH_VIEW_SEEN, marked = false;
	if (seen && !capture_threads_any() && !capture_watching()) {
		/* On the arena's legacy stream, whichever context the calling
		 * thread has current: its call may be on one of the arena's
		 * streams with another GPU's current. */
		CUcontext served = atomic_load(&served_context), was;
		bool pushed = served && cuCtxPushCurrent(served) == CUDA_SUCCESS;
		CUresult r = cuEventCreate(&order_end, CU_EVENT_DISABLE_TIMING);
		if (r == CUDA_SUCCESS)
			r = cuEventRecord(order_end, CU_STREAM_LEGACY);
		if (pushed)
			cuCtxPopCurrent(&was);
		marked = r == CUDA_SUCCESS;
		if (marked)
			atomic_store(&order_end_pending, true);
		else
			um_debug("cannot mark where the one stream order ends (CUDA error %d): work on other "
				 "streams is not ordered behind it", (int)r);
	} else {
		um_debug("work on a second stream begins where a graph capture may be under way: it is not "
			 "ordered behind the legacy stream's");
	}
	/* Unmarked, what relied on the order that the calling thread can wait
	 * for without touching the program's streams is waited for here. */
	host_wait_fn wait = atomic_load(&order_end_host_wait);
	if (!marked && wait)
		wait();
	atomic_store_explicit(&order_settled, true, memory_order_release);
	pthread_mutex_unlock(&single_stream_lock);
}

/* Queues stream s behind the end of the one stream order, until that is
 * seen completed (or cannot be: an error ends the waits). Under the lock
 * a capture's beginning takes too (um_backend_capture_begins), so that no
 * capture begins between the check and the calls. Nothing more once a
 * capture was seen: no call is made that it could take for part of it. */
static void order_end_waits(CUstream s)
{
	pthread_mutex_lock(&single_stream_lock);
	if (atomic_load(&order_end_pending)) {
		if (capture_watching() || cuEventQuery(order_end) != CUDA_ERROR_NOT_READY)
			atomic_store(&order_end_pending, false);
		else
			cuStreamWaitEvent(s, order_end, 0);
	}
	pthread_mutex_unlock(&single_stream_lock);
}

/* Set while the arena's last resort synchronizes (fence_wait_all); like
 * the ring, only touched under the arena's lock. */
static bool last_resort;

/* A synchronize is not made while a capture may be under way (it would
 * break it), and one the driver refuses waits for nothing: either way the
 * fence stays pending, and the arena takes other memory. The first
 * refusal is reported, as the program may then see its capture fail.
 * Besides the captures seen, one is suspected where the callbacks cannot
 * see it begin (launches unseen): an allocation or free outside the
 * global capture mode may come from inside a capture
 * (capture_mode_global), as PyTorch's allocator's do, and is taken to,
 * except by the last resort. */
static bool sync_context(void *ctx)
{
	static bool reported;
	if (capture_seen_under_way() || (!last_resort && !capture_mode_global()))
		return false;
	/* In the arena's context, whatever the calling thread has current: a
	 * synchronize made with a green context current waits for that green
	 * context's work alone, not for the primary context's streams, and
	 * an allocating thread may have one current (only the primary
	 * context's synchronize waits for its green contexts too). */
	CUcontext served = atomic_load(&served_context), was;
	bool pushed = served && cuCtxPushCurrent(served) == CUDA_SUCCESS;
	CUresult r = cuCtxSynchronize();
	if (pushed)
		cuCtxPopCurrent(&was);
	if (r == CUDA_SUCCESS)
		return true;
	if (!reported) {
		const char *name = NULL;
		cuGetErrorName(r, &name);
		um_warn("the driver refused to synchronize for freed memory the GPU may still use (%s), "
			"perhaps inside a CUDA graph capture: that memory waits, and allocations take other memory",
			name ? name : "unknown error");
		reported = true;
	}
	return false;
}

/* Makes f wait for the next synchronize, saying why at UMKIT_LOG=debug. */
static uint64_t defer(struct fence *f, const char *why)
{
	uint64_t token = fence_ring_defer(&ring, f);
	um_debug("fence %llu waits for a synchronize: %s", (unsigned long long)token, why);
	return token;
}

static uint64_t fence_record(void *ctx)
{
	uint64_t covering;
	struct fence *f = fence_ring_open(&ring, &covering);
	if (!f)
		return covering;

	unsigned gen = atomic_load(&destroy_gen);
	if (atomic_load(&destroyed_pending)) {
		pthread_mutex_lock(&streams_lock);
		forget_destroyed();
		pthread_mutex_unlock(&streams_lock);
	}
	unsigned claim;
	bool whole = launch_view_fence_begin(&view, &claim);
	whole |= atomic_load(&streams_overflow);
	whole |= atomic_exchange(&destroyed_busy, false); /* a whole wait covers them */
	if (whole && !claim) {
		/* Not at the free: the freeing thread may be capturing a graph,
		 * which no query shows while launches go unseen, and synchronizing
		 * the context there broke the capture where cudaFree did not
		 * (tests/gpu/capture_free_probe.cu, idle replay). The fence waits
		 * for the next synchronize: the one an allocation makes when it
		 * needs the range, a full ring's, or another fence's. A fence that
		 * claimed the end of the unseen time still synchronizes here. */
		return defer(f, "launches unseen, or a stream beyond those followed or destroyed busy");
	}
	if (whole) {
		/* As cudaFree does: the fence is complete, or it waits for the
		 * next synchronize; the fences after it wait for it either way. */
		bool synced = fence_ring_sync(&ring);
		launch_view_fence_end(&view, claim, synced);
		if (!synced)
			return defer(f, "no synchronize at the free (a capture under way, or refused)");
	}
	if (whole || !atomic_load(&multi_stream)) {
		/* Nothing left to wait for, or one stream order (see multi_stream). */
		return fence_ring_close(&ring, f);
	}
	/* The streams are taken under the lock and their events recorded after
	 * it: no driver call is made holding streams_lock. A stream destroyed
	 * since gen was read (its callback runs before the handle goes) may
	 * have refused its event, or its handle may name another stream by
	 * now; an event that could not be recorded leaves its stream uncovered
	 * too. Either way the context is waited for, and the refusal is not
	 * left as the program's last error. */
	struct fenced fenced[MAX_STREAMS + 1]; /* + the legacy stream, or a per-thread capture */
	int nfenced = 0;
	bool watch = capture_watching();
	pthread_mutex_lock(&streams_lock);
	for (int i = 0; i < nstreams; i++) {
		/* Blocking streams too once captures were seen: one may capture.
		 * Never another context's (served_context). */
		bool ours = !context_elsewhere(streams[i].context);
		if (ours && ((streams[i].busy && streams[i].nonblocking) || (watch && !streams[i].nonblocking)))
			fenced[nfenced++] = (struct fenced){ .stream = streams[i].s,
							     .nonblocking = streams[i].nonblocking,
							     .busy = streams[i].busy,
							     .drained = streams[i].drained };
		streams[i].busy = 0;
	}
	pthread_mutex_unlock(&streams_lock);
	/* A stream whose capture begins between this query and its event's
	 * record gets the event inside the capture: its query then fails,
	 * which counts as done, and its earlier work was drained as the
	 * capture began. */
	for (int i = 0; i < nfenced && watch; i++)
		fenced[i].capturing = capture_stream_capturing(fenced[i].stream);
	if (capture_threads_any())
		fenced[nfenced++] = (struct fenced){ .stream = CU_STREAM_PER_THREAD, .capturing = true };
	const char *why;
	int nrecord = fence_streams_choose(fenced, nfenced, &why);
	if (nrecord < 0)
		return defer(f, why); /* fence_streams.h says more */
	fenced[nrecord++].stream = CU_STREAM_LEGACY;
	bool lost = false;
	for (int i = 0; i < nrecord; i++)
		lost |= !fence_ring_record(&ring, f, fenced[i].stream);
	if ((lost || atomic_load(&destroy_gen) != gen) && !fence_ring_sync(&ring))
		return defer(f, lost ? "an event not recorded" : "a stream destroyed meanwhile");
	return fence_ring_close(&ring, f);
}

static bool fence_done(void *ctx, uint64_t token)
{
	if (!atomic_load(&multi_stream) && !fence_ring_has_deferred(&ring))
		return true;
	return fence_ring_done(&ring, token);
}

static bool fence_wait(void *ctx, uint64_t token)
{
	return fence_ring_wait(&ring, token);
}

/* Only while the callbacks see every call that queues work (launch_view),
 * each of which then has its stream wait for the order (fence_order.h). */
static bool fence_order(void *ctx, uint64_t token)
{
	return (atomic_load(&view) & 3) == LAUNCH_VIEW_SEEN &&
	       fence_order_promise(&ring, token, atomic_load(&served_context));
}

/* The arena's last resort, before an allocation fails: a synchronize
 * even where only the calling thread's capture mode suggested a capture.
 * A program may leave the global mode for good and never capture; its
 * fences that wait for a synchronize would otherwise never complete, and
 * the arena would grow to its cap and fail. Not made while a capture the
 * callbacks saw begin is under way. A capture they did not see, on this
 * thread or another, makes the driver refuse it and breaks: the price of
 * not failing the allocation of a program that does not capture. */
static bool fence_wait_all(void *ctx)
{
	last_resort = true;
	bool synced = fence_ring_sync(&ring);
	last_resort = false;
	um_debug("freed memory waited for: a synchronize as the last resort of an allocation, %s",
		 synced ? "made" : "not made");
	return synced;
}

static int map(void *ctx, uint64_t bytes, uint64_t *base)
{
	const struct cudart *rt = cudart_get();
	void *p = NULL;
	bool clean = cudart_clean();
	cudaError_t err = managed_memory ? rt->MallocManaged(&p, bytes, cudaMemAttachGlobal)
					 : rt->Malloc(&p, bytes);
	if (err != cudaSuccess) {
		/* A thread's own error is its last again at once: the allocation
		 * refused after all leaves its refusal anyway (um_alloc.c). */
		if (clean)
			refused_clean = true;
		else
			cudart_quiet(false, err);
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

bool um_backend_may_synchronize(void)
{
	return !capture_seen_under_way() && capture_mode_global();
}

/* The runtime's free synchronizes the device: not where a graph capture
 * may be under way, which it would break (as sync_context). A failure is
 * not left as the program's last error. */
static bool unmap(void *ctx, uint64_t base, uint64_t bytes)
{
	if (!um_backend_may_synchronize())
		return false;
	const struct cudart *rt = cudart_get();
	bool clean = cudart_clean();
	return cudart_quiet(clean, rt->Free((void *)(uintptr_t)base)) == cudaSuccess;
}

void um_backend_init(struct arena_backend *b, bool managed)
{
	managed_memory = managed;
	fence_ring_init(&ring, &(struct fence_ring_ops){ NULL, event_create, event_record, event_done,
							  event_wait, sync_context, fence_order_await });
	memset(b, 0, sizeof *b);
	b->map = map;
	b->unmap = unmap;
	b->fence_record = fence_record;
	b->fence_done = fence_done;
	b->fence_wait = fence_wait;
	b->fence_wait_all = fence_wait_all;
	b->fence_order = fence_order;
}
