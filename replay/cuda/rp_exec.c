/*
 * rp_exec.c: the engine's executor on CUDA.
 *
 * Markers are CUDA events recorded on the program's stream right after a
 * launch, in a ring of events, reused: a migration waiting for a marker
 * whose event was reused since waits for the later marker instead, which
 * on one stream is only longer (mark_done: a discard, too, takes the later
 * marker's completion for its own there). Ops go on the replayer's own
 * non-blocking stream, behind the marker they name.
 *
 * Prefetches and evictions only cost time if mistimed, so a worker thread
 * issues them and the program's thread never waits for the driver.
 *
 * Discards are different: a discard that overlaps the program's use of the
 * range destroys data (h100-facts.md). On the H100 machine a discard queued
 * behind the free's marker (cuStreamWaitEvent) still changed train_sim's
 * result, while the same discard after a full synchronisation did not
 * (docs/design.md). So the executor does not trust stream order for them:
 *  - a discard is issued only once its marker has completed on the GPU
 *    (cuEventQuery), until then it waits in a pending list that every later
 *    call retries, without blocking the program; an allocation in its
 *    range forgets it (replay/pending_discards.h);
 *  - when it is issued, the arena must confirm that no live allocation
 *    overlaps the range (it may have been handed out again meanwhile; then
 *    that part is dropped: the new owner's data must not be discarded);
 *  - a discard-and-prefetch of a fresh allocation whose marker (its
 *    blocks' latest free) has not completed becomes a plain prefetch
 *    behind that marker, which destroys nothing: a kernel writing a
 *    discarded block it was not brought to faults page by page;
 *  - the program's stream is made to wait for every discard issued, so
 *    whatever it does next to the range comes after; the discard call is
 *    made on the program's thread, so that the wait names work already
 *    queued (a build where the program's streams waited for a word that
 *    the worker's later calls set hung the MLP under plan: docs/replay.md);
 *  - a discard-and-prefetch first waits (bounded) for the worker to issue
 *    the evictions queued before it, whose room it takes in the engine's
 *    model (follow_evictions), or those of them it must follow when it
 *    may land ahead of the rest on a lane of its own (below);
 *  - discards go on the one stream, behind the migrations the worker has
 *    issued on it (a migration still in the worker's queue follows them,
 *    which can cost a stale eviction but never runs beside the discard),
 *    unless, issued at once (not retried), no eviction queued or on its
 *    way out touches their blocks (discard_stream: then on the lane,
 *    below): on a stream of their own, where a discard could run while an
 *    earlier migration of its range was pending or copying, the PyTorch
 *    MLP's losses changed under deepum in 3 of 6 runs on the H100 (0 of 6
 *    on the one stream; docs/replay.md, "What discard may touch").
 * Discards move no data, so none of this costs a copy.
 *
 * On the one stream a discard-and-prefetch, and so the program's next
 * kernel, waits for every eviction queued before it, each behind its
 * marker and the driver's eviction work, though the room it takes may
 * not be theirs. It goes on the lane, a stream of its own, ahead of the
 * newest evictions not yet landed when those fit the room the engine's
 * model leaves under its limit (the GPU then holds no more than the limit
 * meanwhile) and none of them shares a 2 MB block with it
 * (replay/evicting.h), and when no discard of its blocks is in flight; the
 * lane waits on the GPU for the older evictions, which make its room. The
 * replayer's stream then waits for the lane, so whatever is queued there
 * later, and every discard batch's landing event, still follows it. A
 * discard goes on the lane too when none of those evictions touches its
 * blocks, so that the room it makes, which the engine may give a
 * discard-and-prefetch (replay/act.c, room_beside_evictions), is there
 * before theirs.
 *
 * A kernel that needs blocks a prefetch is still copying is ordered after
 * that prefetch (gate), so it waits for the copy instead of faulting page
 * by page on the blocks: after each prefetch job the worker records an
 * event and publishes the job's ticket in the event's slot. A launch can
 * only wait for a job the worker has already issued; one that comes
 * earlier (counted: the plan was too late for it) waits for the newest job
 * issued, so that only the blocks of jobs still queued can fault. Waiting
 * names work already queued on the replayer's stream, whose jobs wait only
 * for markers recorded before them, so no cycle can form.
 *
 * The engine calls issue() and mark() with its lock held: the executor's
 * own state needs no lock but the worker queue's and the landing table's
 * (landing_lock: allocating threads wait on it, rp_exec_wait_discards).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

#include "clock.h"
#include "common/cuda/capture.h"
#include "common/cuda/um_alloc.h"
#include "common/cuda/um_backend.h"
#include "log.h"
#include "minmax.h"
#include "replay/blocktab.h"
#include "replay/calls.h"
#include "replay/evicting.h"
#include "replay/landing_discards.h"
#include "replay/pending_discards.h"
#include "rp.h"
#include "size.h"
#include "thread.h"

#define MARKS 4096        /* marker events in the ring */
#define GATES 256         /* prefetch events in their ring (slot: ticket % GATES) */
/* The longest a launch waits for the worker to issue its late prefetch
 * (wait_for_issue): well above the worker's backlogs seen on the H100 (a
 * few jobs of a few ms each), short enough that a worker stuck in a
 * driver call costs a step little; past it the kernel faults instead. */
#define ISSUE_WAIT_NS 50000000ull

static CUcontext ctx;
static CUstream mig_stream;
/* Discard-and-prefetches that land ahead of the evictions (NULL: none
 * could be made), and the event recorded after each batch there. */
static CUstream lane;
static CUevent lane_done;
static CUdevice device;
static CUevent marks[MARKS];
static uint64_t next_mark = 1;
/* Read without the engine's lock by rp_exec_wait_discards. */
static _Atomic(CUevent) discard_done;
/* The discards issued that may not have landed, and an event recorded
 * after each batch (slot: its number % LANDING_EVENTS), so that the
 * program's own managed memory waits only for those of its range.
 * landing_lock keeps a batch's number and its event's record together;
 * landing_lost: an event could not be recorded, and the waits fall back to
 * discard_done, which follows every discard. */
#define LANDING_EVENTS 64
static landing_discards *landing;
static CUevent landing_ev[LANDING_EVENTS];
static pthread_mutex_t landing_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool landing_lost;
/* The calling thread's last launch stream, good while no stream has been
 * destroyed since (its handle may be gone, or name another stream). */
static __thread CUstream launch_stream;
static __thread unsigned launch_stream_gen;
static atomic_uint streams_destroyed;
/* The calling thread is inside one of the replayer's own migration calls,
 * whose callbacks are not the program's (rp_exec_own_call). */
static __thread bool own_call;

/* The stream of the launch the calling thread is making. */
static CUstream program_stream(void)
{
	bool current = launch_stream && launch_stream_gen == atomic_load(&streams_destroyed);
	return current ? launch_stream : CU_STREAM_LEGACY;
}

/* Discards whose marker has not completed yet; created on first use,
 * from the program's thread that creates the stream or allocates first. */
#define PENDING_MAX 4096
static pending_discards *pending;
static pthread_once_t pending_once = PTHREAD_ONCE_INIT;

static void create_pending(void)
{
	pending = pending_discards_create(PENDING_MAX);
}

/* Counted from the program's threads and the worker alike. */
static atomic_uint_fast64_t n_failed, n_marks, n_discard_waits;
static atomic_uint_fast64_t kind_calls[4], kind_ns[4]; /* by enum engine_op */
static atomic_uint_fast64_t n_gate_waits, n_gates_unissued, n_issue_waits, n_issue_waits_expired;
static atomic_uint_fast64_t n_room_waits, n_room_waits_expired, n_ahead, n_ahead_in_part, n_discards_ahead;
/* Host time in the calls that order streams, on the program's threads:
 * recording markers, ordering its streams after discards, gating launches
 * on prefetches (each may wait while the worker's call copies); and all
 * of the program's threads' time inside the executor's entry points. */
static atomic_uint_fast64_t mark_ns, discard_wait_ns, gate_ns, issue_wait_ns, room_wait_ns, exec_ns;

/* The worker's: the event recorded after a prefetch job, and that job's
 * ticket (0: none yet). A later job reusing the slot only makes a gate
 * that reads the slot late wait longer, never shorter. */
static CUevent gate_ev[GATES];
static _Atomic uint64_t gate_ticket[GATES];
/* The newest ticket whose prefetch job the worker has issued: jobs go in
 * ticket order, so every earlier one has been too. */
static _Atomic uint64_t issued_ticket;
/* The worker's: an event recorded after each eviction job (slot: its
 * number % EVICT_EVENTS; a later job's in the slot only answers later),
 * and whether one could not be recorded, which leaves the lane unused. */
#define EVICT_EVENTS 256
static CUevent evict_ev[EVICT_EVENTS];
static atomic_bool evict_events_lost;
static atomic_int failures_warned;

/* Prefetch and evict jobs for the worker. */
struct job {
	enum engine_op op;
	uint64_t wait_mark, ticket;
	uint64_t evict_no; /* evictions: the job's number in in_flight */
	size_t n;
	struct engine_range *ranges;
	struct job *next;
};
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t issued_cond = PTHREAD_COND_INITIALIZER; /* a job issued */
static struct job *queue_head, *queue_tail;
static uint64_t queued_jobs, queued_peak; /* jobs the worker has not taken */
/* Eviction jobs queued and issued so far: jobs go in order, so once the
 * counts meet, every eviction queued is on the stream. */
static uint64_t evictions_queued, evictions_issued;
/* The eviction jobs queued that may not have landed, by range (NULL:
 * none could be made, and the lane is left unused). */
static evicting *in_flight;
static int worker_busy;
static int worker_started;

/* Room for the batch calls, kept off the stack: discards are issued on
 * the program's threads, from their launch callbacks too, and the program
 * may have made a thread's stack small (pthread_attr_setstacksize); each
 * array below takes 8 or 16 KiB. */
struct call_room {
	struct engine_range piece[CALLS_MAX_RANGES]; /* one call's ranges (calls_split) */
	CUdeviceptr ptrs[CALLS_MAX_RANGES];          /* and as the driver takes them */
	size_t sizes[CALLS_MAX_RANGES];
};
/* The worker's; and the program's threads', which the engine's lock
 * serializes (issue() and mark() are called with it held): the pending
 * discards found ready (retry_pending), the ranges of a batch that are
 * issued (issue_and_order), and their calls. */
static struct call_room worker_room;
static struct {
	struct engine_range ready[CALLS_MAX_RANGES];
	struct engine_range idle[CALLS_MAX_RANGES];
	struct call_room calls;
} program_room;

static void check(CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return;
	atomic_fetch_add(&n_failed, 1);
	if (atomic_fetch_add(&failures_warned, 1) == 0) {
		const char *msg = "?";
		cuGetErrorString(r, &msg);
		um_warn("%s failed (%s); the run goes on, slower where the plan could not act", what, msg);
	}
}

/* Where the program's first call on another stream cannot be queued
 * behind the legacy stream's order on the GPU, it waits here for every
 * discard issued while that order was relied on (issue_ordered). For at
 * most a second: the replayer's stream runs behind markers on the
 * program's streams, and the calling thread may hold what the program's
 * queued work needs to get there (a host function taking a lock it
 * holds); past that, the call goes on unordered, as it did before. */
#define ORDER_END_WAIT_NS 1000000000ull

static bool wait_landed(uint64_t address, uint64_t bytes, uint64_t limit_ns);

static void wait_every_discard(void)
{
	if (!wait_landed(0, UINT64_MAX, ORDER_END_WAIT_NS))
		um_debug("the discards issued in the one stream order had not landed after %llu ms: the program's "
			 "first call on another stream goes on unordered with them",
			 ORDER_END_WAIT_NS / 1000000);
}

/* The lane and what it needs; without them discard-and-prefetches stay on
 * the replayer's stream. */
static void make_lane(void)
{
	pthread_mutex_lock(&queue_lock);
	if (!in_flight)
		in_flight = evicting_create();
	pthread_mutex_unlock(&queue_lock);
	if (!in_flight || cuEventCreate(&lane_done, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		return;
	if (cuStreamCreate(&lane, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
		cuEventDestroy(lane_done);
		lane = NULL;
	}
}

/* Binds the program's context and creates the stream on first use (from a
 * launch callback, where the program's context is current). */
static int ensure_stream(void)
{
	if (mig_stream)
		return 0;
	if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx || cuCtxGetDevice(&device) != CUDA_SUCCESS)
		return -1;
	pthread_once(&pending_once, create_pending);
	if (!pending) {
		/* Made once: every op is dropped from here on, each counted. */
		check(CUDA_ERROR_OUT_OF_MEMORY, "making the replayer's table of pending discards");
		return -1;
	}
	if (!landing) {
		landing = landing_discards_create();
		atomic_store(&landing_lost, !landing);
	}
	/* The event first: a stream without it would issue discards nothing
	 * orders the program after. Published with the stream, so that
	 * rp_exec_wait_discards, which reads it without the engine's lock,
	 * never sees one destroyed here. */
	CUevent done;
	CUresult r = cuEventCreate(&done, CU_EVENT_DISABLE_TIMING);
	if (r == CUDA_SUCCESS && (r = cuStreamCreate(&mig_stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
		cuEventDestroy(done);
		mig_stream = NULL;
	} else if (r == CUDA_SUCCESS) {
		discard_done = done;
		um_backend_order_end_host_wait(wait_every_discard);
		make_lane();
	}
	check(r, "creating the replayer's stream");
	return r == CUDA_SUCCESS ? 0 : -1;
}

static const char *op_name(enum engine_op op)
{
	static const char *names[] = { "prefetch", "evict", "discard", "discard+prefetch" };
	return names[op];
}

bool rp_exec_own_call(void)
{
	return own_call;
}

static void wait_mark(uint64_t mark)
{
	if (mark)
		check(cuStreamWaitEvent(mig_stream, marks[mark % MARKS], 0), "waiting for a marker");
}

/* One batch call for up to CALLS_MAX_RANGES ranges, made in room; an NVTX
 * range makes it show in Nsight Systems. */
static void call(enum engine_op op, const struct engine_range *r, size_t n, struct call_room *room,
		 CUstream stream)
{
	CUdeviceptr *ptrs = room->ptrs;
	size_t *sizes = room->sizes, loc_idx = 0, bytes = 0;
	CUmemLocation loc = { CU_MEM_LOCATION_TYPE_DEVICE, device };
	char label[96], sz[32];

	for (size_t i = 0; i < n; i++) {
		ptrs[i] = (CUdeviceptr)r[i].address;
		sizes[i] = r[i].bytes;
		bytes += r[i].bytes;
	}
	snprintf(label, sizeof label, "umkit %s %zu ranges %s", op_name(op), n, um_size_format(bytes, sz, sizeof sz));
	nvtxRangePushA(label);
	uint64_t t0 = rp_now();
	own_call = true;
	switch (op) {
	case ENGINE_OP_EVICT:
		loc.type = CU_MEM_LOCATION_TYPE_HOST;
		loc.id = 0;
		/* fall through */
	case ENGINE_OP_PREFETCH:
		check(cuMemPrefetchBatchAsync(ptrs, sizes, n, &loc, &loc_idx, 1, 0, stream),
		      op == ENGINE_OP_EVICT ? "cuMemPrefetchBatchAsync (evict)" : "cuMemPrefetchBatchAsync");
		break;
	case ENGINE_OP_DISCARD:
		check(cuMemDiscardBatchAsync(ptrs, sizes, n, 0, stream), "cuMemDiscardBatchAsync");
		break;
	case ENGINE_OP_DISCARD_PREFETCH:
		check(cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, n, &loc, &loc_idx, 1, 0, stream),
		      "cuMemDiscardAndPrefetchBatchAsync");
		break;
	}
	own_call = false;
	atomic_fetch_add(&kind_ns[op], rp_now() - t0);
	atomic_fetch_add(&kind_calls[op], 1);
	nvtxRangePop();
}

/* Bytes one migration call moves at most, per direction. A call made on an
 * idle stream copies inside the call, and for that long the driver stalls
 * every other CUDA call of the process, the program's launches included
 * (docs/replay.md, "What the driver's calls cost"): about 4 ms of copying
 * per call lets the program's launches in between calls. Bigger calls copy
 * a little faster. */
#define EVICT_CALL_BYTES (64ULL << 20)
#define PREFETCH_CALL_BYTES (192ULL << 20)

static uint64_t call_bytes(enum engine_op op)
{
	switch (op) {
	case ENGINE_OP_EVICT:
		return EVICT_CALL_BYTES;
	case ENGINE_OP_PREFETCH:
	case ENGINE_OP_DISCARD_PREFETCH:
		return PREFETCH_CALL_BYTES;
	default:
		return UINT64_MAX;
	}
}

static uint64_t mapped_extent(void *unused, uint64_t address, uint64_t bytes)
{
	arena *a = um_alloc_arena();
	return a ? arena_mapped_extent(a, address, bytes) : bytes;
}

/* What emit makes its calls with. */
struct emitting {
	enum engine_op op;
	struct call_room *room;
	CUstream stream;
};

static void emit(void *emitting, const struct engine_range *r, size_t n)
{
	struct emitting *e = emitting;
	call(e->op, r, n, e->room, e->stream);
}

/* Issues op on the ranges on stream, cut into calls (calls.h) made in
 * room. */
static void call_all(enum engine_op op, const struct engine_range *r, size_t n, struct call_room *room,
		     CUstream stream)
{
	struct emitting e = { op, room, stream };
	struct calls_target t = { &e, mapped_extent, emit, room->piece };
	calls_split(r, n, call_bytes(op), &t);
}

/* Records *ev, a ring's slot, on stream, creating it on first use. */
static CUresult record_event(CUevent *ev, CUstream stream)
{
	CUresult r = *ev ? CUDA_SUCCESS : cuEventCreate(ev, CU_EVENT_DISABLE_TIMING);
	return r == CUDA_SUCCESS ? cuEventRecord(*ev, stream) : r;
}

/* On the worker, after the prefetch job of ticket was issued. */
static void record_gate(uint64_t ticket)
{
	size_t slot = ticket % GATES;
	CUresult r = record_event(&gate_ev[slot], mig_stream);
	check(r, "recording a prefetch");
	if (r == CUDA_SUCCESS)
		atomic_store_explicit(&gate_ticket[slot], ticket, memory_order_release);
}

/* Orders the program's stream after the prefetch job of ticket, issued,
 * while it may still be copying. A slot taken by a later job (recorded >
 * ticket) means this one is GATES flushes old: long copied, or about to be. */
static void wait_issued(uint64_t ticket)
{
	size_t slot = ticket % GATES;
	if (atomic_load_explicit(&gate_ticket[slot], memory_order_acquire) == ticket &&
	    cuEventQuery(gate_ev[slot]) == CUDA_ERROR_NOT_READY) {
		check(cuStreamWaitEvent(program_stream(), gate_ev[slot], 0),
		      "ordering a kernel after its prefetch");
		atomic_fetch_add(&n_gate_waits, 1);
	}
}

/* With queue_lock held, waits until issued() reaches target, at most
 * ISSUE_WAIT_NS, and only while the worker has jobs: one that never
 * started, or lost a job (memory ran out: counted failed), issues nothing
 * more. Returns false if the time ran out. */
static bool wait_worker(uint64_t (*issued)(void), uint64_t target)
{
	struct timespec until = um_deadline_in(ISSUE_WAIT_NS);
	while (issued() < target && (queue_head || worker_busy))
		if (pthread_cond_clockwait(&issued_cond, &queue_lock, CLOCK_MONOTONIC, &until) == ETIMEDOUT)
			return false;
	return true;
}

static uint64_t newest_ticket_issued(void)
{
	return atomic_load_explicit(&issued_ticket, memory_order_acquire);
}

/* Waits for the worker to issue the prefetch job of ticket (the kernel
 * would fault on its blocks otherwise; engine.h, gate). Returns the
 * newest ticket issued. */
static uint64_t wait_for_issue(uint64_t ticket)
{
	uint64_t t0 = rp_now();
	pthread_mutex_lock(&queue_lock);
	if (!wait_worker(newest_ticket_issued, ticket))
		atomic_fetch_add(&n_issue_waits_expired, 1);
	pthread_mutex_unlock(&queue_lock);
	atomic_fetch_add(&n_issue_waits, 1);
	atomic_fetch_add(&issue_wait_ns, rp_now() - t0);
	return newest_ticket_issued();
}

/* Returns the newest ticket issued as the gate found it (issued_ticket),
 * after waiting for the job of ticket to be issued when wait_issue asks.
 * A job not issued yet cannot be waited for; the kernel then waits for the
 * newest one issued, which holds or follows the kernel's other blocks'
 * prefetches (jobs are issued in ticket order), so only the blocks of the
 * jobs still queued can fault. Whether the job was issued is read from
 * issued_ticket, not from the job's event slot, which a job whose event
 * could not be recorded leaves older (that failure is counted apart). */
static uint64_t gate_launch(uint64_t ticket, bool wait_issue)
{
	uint64_t issued = atomic_load_explicit(&issued_ticket, memory_order_acquire);
	if (issued < ticket && wait_issue)
		issued = wait_for_issue(ticket);
	if (issued < ticket) {
		atomic_fetch_add(&n_gates_unissued, 1);
		if (issued)
			wait_issued(issued);
		return issued;
	}
	wait_issued(ticket);
	return issued;
}

static void *worker(void *arg)
{
	cuCtxSetCurrent(ctx);
	pthread_mutex_lock(&queue_lock);
	for (;;) {
		while (!queue_head) {
			worker_busy = 0;
			pthread_cond_broadcast(&idle_cond);
			pthread_cond_wait(&queue_cond, &queue_lock);
		}
		struct job *j = queue_head;
		queue_head = j->next;
		if (!queue_head)
			queue_tail = NULL;
		queued_jobs--;
		worker_busy = 1;
		pthread_mutex_unlock(&queue_lock);
		wait_mark(j->wait_mark);
		call_all(j->op, j->ranges, j->n, &worker_room, mig_stream);
		enum engine_op op = j->op;
		if (op == ENGINE_OP_PREFETCH) {
			record_gate(j->ticket);
			atomic_store_explicit(&issued_ticket, j->ticket, memory_order_release);
		} else if (op == ENGINE_OP_EVICT &&
			   record_event(&evict_ev[j->evict_no % EVICT_EVENTS], mig_stream) != CUDA_SUCCESS) {
			atomic_store(&evict_events_lost, true);
		}
		free(j);
		pthread_mutex_lock(&queue_lock);
		evictions_issued += op == ENGINE_OP_EVICT;
		pthread_cond_broadcast(&issued_cond);
	}
	return NULL;
}

static atomic_uint_fast64_t n_dropped_discards, n_fresh_prefetched;

/* Whether the GPU has passed marker mark, for a discard. Its slot's event
 * may have been recorded again since, for a later marker. While the
 * program uses one stream that marker follows this one there, so its
 * completion answers for both (conservatively). Once the program uses
 * more, nothing is discarded any more (issue_ordered), so nothing needs
 * waiting for; this never synchronizes with the GPU, as it runs in the
 * program's launches. */
static bool mark_done(uint64_t mark)
{
	if (!mark)
		return true;
	if (next_mark - mark > MARKS && um_backend_multi_stream())
		return true;
	return cuEventQuery(marks[mark % MARKS]) == CUDA_SUCCESS;
}

/* After a batch on the lane: lane_done follows it, and the replayer's
 * stream waits for that, so that its later work and the landing events
 * recorded there follow the batch too. Where the stream cannot be made to
 * wait, the host waits for the lane. */
static void join_lane(void)
{
	CUresult r = cuEventRecord(lane_done, lane);
	if (r == CUDA_SUCCESS)
		r = cuStreamWaitEvent(mig_stream, lane_done, 0);
	check(r, "ordering the replayer's stream after a discard-and-prefetch");
	if (r != CUDA_SUCCESS)
		check(cuStreamSynchronize(lane), "waiting for a discard-and-prefetch");
}

/* Issues a batch of the ops of one kind, and notes the ranges of those
 * that discard as in flight until the event recorded after them. The
 * event's slot held batch number - LANDING_EVENTS: landed, its ranges
 * and every older one's are dropped here, so that the table stays short
 * while no allocation asks. A failure is noted under the lock, where a
 * waiter reads it (rp_exec_wait_discards), and counted as the replayer's
 * other failed calls are. */
static void call_batch(enum engine_op op, const struct engine_range *r, size_t n, CUstream stream)
{
	call_all(op, r, n, &program_room.calls, stream);
	if (stream != mig_stream)
		join_lane();
	if (op == ENGINE_OP_PREFETCH || atomic_load(&landing_lost))
		return;
	pthread_mutex_lock(&landing_lock);
	uint64_t batch = landing_discards_issued(landing, r, n);
	CUevent *ev = &landing_ev[batch % LANDING_EVENTS];
	if (*ev && batch > LANDING_EVENTS && cuEventQuery(*ev) == CUDA_SUCCESS)
		landing_discards_landed(landing, batch - LANDING_EVENTS);
	CUresult recorded = record_event(ev, mig_stream);
	if (recorded != CUDA_SUCCESS)
		atomic_store(&landing_lost, true);
	pthread_mutex_unlock(&landing_lock);
	check(recorded, "recording a batch of discards");
}

/* The ranges of one op being issued on stream, a driver call's worth at a
 * time. */
struct issuing {
	enum engine_op op;
	CUstream stream;
	size_t n, issued; /* in program_room.idle; issued in calls so far */
};

static void issue_range(struct issuing *is, struct engine_range r)
{
	program_room.idle[is->n++] = r;
	if (is->n == CALLS_MAX_RANGES) {
		call_batch(is->op, program_room.idle, is->n, is->stream);
		is->issued += is->n;
		is->n = 0;
	}
}

/* Whether nothing lives in the 2 MB block at address, within [address, end). */
static bool block_idle(arena *a, uint64_t address, uint64_t end)
{
	return a && arena_range_idle(a, address, min_u64(block_end(address), end) - address);
}

/* Issues the discard of the blocks of r nothing lives in: blocks freed
 * together, and so coalesced into one range, may have been handed out
 * again in part while it waited for the free's marker. Each run of blocks
 * in use is a dropped discard. */
static void issue_idle_blocks(struct issuing *is, arena *a, struct engine_range r)
{
	for (uint64_t at = r.address, end = r.address + r.bytes; at < end;) {
		uint64_t from = at;
		bool idle = block_idle(a, at, end);
		do
			at = min_u64(block_end(at), end);
		while (at < end && block_idle(a, at, end) == idle);
		if (idle)
			issue_range(is, (struct engine_range){ from, at - from });
		else
			atomic_fetch_add(&n_dropped_discards, 1);
	}
}

/* Issues the ranges of r nothing lives in (all of them for
 * discard-and-prefetch and prefetch, the fresh allocation the engine
 * named) on stream (the replayer's, or the lane), and orders the program's
 * streams after them. */
static void issue_and_order(enum engine_op op, const struct engine_range *r, size_t n, CUstream stream)
{
	struct issuing is = { op, stream, 0, 0 };
	arena *a = um_alloc_arena();
	for (size_t i = 0; i < n; i++) {
		if (op == ENGINE_OP_DISCARD)
			issue_idle_blocks(&is, a, r[i]);
		else
			issue_range(&is, r[i]);
	}
	if (is.n)
		call_batch(op, program_room.idle, is.n, stream);
	if (!is.issued && !is.n)
		return;
	atomic_fetch_add(&n_discard_waits, 1);
	uint64_t t0 = rp_now();
	/* discard_done follows every discard, the lane's too (join_lane); the
	 * program waits for the stream the batch went on. */
	CUevent after = stream == mig_stream ? discard_done : lane_done;
	CUresult ordered = cuEventRecord(discard_done, mig_stream);
	if (ordered == CUDA_SUCCESS)
		ordered = cuStreamWaitEvent(CU_STREAM_LEGACY, after, 0);
	if (ordered == CUDA_SUCCESS && program_stream() != CU_STREAM_LEGACY)
		ordered = cuStreamWaitEvent(program_stream(), after, 0);
	check(ordered, "ordering a discard");
	/* The program's next work must not run before the discard lands: when
	 * it cannot be made to wait on the GPU, the host waits. */
	if (ordered != CUDA_SUCCESS)
		check(cuStreamSynchronize(stream), "waiting for a discard");
	atomic_fetch_add(&discard_wait_ns, rp_now() - t0);
}

/* A free's marker follows the freeing thread's stream, and a discard
 * orders only the legacy stream and that one after it: once the program
 * queues work on other streams, a kernel there may still read the freed
 * range, or its new owner write it before the discard lands. So no
 * discards then; a discard-and-prefetch is a plain prefetch. The program
 * is held to the one stream until its streams wait for what is issued
 * here: its first call on another one waits for that, and its work is
 * then queued behind it (um_backend_single_stream_hold). */
static void issue_ordered(enum engine_op op, const struct engine_range *r, size_t n, CUstream stream)
{
	bool single = um_backend_single_stream_hold();
	if (op == ENGINE_OP_PREFETCH || single) {
		issue_and_order(op, r, n, stream);
	} else if (op == ENGINE_OP_DISCARD_PREFETCH) {
		atomic_fetch_add(&n_fresh_prefetched, n);
		issue_and_order(ENGINE_OP_PREFETCH, r, n, stream);
	} else {
		atomic_fetch_add(&n_dropped_discards, n);
	}
	um_backend_single_stream_release();
}

/* Issues the pending discards whose markers have completed. */
static void retry_pending(void)
{
	struct engine_range *ready = program_room.ready;
	size_t k = pending_discards_take_ready(pending, mark_done, ready, CALLS_MAX_RANGES);
	if (k)
		issue_ordered(ENGINE_OP_DISCARD, ready, k, mig_stream);
}

/* Under queue_lock. */
static uint64_t count_evictions_issued(void)
{
	return evictions_issued;
}

/* Under queue_lock, for in_flight: whether eviction job `job` has left the
 * GPU. */
static bool eviction_landed(void *unused, uint64_t job)
{
	return job <= evictions_issued && cuEventQuery(evict_ev[job % EVICT_EVENTS]) == CUDA_SUCCESS;
}

/* Whether the lane can take work ahead of the evictions (it and in_flight
 * were made, and every eviction's event was recorded). */
static bool lane_open(void)
{
	return lane && !atomic_load(&evict_events_lost);
}

/* Under queue_lock: in_flight, the evictions that landed dropped. */
static evicting *evictions_out(void)
{
	evicting_drop_landed(in_flight, eviction_landed, NULL);
	return in_flight;
}

/* Whether no discard batch still in flight touches the ranges of r. */
static bool no_discard_landing_in(const struct engine_range *r, size_t n)
{
	bool clear = !atomic_load(&landing_lost);
	pthread_mutex_lock(&landing_lock);
	for (size_t i = 0; clear && i < n; i++) {
		uint64_t batch = landing_discards_wait_for(landing, r[i].address, r[i].bytes);
		clear = !batch || cuEventQuery(landing_ev[batch % LANDING_EVENTS]) == CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&landing_lock);
	return clear;
}

/* A discard-and-prefetch is issued on the program's thread, where the
 * evictions the engine queued before it may still wait for the worker,
 * the flush's own among them: the room it takes is theirs in the engine's
 * model. Issued ahead of them, it would hold its blocks on the GPU beside
 * theirs until they land, past the budget; on a GPU truly full the driver
 * would have to evict in their place. So it follows the ones that make its
 * room (all of them unless it may go on the lane: see the top of the
 * file), and first waits, at most ISSUE_WAIT_NS, for the worker to issue
 * them. The worker's calls mostly return at once (they wait on the GPU for
 * their markers); one made on an idle stream copies inside the call, and
 * the driver holds this thread's next call until it ends anyway
 * (docs/replay.md, "What the driver's calls cost"). Returns the stream to
 * issue it on. */
static CUstream follow_evictions(const struct engine_range *r, size_t n, uint64_t room, bool passed)
{
	bool ahead = passed && lane_open() && no_discard_landing_in(r, n);
	pthread_mutex_lock(&queue_lock);
	uint64_t queued = evictions_queued, follow = queued;
	if (ahead)
		follow = evicting_must_land(evictions_out(), r, n, room);
	bool issued = true;
	if (evictions_issued < follow) {
		uint64_t t0 = rp_now();
		issued = wait_worker(count_evictions_issued, follow);
		atomic_fetch_add(&n_room_waits, 1);
		atomic_fetch_add(&n_room_waits_expired, !issued);
		atomic_fetch_add(&room_wait_ns, rp_now() - t0);
	}
	pthread_mutex_unlock(&queue_lock);
	/* follow == queued: it must follow them all, as on the one stream;
	 * before the first eviction of the run both are 0, and nothing holds
	 * it back. */
	if (!ahead || !issued || (follow && follow == queued))
		return mig_stream;
	if (follow) {
		CUresult waits = cuStreamWaitEvent(lane, evict_ev[follow % EVICT_EVENTS], 0);
		check(waits, "ordering a discard-and-prefetch after the evictions that make its room");
		if (waits != CUDA_SUCCESS)
			return mig_stream;
		atomic_fetch_add(&n_ahead_in_part, 1);
	}
	atomic_fetch_add(&n_ahead, 1);
	return lane;
}

/* A discard of dead blocks copies nothing, and the engine counts its room
 * as made at once (for a discard-and-prefetch beside evictions still on
 * their way out: replay/act.c, room_beside_evictions). On the replayer's
 * stream it would land behind those evictions; it goes on the lane, ahead
 * of them, when none of them touches its blocks: a discard beside a
 * migration of its range still pending or copying is what changed the
 * MLP's losses (top of the file). A prefetch of its blocks still queued
 * can only be stale (nothing dead is prefetched), and brings nothing
 * live. Returns the stream to issue it on. */
static CUstream discard_stream(const struct engine_range *r, size_t n)
{
	if (!lane_open())
		return mig_stream;
	pthread_mutex_lock(&queue_lock);
	bool clear = evicting_must_land(evictions_out(), r, n, UINT64_MAX) == 0;
	pthread_mutex_unlock(&queue_lock);
	if (!clear)
		return mig_stream;
	atomic_fetch_add(&n_discards_ahead, 1);
	return lane;
}

static void discard(enum engine_op op, const struct engine_range *r, size_t n, uint64_t mark, uint64_t room)
{
	bool passed = mark_done(mark);
	CUstream stream = op == ENGINE_OP_DISCARD_PREFETCH ? follow_evictions(r, n, room, passed)
			  : passed                         ? discard_stream(r, n)
							   : mig_stream;
	if (passed) {
		issue_ordered(op, r, n, stream);
		return;
	}
	if (op == ENGINE_OP_DISCARD_PREFETCH) {
		atomic_fetch_add(&n_fresh_prefetched, n);
		wait_mark(mark);
		issue_ordered(ENGINE_OP_PREFETCH, r, n, mig_stream);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!pending_discards_add(pending, mark, r[i]))
			atomic_fetch_add(&n_dropped_discards, 1);
}

static void issue_ops(enum engine_op op, const struct engine_range *ranges, size_t n, uint64_t mark,
		      uint64_t ticket, uint64_t room)
{
	if (!n || ensure_stream() != 0)
		return;
	if (pending_discards_count(pending))
		retry_pending();
	if (op == ENGINE_OP_DISCARD || op == ENGINE_OP_DISCARD_PREFETCH) {
		discard(op, ranges, n, mark, room);
		return;
	}
	struct job *j = malloc(sizeof *j + n * sizeof *ranges);
	if (!j) {
		/* The migration is dropped, as a failed call's is. */
		check(CUDA_ERROR_OUT_OF_MEMORY, "queueing a migration");
		return;
	}
	j->op = op;
	j->wait_mark = mark;
	j->ticket = ticket;
	j->evict_no = 0;
	j->n = n;
	j->ranges = (struct engine_range *)(j + 1);
	memcpy(j->ranges, ranges, n * sizeof *ranges);
	j->next = NULL;
	pthread_mutex_lock(&queue_lock);
	if (!worker_started) {
		pthread_t t;
		worker_started = thread_start_unsignalled(&t, worker, NULL) == 0;
		if (!worker_started) {
			/* Nothing would run the queue: the migration is dropped,
			 * as a failed call's is. */
			pthread_mutex_unlock(&queue_lock);
			free(j);
			check(CUDA_ERROR_OPERATING_SYSTEM, "starting the replayer's migration thread");
			return;
		}
		pthread_detach(t);
	}
	if (queue_tail)
		queue_tail->next = j;
	else
		queue_head = j;
	queue_tail = j;
	if (++queued_jobs > queued_peak)
		queued_peak = queued_jobs;
	if (op == ENGINE_OP_EVICT) {
		evictions_queued++;
		j->evict_no = in_flight ? evicting_queued(in_flight, ranges, n) : 0;
	}
	worker_busy = 1;
	pthread_cond_signal(&queue_cond);
	pthread_mutex_unlock(&queue_lock);
}

/* Marker 0 means nothing to wait for, and ops behind it (a discard of a
 * freed range) go at once: where no marker can be recorded, make that
 * true. A thread with no context current can wait for nothing; there
 * the ops behind marker 0 go unordered, as they must. */
static uint64_t no_mark(void)
{
	CUcontext current = NULL;
	if (cuCtxGetCurrent(&current) == CUDA_SUCCESS && current)
		check(cuCtxSynchronize(), "waiting for the GPU in place of a marker");
	return 0;
}

static uint64_t record_mark(void)
{
	if (ensure_stream() != 0)
		return no_mark();
	if (pending_discards_count(pending))
		retry_pending();
	uint64_t m = next_mark++;
	CUevent *ev = &marks[m % MARKS];
	uint64_t t0 = rp_now();
	CUresult r = record_event(ev, program_stream());
	if (r != CUDA_SUCCESS) {
		check(r, "recording a marker");
		m = no_mark();
	}
	atomic_fetch_add(&mark_ns, rp_now() - t0);
	atomic_fetch_add(&n_marks, 1);
	return m;
}

/* The engine's entry points into the executor, timed. */
static void issue(void *unused, enum engine_op op, const struct engine_range *ranges, size_t n,
		  uint64_t mark, uint64_t ticket, uint64_t room)
{
	uint64_t t0 = rp_now();
	issue_ops(op, ranges, n, mark, ticket, room);
	atomic_fetch_add(&exec_ns, rp_now() - t0);
}

static uint64_t mark(void *unused)
{
	uint64_t t0 = rp_now();
	uint64_t m = record_mark();
	atomic_fetch_add(&exec_ns, rp_now() - t0);
	return m;
}

static uint64_t gate(void *unused, uint64_t ticket, bool wait_issue)
{
	uint64_t t0 = rp_now();
	uint64_t issued = gate_launch(ticket, wait_issue);
	uint64_t took = rp_now() - t0;
	atomic_fetch_add(&gate_ns, took);
	atomic_fetch_add(&exec_ns, took);
	return issued;
}

static uint64_t now(void *unused)
{
	return rp_now();
}

/* Bytes of the evictions not known to have landed (engine.h); 0 where no
 * discard could land ahead of them (discard_stream). */
static uint64_t evicting_out(void *unused)
{
	if (!lane_open())
		return 0;
	uint64_t t0 = rp_now();
	pthread_mutex_lock(&queue_lock);
	uint64_t bytes = evicting_bytes(evictions_out());
	pthread_mutex_unlock(&queue_lock);
	atomic_fetch_add(&exec_ns, rp_now() - t0);
	return bytes;
}

/* Made when the program allocates or frees, so on its thread, outside the
 * launch path: an advice is no stream operation, and it must be in force
 * before the first kernel touches the memory. */
static bool place(void *unused, uint64_t address, uint64_t bytes, bool on_host)
{
	if (ensure_stream())
		return false;
	CUmemLocation host = { CU_MEM_LOCATION_TYPE_HOST, 0 }, gpu = { CU_MEM_LOCATION_TYPE_DEVICE, device };
	CUresult r = cuMemAdvise((CUdeviceptr)address, bytes,
				 on_host ? CU_MEM_ADVISE_SET_PREFERRED_LOCATION : CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
				 host);
	if (r == CUDA_SUCCESS) {
		r = cuMemAdvise((CUdeviceptr)address, bytes,
				on_host ? CU_MEM_ADVISE_SET_ACCESSED_BY : CU_MEM_ADVISE_UNSET_ACCESSED_BY, gpu);
		/* A placement not made is undone: the engine counts the blocks
		 * as GPU memory and its free releases nothing, so a host
		 * preference left here would hold for the range's next
		 * tenants. */
		if (r != CUDA_SUCCESS && on_host)
			cuMemAdvise((CUdeviceptr)address, bytes, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, host);
	}
	check(r, on_host ? "placing an allocation in host memory (cuMemAdvise)"
			 : "releasing an allocation from host memory (cuMemAdvise)");
	return r == CUDA_SUCCESS;
}

const struct engine_executor *rp_exec_get(void)
{
	static const struct engine_executor exec = { NULL, issue, mark, now, place, gate, evicting_out };
	return &exec;
}

void rp_exec_forget_discards(uint64_t address, uint64_t bytes)
{
	pthread_once(&pending_once, create_pending);
	if (pending)
		atomic_fetch_add(&n_dropped_discards, pending_discards_forget(pending, address, bytes));
}

void rp_exec_set_launch_stream(CUstream s)
{
	launch_stream = s;
	launch_stream_gen = atomic_load(&streams_destroyed);
}

void rp_exec_stream_destroyed(void)
{
	atomic_fetch_add(&streams_destroyed, 1);
}

/* By queries of the event recorded after the newest batch that discarded
 * part of the range (after every discard, should the ranges be unknown),
 * never a synchronize, which would break a graph capture under way (after
 * the replayer stopped following the program, one may be), in relaxed
 * capture mode, which lets this thread query an event while another
 * captures. A query that fails is said (check), and the memory is handed
 * out. With limit_ns, for at most that long: returns false if the
 * discards had not landed by then. */
static bool wait_landed(uint64_t address, uint64_t bytes, uint64_t limit_ns)
{
	CUcontext was;
	CUstreamCaptureMode mode;
	CUevent done = atomic_load(&discard_done);
	uint64_t batch = 0;
	if (!done)
		return true;
	pthread_mutex_lock(&landing_lock);
	bool lost = atomic_load(&landing_lost);
	if (!lost && (batch = landing_discards_wait_for(landing, address, bytes)))
		done = landing_ev[batch % LANDING_EVENTS];
	pthread_mutex_unlock(&landing_lock);
	if (!lost && !batch)
		return true;
	bool relaxed = capture_relaxed_begin(&mode), late = false;
	CUresult r = cuCtxPushCurrent(ctx);
	if (r == CUDA_SUCCESS) {
		uint64_t t0 = rp_now();
		/* Yields first, then sleeps: the discards may wait behind the
		 * GPU's work for a while. */
		for (int i = 0; (r = cuEventQuery(done)) == CUDA_ERROR_NOT_READY; i++) {
			if ((late = limit_ns && rp_now() - t0 > limit_ns))
				break;
			if (i < 64)
				sched_yield();
			else
				nanosleep(&(struct timespec){ 0, 50000 }, NULL);
		}
		atomic_fetch_add(&discard_wait_ns, rp_now() - t0);
		cuCtxPopCurrent(&was);
	}
	if (!late)
		check(r, "waiting for a discard");
	capture_relaxed_end(relaxed, mode);
	if (batch && r == CUDA_SUCCESS) {
		pthread_mutex_lock(&landing_lock);
		landing_discards_landed(landing, batch);
		pthread_mutex_unlock(&landing_lock);
	}
	return !late;
}

void rp_exec_wait_discards(uint64_t address, uint64_t bytes)
{
	(void)wait_landed(address, bytes, 0);
}

void rp_exec_wait_issued(void)
{
	pthread_mutex_lock(&queue_lock);
	while (worker_started && (queue_head || worker_busy))
		pthread_cond_wait(&idle_cond, &queue_lock);
	pthread_mutex_unlock(&queue_lock);
}

void rp_exec_drain(void)
{
	rp_exec_wait_issued();
	/* The engine has stopped: nothing retries these any more. */
	if (pending)
		atomic_fetch_add(&n_dropped_discards, pending_discards_clear(pending));
	CUcontext was;
	if (!mig_stream || cuCtxPushCurrent(ctx) != CUDA_SUCCESS)
		return;
	/* In the stream's context, whatever the calling thread had current
	 * (at the exit, perhaps none); a failure the whole context shares
	 * (the program's own fault) is not the replayer's. */
	CUresult r = cuStreamSynchronize(mig_stream);
	if (r != CUDA_SUCCESS && cuCtxSynchronize() == CUDA_SUCCESS)
		check(r, "waiting for the replayer's stream");
	cuCtxPopCurrent(&was);
}

void rp_exec_end(void)
{
	rp_exec_drain();
	mig_stream = NULL;
	lane = NULL;
	discard_done = NULL;
	/* their events go with the context */
	atomic_store(&landing_lost, true);
	atomic_store(&evict_events_lost, true);
}

bool rp_exec_in_current_context(void)
{
	CUcontext current = NULL;
	return mig_stream && cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx;
}

void rp_exec_get_stats(struct rp_exec_stats *out)
{
	out->failed_calls = atomic_load(&n_failed);
	out->marks = atomic_load(&n_marks);
	out->mark_ns = atomic_load(&mark_ns);
	out->discard_wait_ns = atomic_load(&discard_wait_ns);
	out->gate_ns = atomic_load(&gate_ns);
	out->exec_ns = atomic_load(&exec_ns);
	out->dropped_discards = atomic_load(&n_dropped_discards);
	out->fresh_prefetched = atomic_load(&n_fresh_prefetched);
	out->discard_waits = atomic_load(&n_discard_waits);
	out->gate_waits = atomic_load(&n_gate_waits);
	out->gates_unissued = atomic_load(&n_gates_unissued);
	out->issue_waits = atomic_load(&n_issue_waits);
	out->issue_waits_expired = atomic_load(&n_issue_waits_expired);
	out->issue_wait_ns = atomic_load(&issue_wait_ns);
	out->room_waits = atomic_load(&n_room_waits);
	out->room_waits_expired = atomic_load(&n_room_waits_expired);
	out->room_wait_ns = atomic_load(&room_wait_ns);
	out->discard_prefetches_ahead = atomic_load(&n_ahead);
	out->discard_prefetches_ahead_in_part = atomic_load(&n_ahead_in_part);
	out->discards_ahead = atomic_load(&n_discards_ahead);
	pthread_mutex_lock(&queue_lock);
	out->queue_peak = queued_peak;
	pthread_mutex_unlock(&queue_lock);
	for (int k = 0; k < 4; k++) {
		out->kind_calls[k] = atomic_load(&kind_calls[k]);
		out->kind_ns[k] = atomic_load(&kind_ns[k]);
	}
}
