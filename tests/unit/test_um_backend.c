/*
 * Unit tests for the arena's CUDA backend (common/cuda/um_backend.c), linked
 * with fakes of the driver and runtime calls it makes: no GPU, no driver.
 *
 * The backend's state is the process's (one arena per program), so each
 * case runs in a child process of its own, which reports a failed check
 * on stderr and in its exit status.
 *
 * - A fence event whose query fails (it joined a graph capture, which the
 *   backend counts as done) leaves no error for the program to find as its
 *   own, nor does a failed wait for one.
 * - The end of the one stream order, where the replayer's discards relied
 *   on it: a replay that followed the program from its start queues the
 *   first call on another stream behind it on the GPU; one that woke from
 *   idle, or where the event cannot be recorded, waits on the host for the
 *   discards instead (session 59's review found the woken case unordered).
 *   A woken replay trusts the one stream order only once a synchronize has
 *   finished the work queued while launches went unseen.
 * - A woken replay forgets the streams known while launches went unseen,
 *   whose destroys it did not see: no fence names a destroyed stream's
 *   handle, nor takes a stream that has its handle for the dead one's kind.
 *   It keeps a stream whose capture it saw begin as it woke, so that the
 *   fence that synchronizes for the wake does not while that capture runs.
 * - A stream that begins a capture once the registry's 64 places are taken
 *   is still asked about: no fence synchronizes while it captures.
 * - A fence's event calls are made in the relaxed capture mode while
 *   another thread may capture in the global one, which they would break.
 * - A fence still pending is ordered on the GPU (fence_order.h): a stream
 *   of the backend's own waits for its events, and each stream's next call
 *   waits for the order's event, once per thread and order; not while
 *   launches go unseen, which waits on the host for the orders made, nor
 *   for a fence no event covers.
 */
#include "testutil.h"

#include "common/cuda/capture.h"
#include "common/cuda/cudart.h"
#include "common/cuda/um_backend.h"

#define SIDE ((CUstream)(uintptr_t)0x5000)
#define OTHER_SIDE ((CUstream)(uintptr_t)0x6000)

/* ---- the fake runtime: one thread, one last error ---- */

static cudaError_t last_error;
static cudaError_t event_answer = cudaSuccess; /* what event queries and waits return */

/* A failed call leaves its error as the thread's last, as the runtime's do
 * (not "not ready", which a query answers while the work runs). */
static cudaError_t answer(cudaError_t err)
{
	if (err != cudaSuccess && err != cudaErrorNotReady)
		last_error = err;
	return err;
}

/* The calling thread's capture mode is relaxed (capture_relaxed_begin);
 * and the event calls made while a capture is under way (another
 * thread's, in the global mode) without it: the driver may count each
 * among the calls it refuses then, which breaks that capture (an event
 * query does: PyTorch's NCCL watchdog broke captures so). */
static bool relaxed;
static int unsafe_calls;
static void note_event_call(void);

static cudaError_t fake_event_create(cudaEvent_t *event, unsigned int flags)
{
	static uintptr_t next = 0x100;
	*event = (cudaEvent_t)next++;
	note_event_call();
	return cudaSuccess;
}

/* Fences' events recorded, and captures asked about, on SIDE. */
static int side_events, side_queries;

static cudaError_t rt_record_answer = cudaSuccess; /* what the runtime's event records return */

static cudaError_t fake_event_record(cudaEvent_t event, cudaStream_t stream)
{
	side_events += stream == (cudaStream_t)SIDE;
	note_event_call();
	return answer(rt_record_answer);
}

static cudaError_t fake_event_query(cudaEvent_t event)
{
	note_event_call();
	return answer(event_answer);
}

static cudaError_t fake_event_synchronize(cudaEvent_t event)
{
	note_event_call();
	return answer(event_answer == cudaErrorNotReady ? cudaSuccess : event_answer);
}

/* Every segment refused: the device is full. */
static cudaError_t fake_malloc_managed(void **p, size_t bytes, unsigned int flags)
{
	return answer(cudaErrorMemoryAllocation);
}

static cudaError_t fake_get_last_error(void)
{
	cudaError_t err = last_error;
	last_error = cudaSuccess;
	return err;
}

static const struct cudart fake_runtime = {
	.EventCreateWithFlags = fake_event_create,
	.EventRecord = fake_event_record,
	.EventQuery = fake_event_query,
	.EventSynchronize = fake_event_synchronize,
	.GetLastError = fake_get_last_error,
	.MallocManaged = fake_malloc_managed,
};

const struct cudart *cudart_get(void)
{
	return &fake_runtime;
}

/* As common/cuda/cudart.c's: the error found before a tool's call is the
 * thread's again after it (the fake can make any). */
static cudaError_t found;

bool cudart_clean(void)
{
	found = last_error;
	return found == cudaSuccess;
}

cudaError_t cudart_quiet(bool clean, cudaError_t err)
{
	if (err != cudaSuccess)
		last_error = clean ? cudaSuccess : found;
	return err;
}

/* ---- the fake capture state (common/cuda/capture.c) ---- */

static bool captures_seen;

bool capture_mode_global(void)
{
	return true;
}

bool capture_watching(void)
{
	return captures_seen;
}

static CUstream capturing; /* the one stream that captures, if any */

static void note_event_call(void)
{
	unsafe_calls += capturing && !relaxed;
}

bool capture_relaxed_begin(CUstreamCaptureMode *saved)
{
	*saved = relaxed ? CU_STREAM_CAPTURE_MODE_RELAXED : CU_STREAM_CAPTURE_MODE_GLOBAL;
	relaxed = true;
	return true;
}

void capture_relaxed_end(bool begun, CUstreamCaptureMode saved)
{
	if (begun)
		relaxed = saved == CU_STREAM_CAPTURE_MODE_RELAXED;
}

bool capture_stream_capturing(CUstream stream)
{
	side_queries += stream == SIDE;
	return stream == capturing;
}

/* ---- the fake driver: records what the cases check ---- */

static CUstream waited_stream;                /* the last cuStreamWaitEvent's */
static CUresult record_answer = CUDA_SUCCESS; /* cuEventRecord's */
static int host_waits;                        /* calls of count_host_wait */

/* The calling thread's context stack: current_ctx on top of pushed. */
static CUcontext current_ctx, pushed[8];
static int npushed;

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
	pushed[npushed++] = current_ctx;
	current_ctx = ctx;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *ctx)
{
	*ctx = current_ctx;
	current_ctx = npushed ? pushed[--npushed] : NULL;
	return CUDA_SUCCESS;
}

static int syncs;            /* cuCtxSynchronize calls */
static CUcontext synced_ctx; /* the context current at the last one */

CUresult CUDAAPI cuCtxSynchronize(void)
{
	syncs++;
	synced_ctx = current_ctx;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *event, unsigned int flags)
{
	*event = (CUevent)(uintptr_t)0x9000;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream)
{
	return record_answer;
}

static CUresult query_answer = CUDA_ERROR_NOT_READY; /* cuEventQuery's */

CUresult CUDAAPI cuEventQuery(CUevent event)
{
	return query_answer;
}

CUresult CUDAAPI cuGetErrorName(CUresult r, const char **name)
{
	*name = "CUDA_ERROR_FAKE";
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCtx_v2(CUstream stream, CUcontext *ctx, CUgreenCtx *green)
{
	*ctx = (CUcontext)(uintptr_t)0x77;
	*green = NULL;
	return CUDA_SUCCESS;
}

static unsigned stream_flags = CU_STREAM_NON_BLOCKING; /* what every stream is */

CUresult CUDAAPI cuStreamGetFlags(CUstream stream, unsigned int *flags)
{
	*flags = stream_flags;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream)
{
	return CUDA_SUCCESS;
}

static int stream_waits;                 /* cuStreamWaitEvent calls */
static int created_streams, event_syncs; /* cuStreamCreate, cuEventSynchronize calls */
#define JOIN ((CUstream)(uintptr_t)0x7000) /* the stream cuStreamCreate makes */

CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
	waited_stream = stream;
	stream_waits++;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int flags)
{
	*stream = JOIN;
	created_streams++;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream stream)
{
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent event)
{
	event_syncs++;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx)
{
	*ctx = current_ctx;
	return CUDA_SUCCESS;
}

static void count_host_wait(void)
{
	host_waits++;
}

/* ---- the cases, each in a child process ---- */

static int failures;

#define EXPECT(cond, what)                                                  \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, what); \
			failures++;                                         \
		}                                                           \
	} while (0)

/* Fences on a second stream, whose events the runtime answers with
 * cudaErrorCapturedEvent: done, and the thread's last error clean. */
static bool failed_event_answers(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	um_backend_launches_seen(true);
	um_backend_note_stream(SIDE, "test"); /* a second stream: fences record events there */
	uint64_t first = b.fence_record(NULL), second = b.fence_record(NULL);
	EXPECT(cudart_clean(), "recording a fence left an error");
	event_answer = cudaErrorCapturedEvent;
	EXPECT(b.fence_done(NULL, first), "a fence whose event joined a capture counts as done");
	EXPECT(cudart_clean(), "a failed event query was left as the program's last error");
	b.fence_wait(NULL, second);
	EXPECT(cudart_clean(), "a failed event wait was left as the program's last error");
	return failures == 0;
}

static void a_failed_event_query_is_not_the_programs_error(void **state)
{
	test_in_child(failed_event_answers);
}

/* A fence whose event the runtime refuses to record, on a thread with
 * no error and on one holding the program's: neither is changed. */
static bool failed_records(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	um_backend_launches_seen(true);
	um_backend_note_stream(SIDE, "test");
	rt_record_answer = cudaErrorInvalidResourceHandle;
	b.fence_record(NULL);
	EXPECT(cudart_clean(), "a failed event record was left as the program's last error");
	last_error = cudaErrorInvalidValue; /* the program's, not yet read */
	b.fence_record(NULL);
	EXPECT(last_error == cudaErrorInvalidValue, "a failed event record replaced the program's last error");
	return failures == 0;
}

static void a_failed_event_record_leaves_the_programs_error(void **state)
{
	test_in_child(failed_records);
}

/* A segment the device refused, for an allocation the arena then served
 * from memory it had: the refusal is off the thread that had no error,
 * and a thread's own error, not yet read, is its last again. */
static bool refused_segments(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	uint64_t base;
	EXPECT(b.map(NULL, 2u << 20, &base) != 0, "the fake device gave a segment");
	um_backend_forget_refusal(true);
	EXPECT(cudart_clean(), "a refused segment was left as the last error of an allocation served");
	last_error = cudaErrorInvalidValue; /* the program's, not yet read */
	EXPECT(b.map(NULL, 2u << 20, &base) != 0, "the fake device gave a segment");
	um_backend_forget_refusal(true);
	EXPECT(last_error == cudaErrorInvalidValue, "a refused segment replaced the program's last error");
	return failures == 0;
}

static void a_refused_segment_leaves_the_programs_error(void **state)
{
	test_in_child(refused_segments);
}

/* The replayer issues a discard trusting the one stream order, then the
 * program makes its first call on another stream. */
static void discard_then_side_stream(void)
{
	um_backend_order_end_host_wait(count_host_wait);
	bool single = um_backend_single_stream_hold();
	um_backend_single_stream_release();
	EXPECT(single, "the replayer was told the program uses more than one stream");
	um_backend_stream_begin(SIDE, "test");
	um_backend_stream_begin(OTHER_SIDE, "test");
}

static bool followed_from_the_start(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	um_backend_launches_seen(true);
	discard_then_side_stream();
	EXPECT(waited_stream == OTHER_SIDE, "a call on another stream was not queued behind the order's end");
	EXPECT(host_waits == 0, "the host waited where the GPU orders the calls");
	return failures == 0;
}

static void a_replay_from_the_start_orders_on_the_gpu(void **state)
{
	test_in_child(followed_from_the_start);
}

/* Whether the replayer may issue a discard now, trusting one stream. */
static bool discards_trusted(void)
{
	bool single = um_backend_single_stream_hold();
	um_backend_single_stream_release();
	return single;
}

static bool woken_from_idle(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	EXPECT(!discards_trusted(), "one stream trusted while launches went unseen");
	/* As rp_callbacks.c's follow_launches: a capture may have begun
	 * unseen, and launches are seen from now on. A kernel queued unseen on
	 * another stream may still read a range freed meanwhile, until the
	 * next free's fence synchronizes the context (session 61's review). */
	captures_seen = true;
	um_backend_launches_seen(false);
	EXPECT(!discards_trusted(), "one stream trusted before the work queued unseen had finished");
	b.fence_record(NULL);
	discard_then_side_stream();
	EXPECT(host_waits == 1, "the first call on another stream did not wait for the discards once");
	EXPECT(waited_stream == NULL, "a stream was queued behind the legacy one where a capture may be under way");
	return failures == 0;
}

static void a_woken_replay_waits_on_the_host(void **state)
{
	test_in_child(woken_from_idle);
}

static bool order_end_unrecorded(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	um_backend_launches_seen(true);
	record_answer = CUDA_ERROR_INVALID_VALUE;
	discard_then_side_stream();
	EXPECT(host_waits == 1, "with the order's end unmarked, the discards were not waited for");
	return failures == 0;
}

static void an_unmarked_order_end_waits_on_the_host(void **state)
{
	test_in_child(order_end_unrecorded);
}

/* While idle, the program's cudaMallocAsync into SIDE makes it known;
 * then the program destroys it, which the idle replay, subscribed to no
 * callback, does not see; then the replay wakes (rp_callbacks.c's
 * follow_launches), and the first fence synchronizes. */
static void side_destroyed_unseen_then_woken(struct arena_backend *b)
{
	um_backend_init(b, true);
	um_backend_note_stream(SIDE, "test");
	side_events = side_queries = 0;
	captures_seen = true;
	um_backend_launches_seen(false);
	b->fence_record(NULL);
}

static bool destroyed_while_idle(void)
{
	struct arena_backend b;
	side_destroyed_unseen_then_woken(&b);
	b.fence_record(NULL);
	EXPECT(side_events == 0, "a fence recorded an event on a stream destroyed while launches went unseen");
	EXPECT(side_queries == 0, "a capture was asked of a stream destroyed while launches went unseen");
	return failures == 0;
}

static void a_stream_destroyed_while_idle_is_forgotten(void **state)
{
	test_in_child(destroyed_while_idle);
}

static bool handle_reused_after_idle(void)
{
	struct arena_backend b;
	stream_flags = CU_STREAM_DEFAULT; /* SIDE was a blocking stream */
	side_destroyed_unseen_then_woken(&b);
	/* A non-blocking stream has SIDE's handle, and a kernel on it. */
	stream_flags = CU_STREAM_NON_BLOCKING;
	um_backend_note_stream(SIDE, "test");
	b.fence_record(NULL);
	EXPECT(side_events == 1, "a non-blocking stream with a handle seen while idle got no fence's event");
	return failures == 0;
}

static void a_handle_seen_while_idle_is_asked_again(void **state)
{
	test_in_child(handle_reused_after_idle);
}

/* A capture begins on OTHER_SIDE after the wake's subscription (a
 * callback says so) and before um_backend_launches_seen: the wake's fence
 * cannot synchronize, which would break the capture. The work queued while
 * launches went unseen may still run, so the one stream order is not
 * trusted yet, and a fence after the capture claims the wake's synchronize
 * again. */
static bool wake_synchronize_refused(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	captures_seen = true;
	um_backend_capture_begins(OTHER_SIDE);
	capturing = OTHER_SIDE;
	um_backend_launches_seen(false);
	b.fence_record(NULL);
	EXPECT(syncs == 0, "the wake's fence synchronized during a capture seen to begin");
	EXPECT(!discards_trusted(), "one stream trusted though the work queued unseen was not waited for");
	capturing = NULL; /* the capture ended */
	b.fence_record(NULL);
	EXPECT(syncs == 1, "no later fence synchronized for the work queued unseen");
	EXPECT(discards_trusted(), "one stream not trusted after the synchronize");
	return failures == 0;
}

static void a_refused_wake_synchronize_is_claimed_again(void **state)
{
	test_in_child(wake_synchronize_refused);
}

/* A thread with a green context of the arena's device current allocates
 * (its allocations are the arena's since session 62) a range whose fence
 * waits for a synchronize (launches unseen: an idle replay). A synchronize
 * made with the green context current waits for that green context's work
 * alone (cuCtxSynchronize: only the primary context's also waits for its
 * green contexts), not for the kernels the primary context's streams still
 * run on the range. */
#define PRIMARY ((CUcontext)(uintptr_t)0x77)
#define GREEN ((CUcontext)(uintptr_t)0x88)

static bool green_thread_waits(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	um_backend_serve_context(PRIMARY);
	current_ctx = PRIMARY; /* the free, made in the arena's context */
	uint64_t token = b.fence_record(NULL);
	EXPECT(!b.fence_done(NULL, token), "a fence made while launches go unseen was done at once");
	current_ctx = GREEN; /* the allocation that needs the range */
	b.fence_wait(NULL, token);
	EXPECT(syncs == 1, "the fence was not waited for by a synchronize");
	EXPECT(synced_ctx == PRIMARY, "the fence's synchronize was made in the green context, which does not "
				      "wait for the primary context's streams");
	return failures == 0;
}

static void a_green_contexts_wait_synchronizes_the_arenas_context(void **state)
{
	test_in_child(green_thread_waits);
}

/* The program has had work on 64 streams, the registry's every place,
 * when a 65th begins a graph capture: a fence then waits for the whole
 * context, but must not synchronize while that capture runs, which would
 * break it; nor may a free of real memory (um_backend_may_synchronize).
 * Once the capture ends, a synchronize is allowed again. */
#define CAPTURED ((CUstream)(uintptr_t)0x7000)

static bool capture_beyond_the_registry(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	um_backend_launches_seen(true);
	for (uintptr_t i = 0; i < 64; i++)
		um_backend_note_stream((CUstream)(0x10000 + 16 * i), "test");
	captures_seen = true; /* capture_note watches before the beginning */
	um_backend_capture_begins(CAPTURED);
	capturing = CAPTURED;
	EXPECT(!um_backend_may_synchronize(), "a free may synchronize while a 65th stream captures");
	uint64_t token = b.fence_record(NULL);
	b.fence_wait(NULL, token);
	EXPECT(syncs == 0, "a fence synchronized while a 65th stream captured");
	capturing = NULL;
	um_backend_capture_ends(CAPTURED);
	EXPECT(um_backend_may_synchronize(), "no synchronize allowed after the capture ended");
	b.fence_wait(NULL, token);
	EXPECT(syncs == 1, "the fence was not waited for once the capture ended");
	return failures == 0;
}

static void a_capture_beyond_64_streams_is_followed(void **state)
{
	test_in_child(capture_beyond_the_registry);
}

/* Another thread captures on SIDE, in the global mode, while this one,
 * in it too, frees and allocates the arena's memory on OTHER_SIDE: the
 * fences' events are created, recorded, queried and waited for in the
 * relaxed mode, which the driver does not refuse during that capture
 * (as um_alloc.c's synchronize_relaxed). */
static bool fence_calls_beside_a_capture(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	um_backend_launches_seen(true);
	um_backend_note_stream(OTHER_SIDE, "test");
	uint64_t before = b.fence_record(NULL); /* its events made before the capture */
	captures_seen = true;
	um_backend_capture_begins(SIDE);
	capturing = SIDE;
	um_backend_note_stream(OTHER_SIDE, "test");
	uint64_t during = b.fence_record(NULL);
	event_answer = cudaErrorNotReady;
	EXPECT(!b.fence_done(NULL, before), "a fence whose events still run was done");
	b.fence_wait(NULL, during);
	EXPECT(unsafe_calls == 0, "a fence's event call was made in the global capture mode during a capture");
	EXPECT(!relaxed, "the thread's capture mode was not given back");
	return failures == 0;
}

static void fence_events_beside_a_capture_are_relaxed(void **state)
{
	test_in_child(fence_calls_beside_a_capture);
}

/* Two fences pending on SIDE and the legacy stream: the second ordered,
 * then the first (covered already); calls on streams wait once each. */
static bool ordered_fences(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	um_backend_launches_seen(true);
	um_backend_note_stream(SIDE, "test");
	query_answer = CUDA_SUCCESS; /* the end of the one stream order has passed */
	uint64_t first = b.fence_record(NULL);
	um_backend_note_stream(SIDE, "test");
	uint64_t second = b.fence_record(NULL);
	event_answer = cudaErrorNotReady;
	EXPECT(!b.fence_done(NULL, second), "the fake GPU finished the fences");
	stream_waits = 0;
	EXPECT(b.fence_order(NULL, second), "a pending fence was not ordered");
	EXPECT(created_streams == 1, "no stream of the backend's own");
	EXPECT(stream_waits == 4 && waited_stream == JOIN, "the own stream did not wait for both fences' two events");
	EXPECT(b.fence_order(NULL, first) && stream_waits == 4, "an earlier fence was ordered again");
	um_backend_stream_begin(OTHER_SIDE, "test");
	EXPECT(stream_waits == 5 && waited_stream == OTHER_SIDE, "a stream's call did not wait for the order");
	um_backend_stream_begin(OTHER_SIDE, "test");
	EXPECT(stream_waits == 5, "a stream waited twice for one order");
	um_backend_default_stream_begin(CU_STREAM_LEGACY);
	EXPECT(stream_waits == 6 && waited_stream == CU_STREAM_LEGACY, "a synchronous call's stream did not wait");
	uint64_t third = b.fence_record(NULL); /* the legacy stream's event alone */
	EXPECT(b.fence_order(NULL, third), "a later fence was not ordered");
	um_backend_stream_begin(OTHER_SIDE, "test");
	EXPECT(waited_stream == OTHER_SIDE && stream_waits == 8, "a stream did not wait for the later order");
	EXPECT(event_syncs == 0, "a host wait");
	/* Unseen from here: the host waits for the orders, and makes none. */
	um_backend_launches_unseen();
	EXPECT(event_syncs == 1, "the host did not wait for the orders made");
	uint64_t fourth = b.fence_record(NULL);
	EXPECT(!b.fence_order(NULL, fourth), "a fence ordered with launches unseen");
	return failures == 0;
}

static void a_pending_fence_is_ordered_on_the_gpu(void **state)
{
	test_in_child(ordered_fences);
}

/* A woken replay's fences wait for a synchronize (no event covers the
 * work queued unseen): none is ordered until one was made. */
static bool woken_fence_unordered(void)
{
	struct arena_backend b;
	um_backend_init(&b, true);
	um_backend_launches_seen(false);
	um_backend_note_stream(SIDE, "test");
	event_answer = cudaErrorNotReady;
	captures_seen = true; /* SIDE captures: the fence cannot synchronize */
	capturing = SIDE;
	uint64_t t = b.fence_record(NULL);
	EXPECT(!b.fence_done(NULL, t), "the fence completed");
	EXPECT(!b.fence_order(NULL, t), "a fence no event covers was ordered");
	EXPECT(created_streams == 0, "a stream made for nothing");
	return failures == 0;
}

static void a_fence_no_event_covers_is_not_ordered(void **state)
{
	test_in_child(woken_fence_unordered);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_failed_event_query_is_not_the_programs_error),
		cmocka_unit_test(a_failed_event_record_leaves_the_programs_error),
		cmocka_unit_test(a_refused_segment_leaves_the_programs_error),
		cmocka_unit_test(a_replay_from_the_start_orders_on_the_gpu),
		cmocka_unit_test(a_pending_fence_is_ordered_on_the_gpu),
		cmocka_unit_test(a_fence_no_event_covers_is_not_ordered),
		cmocka_unit_test(a_woken_replay_waits_on_the_host),
		cmocka_unit_test(an_unmarked_order_end_waits_on_the_host),
		cmocka_unit_test(a_stream_destroyed_while_idle_is_forgotten),
		cmocka_unit_test(a_handle_seen_while_idle_is_asked_again),
		cmocka_unit_test(a_refused_wake_synchronize_is_claimed_again),
		cmocka_unit_test(a_green_contexts_wait_synchronizes_the_arenas_context),
		cmocka_unit_test(a_capture_beyond_64_streams_is_followed),
		cmocka_unit_test(fence_events_beside_a_capture_are_relaxed),
	};
	return cmocka_run_group_tests_name("um_backend", tests, NULL, NULL);
}
