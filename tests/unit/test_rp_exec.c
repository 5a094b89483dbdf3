/*
 * Unit tests for the replayer's executor on CUDA (replay/cuda/rp_exec.c),
 * linked with fakes of the driver calls it makes and of the arena and
 * fence state it reads: no GPU, no driver.
 *
 * Discards are issued on the program's thread, from its launch callbacks
 * too, so on the stack the program gave that thread, which may be small
 * (pthread_attr_setstacksize). A full batch of discards, and a full batch
 * of pending ones retried once their marker has completed, must fit in
 * 32 KiB with room to spare: the executor's arrays of ranges took 64 KiB
 * of that stack before they moved off it.
 *
 * The executor's state is the process's, so each case runs in a child
 * process, where a stack overflow kills only the child.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "arena.h"
#include "clock.h"
#include "common/cuda/capture.h"
#include "common/cuda/um_alloc.h"
#include "common/cuda/um_backend.h"
#include "failing_alloc.h"
#include "fake_arena.h"
#include "replay/calls.h"
#include "replay/cuda/rp.h"

#define MB (1ULL << 20)
#define SEGMENT_BASE ((uint64_t)1 << 40)
#define SMALL_STACK (32 * 1024)
/* Far larger than any frame: an overflow faults in the guard instead of
 * writing past it into whatever lies below. */
#define GUARD (1024 * 1024)

/* ---- the fake driver: a context, a device, and discards counted ---- */

static bool marks_passed;    /* what a marker's event query answers */
static bool no_streams;      /* cuStreamCreate fails */
static int records_refused;  /* the next so many cuEventRecord calls fail */
static size_t discard_calls, discarded_ranges, synchronizes;
static struct engine_range last_discards[4]; /* the first of the last call's ranges */

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx)
{
	*ctx = (CUcontext)(uintptr_t)0xc000;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	*device = 0;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *ctx)
{
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
	synchronizes++;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *event, unsigned int flags)
{
	static uintptr_t next = 0x100;
	*event = (CUevent)next++;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent event)
{
	return CUDA_SUCCESS;
}

/* The stream each event was last recorded on (events are numbered from
 * 0x100 by cuEventCreate). */
#define EVENTS 8192
static CUstream recorded_on[EVENTS];

static CUstream *slot_of(CUevent event)
{
	uintptr_t i = (uintptr_t)event - 0x100;
	return i < EVENTS ? &recorded_on[i] : NULL;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream)
{
	if (records_refused > 0) {
		records_refused--;
		return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	}
	if (slot_of(event))
		*slot_of(event) = stream;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventQuery(CUevent event)
{
	return marks_passed ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **str)
{
	*str = "CUDA_ERROR_FAKE";
	return CUDA_SUCCESS;
}

/* The advice in force on the one range the cases advise: whether the host
 * is its preferred location, and whether the GPU maps it; the GPU's
 * mapping refused when refuse_accessed_by. */
static bool prefers_host, accessed_by, refuse_accessed_by;

CUresult CUDAAPI cuMemAdvise(CUdeviceptr ptr, size_t count, CUmem_advise advice, CUmemLocation location)
{
	switch (advice) {
	case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
		prefers_host = location.type == CU_MEM_LOCATION_TYPE_HOST;
		break;
	case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
		prefers_host = false;
		break;
	case CU_MEM_ADVISE_SET_ACCESSED_BY:
		if (refuse_accessed_by)
			return CUDA_ERROR_INVALID_DEVICE;
		accessed_by = true;
		break;
	case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
		accessed_by = false;
		break;
	default:
		break;
	}
	return CUDA_SUCCESS;
}

/* While held, the worker's migration calls wait (a copy the driver makes
 * in the call, say). */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static bool migrations_held;
/* Eviction calls made (returned), and how many had been when the last
 * discard-and-prefetch call was made: the one stream's order. */
static size_t evictions_called, evictions_before_discard_prefetch;
/* The stream of the migration calls, and of the last
 * discard-and-prefetch call. */
static CUstream migration_stream, discard_prefetch_stream;
static CUstream discard_stream; /* of the last discard call */

CUresult CUDAAPI cuMemPrefetchBatchAsync(CUdeviceptr *ptrs, size_t *sizes, size_t count, CUmemLocation *locs,
					 size_t *loc_idxs, size_t n_locs, unsigned long long flags, CUstream stream)
{
	pthread_mutex_lock(&hold_lock);
	while (migrations_held)
		pthread_cond_wait(&hold_cond, &hold_lock);
	evictions_called += locs[0].type == CU_MEM_LOCATION_TYPE_HOST;
	migration_stream = stream;
	pthread_mutex_unlock(&hold_lock);
	return CUDA_SUCCESS;
}

static void release_migrations(void)
{
	pthread_mutex_lock(&hold_lock);
	migrations_held = false;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
}

CUresult CUDAAPI cuMemDiscardBatchAsync(CUdeviceptr *ptrs, size_t *sizes, size_t count, unsigned long long flags,
					CUstream stream)
{
	discard_calls++;
	discarded_ranges += count;
	discard_stream = stream;
	for (size_t i = 0; i < count && i < 4; i++)
		last_discards[i] = (struct engine_range){ ptrs[i], sizes[i] };
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr *ptrs, size_t *sizes, size_t count,
						   CUmemLocation *locs, size_t *loc_idxs, size_t n_locs,
						   unsigned long long flags, CUstream stream)
{
	pthread_mutex_lock(&hold_lock);
	evictions_before_discard_prefetch = evictions_called;
	discard_prefetch_stream = stream;
	pthread_mutex_unlock(&hold_lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int flags)
{
	if (no_streams)
		return CUDA_ERROR_OUT_OF_MEMORY;
	static uintptr_t next = 0x5000;
	*stream = (CUstream)next++;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream)
{
	return CUDA_SUCCESS;
}

/* The stream whose event the legacy stream last waited for; whether a
 * stream waited for the lane's (the stream the last discard-and-prefetch
 * went on); the streams that waited, and on which stream their events were
 * recorded, the first WAITS of them. */
static CUstream legacy_waited_for;
static bool waited_for_the_lane;
#define WAITS 64
static struct {
	CUstream stream, on;
} waits[WAITS];
static size_t n_waits;

CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
	CUstream on = slot_of(event) ? *slot_of(event) : NULL;
	if (stream == CU_STREAM_LEGACY)
		legacy_waited_for = on;
	else if (on && on == discard_prefetch_stream)
		waited_for_the_lane = true;
	if (n_waits < WAITS) {
		waits[n_waits].stream = stream;
		waits[n_waits++].on = on;
	}
	return CUDA_SUCCESS;
}

/* Whether `stream` waited for an event recorded on `on`. */
static bool stream_waited_on(CUstream stream, CUstream on)
{
	for (size_t i = 0; i < n_waits; i++)
		if (waits[i].stream == stream && waits[i].on == on)
			return true;
	return false;
}

/* ---- the fake injection around the executor: one stream order, the
 * clock, captures, and an arena over addresses nothing maps ---- */

bool um_backend_multi_stream(void)
{
	return false;
}

bool um_backend_single_stream_hold(void)
{
	return true;
}

void um_backend_single_stream_release(void)
{
}

void um_backend_order_end_host_wait(void (*wait)(void))
{
}

bool capture_relaxed_begin(CUstreamCaptureMode *saved)
{
	return false;
}

void capture_relaxed_end(bool begun, CUstreamCaptureMode saved)
{
}

uint64_t rp_now(void)
{
	return um_now_ns();
}

static arena *the_arena;

arena *um_alloc_arena(void)
{
	return the_arena;
}

/* One range per 2 MB block of freed arena memory (mapped, and nothing
 * lives there): the most one driver call takes. */
static struct engine_range freed[CALLS_MAX_RANGES];

static bool free_arena_memory(void)
{
	static uint64_t next = SEGMENT_BASE;
	struct arena_alloc a;
	the_arena = fake_arena_create(&next);
	if (!the_arena || arena_alloc(the_arena, CALLS_MAX_RANGES * 2 * MB, &a) != ARENA_OK)
		return false;
	if (arena_free(the_arena, a.address, NULL) != ARENA_OK)
		return false;
	for (size_t i = 0; i < CALLS_MAX_RANGES; i++)
		freed[i] = (struct engine_range){ a.address + i * 2 * MB, 2 * MB };
	return true;
}

/* ---- running the executor's calls on a small stack, in a child ---- */

/* Runs fn on a thread with a SMALL_STACK-byte stack; false if none could
 * be made. */
static bool on_small_stack(void *(*fn)(void *))
{
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, SMALL_STACK);
	pthread_attr_setguardsize(&attr, GUARD);
	int rc = pthread_create(&t, &attr, fn, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return false;
	pthread_join(t, NULL);
	return true;
}

static bool said(bool ok, const char *what)
{
	if (!ok)
		fprintf(stderr, "%s\n", what);
	return ok;
}

static void *discard_every_freed_block(void *unused)
{
	const struct engine_executor *x = rp_exec_get();
	x->issue(x->ctx, ENGINE_OP_DISCARD, freed, CALLS_MAX_RANGES, 0, 1, UINT64_MAX);
	return NULL;
}

static bool full_discard_batch(void)
{
	return said(free_arena_memory(), "no arena") &&
	       said(on_small_stack(discard_every_freed_block), "no thread with a small stack") &&
	       said(discard_calls == 1 && discarded_ranges == CALLS_MAX_RANGES,
		    "the batch was not discarded in one call");
}

static void a_full_discard_batch_fits_a_small_stack(void **state)
{
	test_in_child(full_discard_batch);
}

static void *record_a_marker(void *unused)
{
	const struct engine_executor *x = rp_exec_get();
	x->mark(x->ctx);
	return NULL;
}

/* The discards wait for a marker still in the GPU's queue; a later
 * marker, recorded on the small stack once it has passed, issues them. */
static bool pending_discards_retried(void)
{
	const struct engine_executor *x = rp_exec_get();
	if (!said(free_arena_memory(), "no arena"))
		return false;
	uint64_t free_mark = x->mark(x->ctx);
	x->issue(x->ctx, ENGINE_OP_DISCARD, freed, CALLS_MAX_RANGES, free_mark, 1, UINT64_MAX);
	if (!said(free_mark && discarded_ranges == 0, "discarded before the free's marker passed"))
		return false;
	marks_passed = true;
	return said(on_small_stack(record_a_marker), "no thread with a small stack") &&
	       said(discarded_ranges == CALLS_MAX_RANGES, "the pending discards were not issued");
}

static void pending_discards_retried_on_a_small_stack(void **state)
{
	test_in_child(pending_discards_retried);
}

/* Four blocks freed together, discarded as one range, of which the arena
 * has handed out the third again: the two before it and the one after are
 * discarded, the reused one dropped (the whole range was, until session
 * 77). */
static bool reused_block_left_out(void)
{
	const struct engine_executor *x = rp_exec_get();
	struct arena_alloc first_two, third;
	if (!said(free_arena_memory(), "no arena") ||
	    !said(arena_alloc(the_arena, 2 * 2 * MB, &first_two) == ARENA_OK &&
			  arena_alloc(the_arena, 2 * MB, &third) == ARENA_OK &&
			  arena_free(the_arena, first_two.address, NULL) == ARENA_OK &&
			  third.address == freed[2].address,
		  "the arena did not hand out the third block"))
		return false;
	const struct engine_range whole = { freed[0].address, 4 * 2 * MB };
	struct rp_exec_stats st;
	x->issue(x->ctx, ENGINE_OP_DISCARD, &whole, 1, 0, 1, UINT64_MAX);
	rp_exec_get_stats(&st);
	return said(discard_calls == 1 && discarded_ranges == 2, "not two ranges discarded in one call") &&
	       said(last_discards[0].address == freed[0].address && last_discards[0].bytes == 2 * 2 * MB,
		    "not the two blocks before the reused one") &&
	       said(last_discards[1].address == freed[3].address && last_discards[1].bytes == 2 * MB,
		    "not the block after the reused one") &&
	       said(st.dropped_discards == 1, "the reused block not counted dropped");
}

static void a_reused_block_is_left_out_of_its_discard(void **state)
{
	test_in_child(reused_block_left_out);
}

/* Four blocks freed together, of which the arena has handed out the first
 * and the last again: the two between are discarded, and each reused
 * block is a run dropped. Taking the range's first block for idle (it was
 * freed with the rest) would discard a live allocation's. */
static bool reused_ends_left_out(void)
{
	const struct engine_executor *x = rp_exec_get();
	struct arena_alloc first, middle, last;
	if (!said(free_arena_memory(), "no arena") ||
	    !said(arena_alloc(the_arena, 2 * MB, &first) == ARENA_OK &&
			  arena_alloc(the_arena, 2 * 2 * MB, &middle) == ARENA_OK &&
			  arena_alloc(the_arena, 2 * MB, &last) == ARENA_OK &&
			  arena_free(the_arena, middle.address, NULL) == ARENA_OK &&
			  first.address == freed[0].address && last.address == freed[3].address,
		  "the arena did not hand out the first and the last block"))
		return false;
	const struct engine_range whole = { freed[0].address, 4 * 2 * MB };
	struct rp_exec_stats st;
	x->issue(x->ctx, ENGINE_OP_DISCARD, &whole, 1, 0, 1, UINT64_MAX);
	rp_exec_get_stats(&st);
	return said(discard_calls == 1 && discarded_ranges == 1, "not one range discarded in one call") &&
	       said(last_discards[0].address == freed[1].address && last_discards[0].bytes == 2 * 2 * MB,
		    "not the two blocks between the reused ones") &&
	       said(st.dropped_discards == 2, "not each reused block counted dropped");
}

static void reused_ends_are_left_out_of_their_discard(void **state)
{
	test_in_child(reused_ends_left_out);
}

/* The table of discards waiting for their markers is full, and a new
 * owner takes the middle block of a pending range of three: the block
 * before it stays pending, the block after it finds no slot and is
 * forgotten too. Both are runs not discarded, and each counts (the block
 * after went uncounted). */
static bool full_pending_table_counts_both_runs(void)
{
	enum { PENDING_MAX = 4096 }; /* rp_exec.c's */
	const struct engine_executor *x = rp_exec_get();
	static struct engine_range ranges[PENDING_MAX];
	uint64_t free_mark = x->mark(x->ctx);
	for (size_t i = 0; i < PENDING_MAX; i++)
		ranges[i] = (struct engine_range){ SEGMENT_BASE + i * 8 * MB, 2 * MB };
	ranges[0].bytes = 3 * 2 * MB;
	x->issue(x->ctx, ENGINE_OP_DISCARD, ranges, PENDING_MAX, free_mark, 1, UINT64_MAX);
	struct rp_exec_stats st;
	rp_exec_get_stats(&st);
	if (!said(free_mark && discarded_ranges == 0 && st.dropped_discards == 0,
		  "the discards did not all wait for the free's marker"))
		return false;
	rp_exec_forget_discards(SEGMENT_BASE + 2 * MB + 4096, 512);
	rp_exec_get_stats(&st);
	return said(st.dropped_discards == 2, "not two runs counted dropped");
}

static void a_full_pending_table_counts_both_runs(void **state)
{
	test_in_child(full_pending_table_counts_both_runs);
}

/* Marker 0 tells the engine that nothing is left to wait for (a discard
 * behind it goes at once), so where no marker can be recorded because the
 * replayer's stream cannot be made, the executor waits for the GPU
 * instead, as it does where the record itself fails. */
static bool no_stream_no_marker(void)
{
	const struct engine_executor *x = rp_exec_get();
	no_streams = true;
	uint64_t mark = x->mark(x->ctx);
	return said(mark == 0, "a marker without a stream") &&
	       said(synchronizes == 1, "marker 0 given without waiting for the GPU");
}

static void marker_0_waits_for_the_gpu(void **state)
{
	test_in_child(no_stream_no_marker);
}

/* The event recorded after a batch of discards, which an allocation of
 * the program's own managed memory waits on, cannot be recorded (the
 * first record of a discard: the one that orders the program's streams
 * after it comes next): the waits then fall back to every discard, and
 * the failure is one of the replayer's driver calls that failed, counted
 * and warned of as the others are (it went uncounted). */
static bool landing_record_failure_counted(void)
{
	const struct engine_executor *x = rp_exec_get();
	struct rp_exec_stats st;
	if (!said(free_arena_memory(), "no arena"))
		return false;
	records_refused = 1;
	x->issue(x->ctx, ENGINE_OP_DISCARD, freed, 1, 0, 1, UINT64_MAX);
	rp_exec_get_stats(&st);
	return said(discard_calls == 1 && records_refused == 0, "the discard's batch event was not recorded") &&
	       said(st.failed_calls == 1, "the batch event's failed record not counted");
}

static void a_failed_discard_batch_event_is_counted(void **state)
{
	test_in_child(landing_record_failure_counted);
}

/* A placement the driver refuses half of is not made at all: the engine
 * then counts the allocation on the GPU and never releases it, and a host
 * preference left behind would outlive it, for the range's next tenants. */
static bool half_refused_placement(void)
{
	const struct engine_executor *x = rp_exec_get();
	refuse_accessed_by = true;
	bool placed = x->place(x->ctx, SEGMENT_BASE, 4 * MB, true);
	return said(!placed, "a placement the driver refused reported as made") &&
	       said(!prefers_host, "the host preference of a refused placement left in force") &&
	       said(!accessed_by, "the GPU's mapping of a refused placement left in force");
}

static void a_half_refused_placement_is_undone(void **state)
{
	test_in_child(half_refused_placement);
}

/* The worker issued a prefetch job but could not record the event after
 * it (a failed call, counted as such): a launch gated on that job finds
 * it issued, as the ticket the gate returns says (the engine counts none
 * of its blocks unissued), not among the launches whose prefetch the
 * worker had not issued yet (it was counted there, the plan taken for
 * late). */
static bool unrecorded_gate_not_unissued(void)
{
	const struct engine_executor *x = rp_exec_get();
	const struct engine_range r = { SEGMENT_BASE, 2 * MB };
	struct rp_exec_stats st;
	x->mark(x->ctx); /* the stream */
	records_refused = 1;
	x->issue(x->ctx, ENGINE_OP_PREFETCH, &r, 1, 0, 1, UINT64_MAX);
	rp_exec_wait_issued();
	uint64_t issued = x->gate(x->ctx, 1, false);
	rp_exec_get_stats(&st);
	return said(records_refused == 0 && st.failed_calls == 1, "the prefetch's event record did not fail") &&
	       said(issued == 1, "the prefetch not reported issued") &&
	       said(st.gates_unissued == 0, "an issued prefetch counted unissued");
}

static void an_unrecorded_gate_is_not_unissued(void **state)
{
	test_in_child(unrecorded_gate_not_unissued);
}

/* A prefetch whose job cannot be queued (memory ran out) is not made:
 * the engine counted it as issued, so it is one of the replayer's calls
 * that failed, as when the worker thread cannot start (it went
 * uncounted). */
static bool unqueued_job_counted(void)
{
	const struct engine_executor *x = rp_exec_get();
	const struct engine_range r = { SEGMENT_BASE, 2 * MB };
	struct rp_exec_stats st;
	x->mark(x->ctx); /* the stream */
	malloc_fails = true;
	x->issue(x->ctx, ENGINE_OP_PREFETCH, &r, 1, 0, 1, UINT64_MAX);
	malloc_fails = false;
	rp_exec_get_stats(&st);
	return said(st.failed_calls == 1, "a prefetch dropped for want of memory not counted");
}

static void an_unqueued_job_is_counted(void **state)
{
	test_in_child(unqueued_job_counted);
}

/* The table of pending discards cannot be made (memory ran out, at the
 * first op): every op is dropped from then on, as the stream's creation
 * failing drops them, and each is one of the replayer's calls that
 * failed (they went uncounted). */
static bool no_pending_table_counted(void)
{
	const struct engine_executor *x = rp_exec_get();
	const struct engine_range r = { SEGMENT_BASE, 2 * MB };
	struct rp_exec_stats st;
	calloc_fails = true;
	x->issue(x->ctx, ENGINE_OP_PREFETCH, &r, 1, 0, 1, UINT64_MAX);
	calloc_fails = false;
	x->issue(x->ctx, ENGINE_OP_EVICT, &r, 1, 0, 0, UINT64_MAX);
	rp_exec_get_stats(&st);
	return said(st.failed_calls == 2, "ops dropped without the pending discards' table not counted");
}

static void no_pending_table_is_counted(void **state)
{
	test_in_child(no_pending_table_counted);
}

/* The worker's queue has no bound; its peak says how far the worker fell
 * behind. With the worker held in its first call, the next three jobs wait
 * in the queue, however the threads interleave: the peak is 3 or 4 (the
 * first job, before the worker took it). */
static bool queue_peak_counted(void)
{
	const struct engine_executor *x = rp_exec_get();
	const struct engine_range r = { SEGMENT_BASE, 2 * MB };
	struct rp_exec_stats st;
	migrations_held = true;
	for (uint64_t t = 1; t <= 4; t++)
		x->issue(x->ctx, ENGINE_OP_PREFETCH, &r, 1, 0, t, UINT64_MAX);
	release_migrations();
	rp_exec_wait_issued();
	rp_exec_get_stats(&st);
	return said(st.queue_peak == 3 || st.queue_peak == 4, "the queue's peak not counted") &&
	       said(st.failed_calls == 0, "a queued job failed");
}

static void the_queue_peak_is_counted(void **state)
{
	test_in_child(queue_peak_counted);
}

/* Discards still waiting for their free's marker when the program exits
 * (or resets the device) are never issued: the engine has stopped, and
 * nothing retries them. Each is a discard not made, counted at the drain
 * that precedes the stats (they went uncounted); the drain issues none. */
static bool pending_at_exit_counted(void)
{
	const struct engine_executor *x = rp_exec_get();
	struct rp_exec_stats st;
	if (!said(free_arena_memory(), "no arena"))
		return false;
	uint64_t free_mark = x->mark(x->ctx);
	x->issue(x->ctx, ENGINE_OP_DISCARD, freed, 3, free_mark, 1, UINT64_MAX);
	rp_exec_drain();
	rp_exec_get_stats(&st);
	if (!said(st.dropped_discards == 3, "discards pending at the exit not counted dropped"))
		return false;
	marks_passed = true;
	rp_exec_drain();
	rp_exec_get_stats(&st);
	return said(discarded_ranges == 0, "a discard issued after the drain") &&
	       said(st.dropped_discards == 3, "discards counted dropped twice");
}

static void pending_discards_at_exit_are_counted_dropped(void **state)
{
	test_in_child(pending_at_exit_counted);
}

/* Lets the worker's held migration calls go after arg milliseconds. */
static void *release_migrations_after(void *arg)
{
	long ms = (long)(uintptr_t)arg;
	nanosleep(&(struct timespec){ ms / 1000, ms % 1000 * 1000000L }, NULL);
	release_migrations();
	return NULL;
}

/* Two prefetch jobs queued, the worker held in the first one's call, and
 * a launch gated on the second one's ticket with wait_issue, its
 * migrations let go after held_ms; returns the ticket the gate found
 * issued and the executor's stats after. */
static uint64_t gate_behind_a_held_worker(long held_ms, bool wait_issue, struct rp_exec_stats *st)
{
	const struct engine_executor *x = rp_exec_get();
	const struct engine_range r = { SEGMENT_BASE, 2 * MB };
	pthread_t t;
	x->mark(x->ctx); /* the stream */
	migrations_held = true;
	x->issue(x->ctx, ENGINE_OP_PREFETCH, &r, 1, 0, 1, UINT64_MAX);
	x->issue(x->ctx, ENGINE_OP_PREFETCH, &r, 1, 0, 2, UINT64_MAX);
	if (pthread_create(&t, NULL, release_migrations_after, (void *)(uintptr_t)held_ms) != 0)
		release_migrations();
	uint64_t issued = x->gate(x->ctx, 2, wait_issue);
	rp_exec_get_stats(st);
	pthread_join(t, NULL);
	rp_exec_wait_issued();
	return issued;
}

/* A launch whose own blocks' prefetch is still queued (wait_issue) waits
 * for the worker to issue it, and is then gated on it: none of its blocks
 * fault for want of the copy. */
static bool late_prefetch_waited_for(void)
{
	struct rp_exec_stats st;
	uint64_t issued = gate_behind_a_held_worker(20, true, &st);
	return said(issued == 2, "the gate did not wait for its prefetch to be issued") &&
	       said(st.issue_waits == 1 && st.issue_waits_expired == 0, "the wait not counted") &&
	       said(st.issue_wait_ns >= 10000000, "the wait's time not counted") &&
	       said(st.gates_unissued == 0, "a prefetch waited for counted unissued");
}

static void a_late_prefetch_is_waited_for(void **state)
{
	test_in_child(late_prefetch_waited_for);
}

/* Without wait_issue the gate does not wait: the kernel runs ahead of the
 * queued prefetch, counted unissued. */
static bool early_prefetch_not_waited_for(void)
{
	struct rp_exec_stats st;
	uint64_t issued = gate_behind_a_held_worker(20, false, &st);
	return said(issued == 0, "the gate waited unasked") &&
	       said(st.issue_waits == 0, "a wait counted that was not asked for") &&
	       said(st.gates_unissued == 1, "the prefetch run ahead of not counted");
}

static void an_early_prefetch_is_not_waited_for(void **state)
{
	test_in_child(early_prefetch_not_waited_for);
}

/* A worker held past ISSUE_WAIT_NS (a driver call that does not return):
 * the launch gives up, counted, and runs ahead of its prefetch. A ticket
 * with no job left to issue it (its job was lost) is not waited for. */
static bool issue_wait_bounded(void)
{
	const struct engine_executor *x = rp_exec_get();
	struct rp_exec_stats st;
	uint64_t issued = gate_behind_a_held_worker(300, true, &st);
	if (!said(issued == 0, "the gate found a held job issued") ||
	    !said(st.issue_waits == 1 && st.issue_waits_expired == 1, "the wait that gave up not counted") ||
	    !said(st.issue_wait_ns < 250000000, "the wait not bounded") ||
	    !said(st.gates_unissued == 1, "the prefetch run ahead of not counted"))
		return false;
	issued = x->gate(x->ctx, 3, true);
	rp_exec_get_stats(&st);
	return said(issued == 2, "the jobs issued since not reported") &&
	       said(st.issue_waits == 2 && st.issue_waits_expired == 1, "a wait for a lost job expired");
}

static void the_wait_for_an_issue_is_bounded(void **state)
{
	test_in_child(issue_wait_bounded);
}

/* Jobs of op on freed blocks `blocks` (n of them, a job each) queued and
 * the worker held in its first call, let go after held_ms; then a
 * discard-and-prefetch of freed block 0, issued on this thread as the
 * engine does, with room bytes free in the engine's model. Sets the
 * executor's stats right after; false if there is no arena to free blocks
 * in. */
static bool discard_prefetch_after_jobs(enum engine_op op, const size_t *blocks, size_t n, long held_ms,
					uint64_t room, struct rp_exec_stats *st)
{
	const struct engine_executor *x = rp_exec_get();
	pthread_t t;
	if (!said(free_arena_memory(), "no arena"))
		return false;
	marks_passed = true;
	x->mark(x->ctx); /* the stream */
	migrations_held = true;
	for (size_t i = 0; i < n; i++)
		x->issue(x->ctx, op, &freed[blocks[i]], 1, 0, 1, UINT64_MAX);
	if (pthread_create(&t, NULL, release_migrations_after, (void *)(uintptr_t)held_ms) != 0)
		release_migrations();
	x->issue(x->ctx, ENGINE_OP_DISCARD_PREFETCH, freed, 1, 0, 1, room);
	rp_exec_get_stats(st);
	pthread_join(t, NULL);
	rp_exec_wait_issued();
	return true;
}

static bool discard_prefetch_after(enum engine_op op, size_t block, long held_ms, uint64_t room,
				   struct rp_exec_stats *st)
{
	return discard_prefetch_after_jobs(op, &block, 1, held_ms, room, st);
}

/* The discard-and-prefetch's block, and one apart from it. */
#define SAME_BLOCK 0
#define OTHER_BLOCK 2

static bool discard_prefetch_behind_a_held_job(enum engine_op op, long held_ms, struct rp_exec_stats *st)
{
	return discard_prefetch_after(op, SAME_BLOCK, held_ms, 0, st);
}

/* The eviction the engine queued before a discard-and-prefetch makes its
 * room: the discard-and-prefetch waits for the worker to issue it, and so
 * follows it on the stream instead of filling the GPU past the budget. */
static bool room_waited_for(void)
{
	struct rp_exec_stats st;
	return discard_prefetch_behind_a_held_job(ENGINE_OP_EVICT, 20, &st) &&
	       said(evictions_before_discard_prefetch == 1, "the discard-and-prefetch went ahead of the eviction") &&
	       said(st.room_waits == 1 && st.room_waits_expired == 0, "the wait not counted") &&
	       said(st.room_wait_ns >= 10000000, "the wait's time not counted");
}

static void a_discard_prefetch_follows_the_evictions_queued(void **state)
{
	test_in_child(room_waited_for);
}

/* A prefetch queued before it makes no room: no wait. */
static bool no_wait_behind_a_prefetch(void)
{
	struct rp_exec_stats st;
	return discard_prefetch_behind_a_held_job(ENGINE_OP_PREFETCH, 20, &st) &&
	       said(st.room_waits == 0, "a discard-and-prefetch waited for a prefetch");
}

static void a_discard_prefetch_does_not_wait_for_prefetches(void **state)
{
	test_in_child(no_wait_behind_a_prefetch);
}

/* A worker held past ISSUE_WAIT_NS: the discard-and-prefetch gives up,
 * counted, and goes ahead of the eviction. */
static bool room_wait_bounded(void)
{
	struct rp_exec_stats st;
	return discard_prefetch_behind_a_held_job(ENGINE_OP_EVICT, 300, &st) &&
	       said(evictions_before_discard_prefetch == 0, "the held eviction counted issued") &&
	       said(st.room_waits == 1 && st.room_waits_expired == 1, "the wait that gave up not counted") &&
	       said(st.room_wait_ns < 250000000, "the wait not bounded");
}

static void the_wait_for_room_is_bounded(void **state)
{
	test_in_child(room_wait_bounded);
}

/* An eviction still held whose bytes fit the room, elsewhere: the
 * discard-and-prefetch lands ahead of it on the lane, the program's
 * stream waits for the lane alone, and the replayer's stream follows the
 * lane. */
static bool ahead_with_room(void)
{
	struct rp_exec_stats st;
	return discard_prefetch_after(ENGINE_OP_EVICT, OTHER_BLOCK, 20, 2 * MB, &st) &&
	       said(evictions_before_discard_prefetch == 0, "the discard-and-prefetch waited for the eviction") &&
	       said(st.room_waits == 0 && st.discard_prefetches_ahead == 1, "not counted ahead") &&
	       said(discard_prefetch_stream && discard_prefetch_stream != migration_stream,
		    "the discard-and-prefetch went on the replayer's stream") &&
	       said(legacy_waited_for == discard_prefetch_stream, "the program's stream did not wait for the lane") &&
	       said(waited_for_the_lane, "the replayer's stream does not follow the lane");
}

static void a_discard_prefetch_with_room_goes_ahead(void **state)
{
	test_in_child(ahead_with_room);
}

/* The same with a byte too little room: it follows the eviction. */
static bool behind_without_room(void)
{
	struct rp_exec_stats st;
	return discard_prefetch_after(ENGINE_OP_EVICT, OTHER_BLOCK, 20, 2 * MB - 1, &st) &&
	       said(evictions_before_discard_prefetch == 1, "the discard-and-prefetch went ahead of the eviction") &&
	       said(st.room_waits == 1 && st.discard_prefetches_ahead == 0, "counted ahead") &&
	       said(discard_prefetch_stream == migration_stream, "the discard-and-prefetch went on the lane");
}

static void a_discard_prefetch_without_room_stays_behind(void **state)
{
	test_in_child(behind_without_room);
}

/* An eviction of its own block, room or not: ahead of it, the eviction
 * would move the fresh tensor out. */
static bool behind_a_shared_block(void)
{
	struct rp_exec_stats st;
	return discard_prefetch_after(ENGINE_OP_EVICT, SAME_BLOCK, 20, UINT64_MAX, &st) &&
	       said(evictions_before_discard_prefetch == 1, "the discard-and-prefetch went ahead of the eviction") &&
	       said(st.discard_prefetches_ahead == 0, "counted ahead");
}

static void a_discard_prefetch_sharing_a_block_stays_behind(void **state)
{
	test_in_child(behind_a_shared_block);
}

/* Two eviction batches queued, still held, with room for the newer one
 * alone: the discard-and-prefetch lands ahead of the newer on the lane,
 * which waits on the GPU for the older, once the worker has issued it. */
static bool ahead_of_the_newer_eviction(void)
{
	const size_t out[] = { 2, 4 };
	struct rp_exec_stats st;
	return discard_prefetch_after_jobs(ENGINE_OP_EVICT, out, 2, 20, 2 * MB, &st) &&
	       said(evictions_before_discard_prefetch >= 1,
		    "the discard-and-prefetch went before the older eviction was issued") &&
	       said(st.discard_prefetches_ahead == 1 && st.discard_prefetches_ahead_in_part == 1,
		    "not counted ahead in part") &&
	       said(discard_prefetch_stream && discard_prefetch_stream != migration_stream,
		    "the discard-and-prefetch went on the replayer's stream") &&
	       said(stream_waited_on(discard_prefetch_stream, migration_stream),
		    "the lane did not wait for the older eviction");
}

static void a_discard_prefetch_waits_only_for_the_evictions_making_its_room(void **state)
{
	test_in_child(ahead_of_the_newer_eviction);
}

/* The same with the worker held past ISSUE_WAIT_NS: the wait for the older
 * eviction gives up once, counted, and the discard-and-prefetch goes on the
 * replayer's stream without waiting again for the rest. */
static bool partial_wait_bounded(void)
{
	const size_t out[] = { 2, 4 };
	struct rp_exec_stats st;
	return discard_prefetch_after_jobs(ENGINE_OP_EVICT, out, 2, 300, 2 * MB, &st) &&
	       said(evictions_before_discard_prefetch == 0, "the held eviction counted issued") &&
	       said(st.room_waits == 1 && st.room_waits_expired == 1, "not one wait that gave up") &&
	       said(st.room_wait_ns < 90000000, "waited past one bound") &&
	       said(st.discard_prefetches_ahead == 0, "counted ahead") &&
	       said(discard_prefetch_stream == migration_stream, "the discard-and-prefetch went on the lane");
}

static void the_wait_for_the_older_evictions_is_bounded_once(void **state)
{
	test_in_child(partial_wait_bounded);
}

/* A job of op on freed block `block` queued (and, when landed, issued
 * and landed), then a discard-and-prefetch of freed block 0 with no room
 * to spare in the engine's model; sets the stats right after it. */
static bool discard_prefetch_after_one(enum engine_op op, size_t block, bool landed, struct rp_exec_stats *st)
{
	const struct engine_executor *x = rp_exec_get();
	if (!said(free_arena_memory(), "no arena"))
		return false;
	marks_passed = true;
	x->mark(x->ctx); /* the stream */
	x->issue(x->ctx, op, &freed[block], 1, 0, 1, UINT64_MAX);
	if (landed)
		rp_exec_wait_issued();
	x->issue(x->ctx, ENGINE_OP_DISCARD_PREFETCH, freed, 1, 0, 2, 0);
	rp_exec_get_stats(st);
	rp_exec_wait_issued();
	return true;
}

/* An eviction of its own block issued and landed (its event complete)
 * holds nothing back and takes no room. */
static bool landed_evictions_take_no_room(void)
{
	struct rp_exec_stats st;
	return discard_prefetch_after_one(ENGINE_OP_EVICT, SAME_BLOCK, true, &st) &&
	       said(st.discard_prefetches_ahead == 1 && st.room_waits == 0, "a landed eviction held it back");
}

static void a_landed_eviction_takes_no_room(void **state)
{
	test_in_child(landed_evictions_take_no_room);
}

/* An eviction job of freed block `out` queued and held in the worker's
 * call; then a discard of freed block 0, its marker passed, issued on this
 * thread as the engine does. Sets what the engine's evicting() read before
 * the discard, and the stats right after it. */
static bool discard_beside_a_held_eviction(size_t out, uint64_t *evicting, struct rp_exec_stats *st)
{
	const struct engine_executor *x = rp_exec_get();
	pthread_t t;
	if (!said(free_arena_memory(), "no arena"))
		return false;
	marks_passed = true;
	x->mark(x->ctx); /* the stream */
	migrations_held = true;
	x->issue(x->ctx, ENGINE_OP_EVICT, &freed[out], 1, 0, 1, UINT64_MAX);
	if (pthread_create(&t, NULL, release_migrations_after, (void *)(uintptr_t)20) != 0)
		release_migrations();
	*evicting = x->evicting(x->ctx);
	x->issue(x->ctx, ENGINE_OP_DISCARD, freed, 1, 0, 2, UINT64_MAX);
	rp_exec_get_stats(st);
	pthread_join(t, NULL);
	rp_exec_wait_issued();
	return true;
}

/* The engine learns the eviction's bytes, still on their way out, and a
 * discard of other blocks lands ahead of it, on the lane: the program's
 * stream waits for the lane alone, and the replayer's stream follows it. */
static bool discard_ahead(void)
{
	struct rp_exec_stats st;
	uint64_t evicting;
	return discard_beside_a_held_eviction(OTHER_BLOCK, &evicting, &st) &&
	       said(evicting == 2 * MB, "the eviction in flight not reported") &&
	       said(st.discards_ahead == 1, "not counted ahead") &&
	       said(discard_stream && discard_stream != migration_stream, "the discard went on the replayer's stream") &&
	       said(legacy_waited_for == discard_stream, "the program's stream did not wait for the lane") &&
	       said(stream_waited_on(migration_stream, discard_stream), "the replayer's stream does not follow the lane") &&
	       said(rp_exec_get()->evicting(NULL) == 0, "a landed eviction still reported");
}

static void a_discard_lands_ahead_of_the_evictions(void **state)
{
	test_in_child(discard_ahead);
}

/* A discard of a block an eviction in flight moves stays behind it. */
static bool discard_behind(void)
{
	struct rp_exec_stats st;
	uint64_t evicting;
	return discard_beside_a_held_eviction(SAME_BLOCK, &evicting, &st) &&
	       said(st.discards_ahead == 0, "counted ahead") &&
	       said(discard_stream == migration_stream, "the discard went on the lane");
}

static void a_discard_of_a_block_being_evicted_stays_behind(void **state)
{
	test_in_child(discard_behind);
}

/* Before the run's first eviction nothing holds a discard-and-prefetch
 * back: it goes on the lane, not behind the prefetches queued. */
static bool lane_before_the_first_eviction(void)
{
	struct rp_exec_stats st;
	return discard_prefetch_after_one(ENGINE_OP_PREFETCH, OTHER_BLOCK, false, &st) &&
	       said(st.discard_prefetches_ahead == 1 && st.discard_prefetches_ahead_in_part == 0,
		    "not counted ahead") &&
	       said(discard_prefetch_stream && discard_prefetch_stream != migration_stream,
		    "the discard-and-prefetch went on the replayer's stream");
}

static void before_the_first_eviction_a_discard_prefetch_takes_the_lane(void **state)
{
	test_in_child(lane_before_the_first_eviction);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_full_discard_batch_fits_a_small_stack),
		cmocka_unit_test(pending_discards_retried_on_a_small_stack),
		cmocka_unit_test(a_reused_block_is_left_out_of_its_discard),
		cmocka_unit_test(reused_ends_are_left_out_of_their_discard),
		cmocka_unit_test(a_full_pending_table_counts_both_runs),
		cmocka_unit_test(marker_0_waits_for_the_gpu),
		cmocka_unit_test(a_half_refused_placement_is_undone),
		cmocka_unit_test(a_failed_discard_batch_event_is_counted),
		cmocka_unit_test(an_unrecorded_gate_is_not_unissued),
		cmocka_unit_test(an_unqueued_job_is_counted),
		cmocka_unit_test(no_pending_table_is_counted),
		cmocka_unit_test(pending_discards_at_exit_are_counted_dropped),
		cmocka_unit_test(the_queue_peak_is_counted),
		cmocka_unit_test(a_late_prefetch_is_waited_for),
		cmocka_unit_test(an_early_prefetch_is_not_waited_for),
		cmocka_unit_test(the_wait_for_an_issue_is_bounded),
		cmocka_unit_test(a_discard_prefetch_follows_the_evictions_queued),
		cmocka_unit_test(a_discard_prefetch_does_not_wait_for_prefetches),
		cmocka_unit_test(the_wait_for_room_is_bounded),
		cmocka_unit_test(a_discard_prefetch_with_room_goes_ahead),
		cmocka_unit_test(a_discard_prefetch_without_room_stays_behind),
		cmocka_unit_test(a_discard_prefetch_sharing_a_block_stays_behind),
		cmocka_unit_test(a_landed_eviction_takes_no_room),
		cmocka_unit_test(a_discard_prefetch_waits_only_for_the_evictions_making_its_room),
		cmocka_unit_test(the_wait_for_the_older_evictions_is_bounded_once),
		cmocka_unit_test(before_the_first_eviction_a_discard_prefetch_takes_the_lane),
		cmocka_unit_test(a_discard_lands_ahead_of_the_evictions),
		cmocka_unit_test(a_discard_of_a_block_being_evicted_stays_behind),
	};
	return cmocka_run_group_tests_name("rp_exec", tests, NULL, NULL);
}
