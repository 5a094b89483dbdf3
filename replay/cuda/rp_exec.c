/*
 * rp_exec.c: the engine's executor on CUDA.
 *
 * Markers are CUDA events recorded on the program's stream right after a
 * launch (a ring of events, reused; an op whose marker's event was
 * recorded again since does not wait, see wait_mark). Ops go on the
 * replayer's own non-blocking stream, behind the marker they name.
 *
 * A worker thread makes every driver call, so the program's thread never
 * waits for the driver: a call made while another is copying waits for that
 * copy (docs/replay.md, "What the driver's calls cost"), and in the
 * launch callbacks those waits were most of the program's lost time
 * (ResNet-152 and GPT-2 at W/B 2, where discard-and-prefetch calls on the
 * program's thread took 0.3 ms each).
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
 *  - a discard-and-prefetch of a fresh allocation whose marker has not
 *    completed is dropped (the allocation then faults in on first use);
 *  - the program's streams are made to wait for every discard: each batch
 *    of discards gets a ticket, the program's streams wait until a word
 *    reaches it (cuStreamWaitValue32, queued at once by the program's
 *    thread), and the worker, which takes discards before any queued
 *    migration, has the replayer's stream write the ticket after the
 *    calls; so whatever the program does next to the range comes after;
 *  - discards go on the one stream, behind the migrations queued before
 *    them: on a stream of their own, where a discard could run while an
 *    earlier migration of its range was pending or copying, the PyTorch
 *    MLP's losses changed under deepum in 3 of 6 runs on the H100 (0 of 6
 *    on the one stream; docs/replay.md, "What discard may touch"). They
 *    are issued ahead of migrations still in the worker's queue, as they
 *    were when the program's thread made them.
 * Discards move no data, so none of this costs a copy.
 *
 * The engine calls issue() and mark() with its lock held: the executor's
 * own state needs no lock except the worker queue and the marker ring.
 * The program's streams wait for the worker now (the tickets), so the
 * worker must never wait for a lock that a thread waiting on the GPU may
 * hold, nor make the replayer's stream wait for work queued behind a
 * ticket wait.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

#include "common/cuda/um_alloc.h"
#include "log.h"
#include "replay/calls.h"
#include "replay/pending_discards.h"
#include "rp.h"
#include "size.h"

#define MARKS 4096        /* marker events in the ring */

static CUcontext ctx;
static CUstream mig_stream;
static CUdevice device;
static CUevent marks[MARKS];
static uint64_t next_mark = 1;
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER; /* marks[] against the worker */
/* The discard tickets: a word in pinned host memory that the replayer's
 * stream sets to the last ticket done, and the last ticket handed out.
 * Tickets wrap; the waits compare them as signed differences. */
static uint32_t *ticket_word;
static CUdeviceptr ticket_dev;
static uint32_t last_ticket;
static __thread CUstream launch_stream;

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
static atomic_uint_fast64_t n_calls, n_failed, n_marks, n_discard_waits;
static atomic_uint_fast64_t kind_calls[4], kind_ns[4]; /* by enum engine_op */
static atomic_int failures_warned;

/* Work for the worker: migrations behind a marker, or discards with the
 * ticket to write after them. Its driver calls are cut when it is queued,
 * so that the worker never takes the arena's lock (calls.h needs the
 * arena's mappings): a thread holding that lock may be waiting for a fence
 * on the program's stream, the stream for a discard ticket, and the ticket
 * for the worker. */
struct job {
	enum engine_op op;
	uint64_t wait_mark;
	uint32_t ticket;
	size_t n_calls;
	uint32_t *call_ranges;        /* ranges in each call */
	struct engine_range *ranges;  /* every call's, one after another */
	struct job *next;
};
struct queue {
	struct job *head, *tail;
};
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static struct queue migrations, discards; /* the worker takes discards first */
static int worker_busy;

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

static bool create_ticket_word(void)
{
	void *host;
	if (cuMemHostAlloc(&host, sizeof *ticket_word, CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS)
		return false;
	if (cuMemHostGetDevicePointer(&ticket_dev, host, 0) != CUDA_SUCCESS) {
		cuMemFreeHost(host);
		return false;
	}
	ticket_word = host;
	*ticket_word = 0;
	return true;
}

static void *worker(void *arg);

/* Sets the executor up on first use, from a launch callback (where the
 * program's context is current): the pending list, the stream, the ticket
 * word and the worker. Without all of them no op is made. Returns 0 when
 * it is up. */
static int ensure_started(void)
{
	static int state; /* 0: not tried; 1: up; -1: failed */
	if (state)
		return state > 0 ? 0 : -1;
	state = -1;
	pthread_t t;
	if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx || cuCtxGetDevice(&device) != CUDA_SUCCESS)
		return -1;
	pthread_once(&pending_once, create_pending);
	CUresult r = cuStreamCreate(&mig_stream, CU_STREAM_NON_BLOCKING);
	if (!pending || r != CUDA_SUCCESS || !create_ticket_word() ||
	    pthread_create(&t, NULL, worker, NULL) != 0) {
		um_warn("cannot set up the replayer's stream, ticket word or worker thread; "
			"the program runs without the replayer's ops");
		return -1;
	}
	pthread_detach(t);
	state = 1;
	return 0;
}

static const char *op_name(enum engine_op op)
{
	static const char *names[] = { "prefetch", "evict", "discard", "discard+prefetch" };
	return names[op];
}

static void wait_mark(uint64_t mark)
{
	pthread_mutex_lock(&ring_lock);
	/* A slot recorded again since may follow a discard ticket that the
	 * program's stream waits for, which only this worker writes: waiting
	 * for it could deadlock. A migration made early only costs time. */
	if (mark && next_mark - mark <= MARKS)
		check(cuStreamWaitEvent(mig_stream, marks[mark % MARKS], 0), "waiting for a marker");
	pthread_mutex_unlock(&ring_lock);
}

/* One batch call for up to CALLS_MAX_RANGES ranges; an NVTX range makes it
 * show in Nsight Systems. */
static void call(enum engine_op op, const struct engine_range *r, size_t n)
{
	CUdeviceptr ptrs[CALLS_MAX_RANGES];
	size_t sizes[CALLS_MAX_RANGES], loc_idx = 0, bytes = 0;
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
	switch (op) {
	case ENGINE_OP_EVICT:
		loc.type = CU_MEM_LOCATION_TYPE_HOST;
		loc.id = 0;
		/* fall through */
	case ENGINE_OP_PREFETCH:
		check(cuMemPrefetchBatchAsync(ptrs, sizes, n, &loc, &loc_idx, 1, 0, mig_stream),
		      op == ENGINE_OP_EVICT ? "cuMemPrefetchBatchAsync (evict)" : "cuMemPrefetchBatchAsync");
		break;
	case ENGINE_OP_DISCARD:
		check(cuMemDiscardBatchAsync(ptrs, sizes, n, 0, mig_stream), "cuMemDiscardBatchAsync");
		break;
	case ENGINE_OP_DISCARD_PREFETCH:
		check(cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, n, &loc, &loc_idx, 1, 0, mig_stream),
		      "cuMemDiscardAndPrefetchBatchAsync");
		break;
	}
	atomic_fetch_add(&kind_ns[op], rp_now() - t0);
	atomic_fetch_add(&kind_calls[op], 1);
	nvtxRangePop();
	atomic_fetch_add(&n_calls, 1);
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

/* The calls of the job being cut. Only the thread holding the engine's
 * lock cuts, so one buffer serves. */
static struct {
	struct engine_range *ranges;
	uint32_t *call_ranges;
	size_t n, cap, n_calls, cap_calls;
	bool failed;
} cut;

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

static void emit(void *unused, const struct engine_range *r, size_t n)
{
	if (!grow((void **)&cut.ranges, &cut.cap, cut.n + n, sizeof *r) ||
	    !grow((void **)&cut.call_ranges, &cut.cap_calls, cut.n_calls + 1, sizeof *cut.call_ranges)) {
		cut.failed = true;
		return;
	}
	memcpy(cut.ranges + cut.n, r, n * sizeof *r);
	cut.n += n;
	cut.call_ranges[cut.n_calls++] = (uint32_t)n;
}

/* A job for op on the ranges, cut into calls (calls.h); NULL when out of
 * memory. */
static struct job *new_job(enum engine_op op, uint64_t mark, const struct engine_range *r, size_t n)
{
	struct calls_target t = { NULL, mapped_extent, emit };
	cut.n = cut.n_calls = 0;
	cut.failed = false;
	calls_split(r, n, call_bytes(op), &t);
	if (cut.failed)
		return NULL;
	size_t ranges = cut.n * sizeof *cut.ranges, calls = cut.n_calls * sizeof *cut.call_ranges;
	struct job *j = malloc(sizeof *j + ranges + calls);
	if (!j)
		return NULL;
	*j = (struct job){ op, mark, 0, cut.n_calls, NULL, (struct engine_range *)(j + 1), NULL };
	j->call_ranges = (uint32_t *)((char *)j->ranges + ranges);
	memcpy(j->ranges, cut.ranges, ranges);
	memcpy(j->call_ranges, cut.call_ranges, calls);
	return j;
}

/* Makes the job's calls. */
static void run_job(const struct job *j)
{
	const struct engine_range *r = j->ranges;
	for (size_t i = 0; i < j->n_calls; r += j->call_ranges[i++])
		call(j->op, r, j->call_ranges[i]);
}

/* Queues j for the worker. */
static void enqueue(struct queue *q, struct job *j)
{
	pthread_mutex_lock(&queue_lock);
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	worker_busy = 1;
	pthread_cond_signal(&queue_cond);
	pthread_mutex_unlock(&queue_lock);
}

/* Makes every queued discard, in order, then lets the program's streams go
 * on past their tickets. */
static void run_discards(struct job *j)
{
	uint32_t ticket = 0;
	while (j) {
		struct job *next = j->next;
		run_job(j);
		ticket = j->ticket;
		free(j);
		j = next;
	}
	CUresult r = cuStreamWriteValue32(mig_stream, ticket_dev, ticket, CU_STREAM_WRITE_VALUE_DEFAULT);
	check(r, "releasing the program's streams after discards");
	if (r != CUDA_SUCCESS) {
		/* The program's streams must not wait forever: release them
		 * from here once the discards are done. */
		cuStreamSynchronize(mig_stream);
		__atomic_store_n(ticket_word, ticket, __ATOMIC_RELEASE);
	}
}

static void *worker(void *arg)
{
	cuCtxSetCurrent(ctx);
	pthread_mutex_lock(&queue_lock);
	for (;;) {
		while (!discards.head && !migrations.head) {
			worker_busy = 0;
			pthread_cond_broadcast(&idle_cond);
			pthread_cond_wait(&queue_cond, &queue_lock);
		}
		worker_busy = 1;
		struct job *j = discards.head;
		if (j) {
			discards = (struct queue){ NULL, NULL };
			pthread_mutex_unlock(&queue_lock);
			run_discards(j);
		} else {
			j = migrations.head;
			migrations.head = j->next;
			if (!migrations.head)
				migrations.tail = NULL;
			pthread_mutex_unlock(&queue_lock);
			wait_mark(j->wait_mark);
			run_job(j);
			free(j);
		}
		pthread_mutex_lock(&queue_lock);
	}
	return NULL;
}

static atomic_uint_fast64_t n_dropped_discards;

static bool mark_done(uint64_t mark)
{
	return !mark || cuEventQuery(marks[mark % MARKS]) == CUDA_SUCCESS;
}

/* Makes stream s wait until the word reaches ticket; false if it cannot. */
static bool wait_ticket(CUstream s, uint32_t ticket)
{
	CUresult r = cuStreamWaitValue32(s, ticket_dev, ticket, CU_STREAM_WAIT_VALUE_GEQ);
	check(r, "ordering the program's stream after a discard");
	return r == CUDA_SUCCESS;
}

/* Hands the worker discards of the ranges nothing lives in (or, for
 * discard-and-prefetch, of the fresh allocation the engine named), and
 * orders the program's streams after them. */
static void discard_now(enum engine_op op, const struct engine_range *r, size_t n)
{
	static struct engine_range *idle;
	static size_t cap_idle;
	arena *a = um_alloc_arena();
	size_t k = 0;
	if (!grow((void **)&idle, &cap_idle, n, sizeof *idle)) {
		atomic_fetch_add(&n_dropped_discards, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (op == ENGINE_OP_DISCARD && (!a || !arena_range_idle(a, r[i].address, r[i].bytes)))
			atomic_fetch_add(&n_dropped_discards, 1);
		else
			idle[k++] = r[i];
	}
	struct job *j = k ? new_job(op, 0, idle, k) : NULL;
	if (!j) {
		if (k)
			atomic_fetch_add(&n_dropped_discards, k);
		return;
	}
	j->ticket = ++last_ticket;
	/* Unordered, a discard could destroy what the program writes next:
	 * if a stream cannot be made to wait, only the ticket is written. */
	if (!wait_ticket(CU_STREAM_LEGACY, j->ticket) ||
	    (launch_stream && launch_stream != CU_STREAM_LEGACY && !wait_ticket(launch_stream, j->ticket))) {
		atomic_fetch_add(&n_dropped_discards, k);
		j->n_calls = 0;
	}
	enqueue(&discards, j);
	atomic_fetch_add(&n_discard_waits, 1);
}

/* Issues the pending discards whose markers have completed. */
static void retry_pending(void)
{
	struct engine_range ready[CALLS_MAX_RANGES];
	size_t k = pending_discards_take_ready(pending, mark_done, ready, CALLS_MAX_RANGES);
	if (k)
		discard_now(ENGINE_OP_DISCARD, ready, k);
}

static void discard(enum engine_op op, const struct engine_range *r, size_t n, uint64_t mark)
{
	if (mark_done(mark)) {
		discard_now(op, r, n);
		return;
	}
	if (op == ENGINE_OP_DISCARD_PREFETCH) {
		atomic_fetch_add(&n_dropped_discards, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!pending_discards_add(pending, mark, r[i]))
			atomic_fetch_add(&n_dropped_discards, 1);
}

static void issue(void *unused, enum engine_op op, const struct engine_range *ranges, size_t n,
		  uint64_t mark)
{
	if (!n || ensure_started() != 0)
		return;
	if (pending_discards_count(pending))
		retry_pending();
	if (op == ENGINE_OP_DISCARD || op == ENGINE_OP_DISCARD_PREFETCH) {
		discard(op, ranges, n, mark);
		return;
	}
	struct job *j = new_job(op, mark, ranges, n);
	if (j)
		enqueue(&migrations, j);
}

static uint64_t mark(void *unused)
{
	if (ensure_started() != 0)
		return 0;
	if (pending_discards_count(pending))
		retry_pending();
	pthread_mutex_lock(&ring_lock);
	uint64_t m = next_mark;
	CUevent *ev = &marks[m % MARKS];
	if (!*ev && cuEventCreate(ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
		pthread_mutex_unlock(&ring_lock);
		return 0;
	}
	next_mark++;
	check(cuEventRecord(*ev, launch_stream ? launch_stream : CU_STREAM_LEGACY), "recording a marker");
	pthread_mutex_unlock(&ring_lock);
	atomic_fetch_add(&n_marks, 1);
	return m;
}

static uint64_t now(void *unused)
{
	return rp_now();
}

const struct engine_executor *rp_exec_get(void)
{
	static const struct engine_executor exec = { NULL, issue, mark, now };
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
}

void rp_exec_drain(void)
{
	pthread_mutex_lock(&queue_lock);
	while (discards.head || migrations.head || worker_busy)
		pthread_cond_wait(&idle_cond, &queue_lock);
	pthread_mutex_unlock(&queue_lock);
	if (mig_stream)
		cuStreamSynchronize(mig_stream);
}

void rp_exec_get_stats(struct rp_exec_stats *out)
{
	out->calls = atomic_load(&n_calls);
	out->failed_calls = atomic_load(&n_failed);
	out->marks = atomic_load(&n_marks);
	out->dropped_discards = atomic_load(&n_dropped_discards);
	out->discard_waits = atomic_load(&n_discard_waits);
	for (int k = 0; k < 4; k++) {
		out->kind_calls[k] = atomic_load(&kind_calls[k]);
		out->kind_ns[k] = atomic_load(&kind_ns[k]);
	}
}
