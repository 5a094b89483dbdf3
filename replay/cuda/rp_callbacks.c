/*
 * rp_callbacks.c: what the replayer learns on the program's threads —
 * kernel launches (execution ID and the allocations the arguments touch)
 * and allocations — handed to the engine; and the device memory in use,
 * sampled from the first launch or allocation on, for the measured peak
 * residency.
 *
 * While the engine is idle (engine_follows_launches), the replayer is the
 * program's allocator and nothing more. It does not attach to CUPTI, whose
 * launch callbacks cost the program 0.2-0.8 µs a launch even when they
 * return at once, and whose mere attachment is work an idle replay does
 * not need (docs/benchmarks.md, "An idle replay's cost per launch"; even
 * a subscription to the graph calls alone slowed launches: docs/replay.md,
 * "CUDA graphs").
 * Without launches the arena's fences cannot name the streams
 * that may still use freed memory, so a free synchronizes the context as
 * cudaFree does (um_backend_launches_unseen). The allocation that ends
 * idleness attaches: launch and write callbacks, the activity records, and
 * from the next launch the Unified Memory counters; one that may be inside
 * a CUDA graph capture leaves that to a later one (rp_callbacks_may_wake).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#include "common/cuda/capture.h"
#include "common/cuda/cbids.h"
#include "common/cuda/cupti_guard.h"
#include "common/cuda/cupti_um.h"
#include "common/cuda/driver_allocs.h"
#include "common/cuda/launch_info.h"
#include "common/cuda/stream_calls.h"
#include "common/cuda/um_alloc.h"
#include "common/cuda/um_backend.h"
#include "common/cuda/write_calls.h"
#include "log.h"
#include "rp.h"
#include "thread_scratch.h"
#include "trace_schema.h"

static atomic_uint_fast64_t callback_ns;
static atomic_uint_fast64_t other_context_launches; /* not followed: on_launch */
static CUpti_SubscriberHandle subscriber;
static bool kernel_times;
/* The engine's engine_follows_launches, negated and mirrored here so that
 * an allocation reads it without the engine's lock; it only ever turns
 * false, under waking. */
static atomic_bool idle;
static pthread_mutex_t waking = PTHREAD_MUTEX_INITIALIZER;
static bool attached; /* written before the first callback, or under waking */
static bool closed;   /* rp_callbacks_stop ran; under waking */
static pthread_mutex_t ends_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rp_iteration_end iteration_ends[RP_MAX_ITERATIONS];
static size_t n_iteration_ends;
static uint64_t seen_iterations;
static atomic_int mismatch_warned;
/* Why the engine follows the program no more: 0 while it does. */
enum { STOPPED_AT_GRAPH = 1, STOPPED_AT_RESET };
static atomic_int stopped;

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
 * counters; taken after the launch that starts the next iteration, so that
 * launch counts in the iteration it completes, as dryrun.h says) and warn
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
		if (n_iteration_ends == RP_MAX_ITERATIONS)
			continue;
		iteration_ends[n_iteration_ends++] = (struct rp_iteration_end){
			.ns = rp_now(), .callback_ns = atomic_load(&callback_ns),
			.allocator_ns = as.ns, .resynced = st.resynced, .lost = st.lost,
			.refault_blocks = st.refault_blocks, .unissued_blocks = st.unissued_blocks,
			.unread_evicted_blocks = st.unread_evicted_blocks };
		if (n_iteration_ends == RP_MAX_ITERATIONS)
			rp_activity_keep_until(iteration_ends[n_iteration_ends - 1].ns);
	}
	pthread_mutex_unlock(&ends_lock);
	if (st.signature_mismatch && atomic_exchange(&mismatch_warned, 1) == 0)
		um_warn("%s was made for another program (its kernels or allocations differ); "
			"running without it: re-record and re-plan this program",
			rp_plan_path ? rp_plan_path : "the plan");
}

/* What a graph runs no launch callback shows, so from the program's first
 * capture or graph launch the plan cannot be followed: the engine takes no
 * launch, write, allocation or free from here on (engine_stop, which waits
 * for the calls already in it), and the worker's queue is issued before
 * the program goes on, so that none of the replayer's driver calls is made
 * while a capture is under way (a capture in CUDA's default, global mode
 * refuses other threads' unsafe calls). The arena's stream notes go on,
 * for its fences. A thread that calls it while another is stopping waits
 * until the stop is done. */
static void stop_now(void)
{
	int following = 0;
	if (!atomic_compare_exchange_strong(&stopped, &following, STOPPED_AT_GRAPH))
		return; /* at the device's reset, which issued the worker's queue */
	engine_stop(rp_engine);
	rp_exec_wait_issued();
	um_warn("the program uses CUDA graphs, whose kernels no launch callback shows: from here on the "
		"replayer follows it no more (no migrations, no budget kept; docs/replay.md, \"CUDA graphs\")%s",
		capture_pytorch_cannot_capture()
			? "; PyTorch cannot capture a graph with its caching allocator off "
			  "(PYTORCH_NO_CUDA_MEMORY_CACHING=1): leave the variable unset with a plan of a trace "
			  "recorded by umrec --framework-cache, or set it to 0"
			: "");
}

static void stop_following(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, stop_now);
}

/* What every launch does at its entry: the Unified Memory counters (refused
 * before the first launch) and the residency sampling start. */
static void note_launch(void)
{
	rp_residency_start();
	cupti_um_enable(NULL);
}

/* What following a launch needs besides its stack, 37 KiB: the launch
 * decoded and its accesses for the engine, in a buffer of the launching
 * thread's (common/thread_scratch.h). One launch at a time uses it: the
 * callback launches no kernel of its own. */
struct launch_buffers {
	struct launch_info li;
	struct engine_access acc[PARAM_MAX_POINTERS];
};
static struct thread_scratch launch_scratch = THREAD_SCRATCH_INIT(sizeof(struct launch_buffers));

/* captured: the launch's work goes into a CUDA graph (stream_call_note). */
static void on_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, bool captured)
{
	/* At exit only the marker is left to record, on the stream the entry
	 * noted: nothing to decode. */
	if (cb->callbackSite != CUPTI_API_ENTER) {
		engine_after_launch(rp_engine);
		return;
	}
	/* Another context's launch (another GPU's, say) is not in the plan, which
	 * umplan made of the arena's context's kernels alone. The context is
	 * the current one, which is the launch's own but for a CUkernel the
	 * driver API launches on a stream of another context (docs/design.md,
	 * "Known limits"): following such a launch would issue the engine's
	 * calls in the wrong context. */
	CUcontext arena_context = um_alloc_context();
	if (arena_context && cb->context != arena_context) {
		atomic_fetch_add(&other_context_launches, 1);
		return;
	}
	if (kernel_times)
		rp_activity_note_launch(cb->correlationId);
	struct launch_buffers *s = thread_scratch_get(&launch_scratch);
	if (!s || !launch_decode(cbid, cb, um_alloc_arena(), um_alloc_foreign(), &s->li))
		return;
	/* A replay that woke from idle may have missed a capture's start. */
	if (captured) {
		stop_following();
		return;
	}
	const struct launch_info *li = &s->li;
	rp_exec_set_launch_stream(li->stream);
	note_launch();
	for (uint32_t i = 0; i < li->nargs; i++)
		s->acc[i].alloc_id = li->args[i].alloc.id;
	if (engine_on_launch(rp_engine, li->exec_id, li->shape_id, s->acc, li->nargs))
		after_engine();
}

/* A call that writes device memory other than through a kernel
 * (write_calls.h): the allocation it writes is no longer fresh. After one
 * that may write where the engine cannot tell, none is. (A graph ends the
 * following: stop_following.) */
static void on_write(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	CUdeviceptr dst;
	uint64_t id;
	if (cb->callbackSite != CUPTI_API_ENTER)
		return;
	enum write_dst where = write_call_dst(cbid, cb->functionParams, &dst);
	if (where == WRITE_UNKNOWN)
		engine_on_unknown_write(rp_engine);
	else if (where == WRITE_AT && (id = write_dst_alloc(dst)))
		engine_on_write(rp_engine, id);
}

bool rp_callbacks_stopped_at_graph(void)
{
	return atomic_load(&stopped) == STOPPED_AT_GRAPH;
}

bool rp_callbacks_stopped_at_reset(void)
{
	return atomic_load(&stopped) == STOPPED_AT_RESET;
}

uint64_t rp_callbacks_other_context_launches(void)
{
	return atomic_load(&other_context_launches);
}

uint64_t rp_callback_ns(void)
{
	return atomic_load(&callback_ns);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	if (!atomic_load(&rp_active))
		return;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		if (cbid == CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING) {
			um_backend_stream_destroyed(((const CUpti_ResourceData *)data)->resourceHandle.stream);
			rp_exec_stream_destroyed();
		}
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API || rp_exec_own_call())
		return;
	bool launch = launch_is_kernel_cbid(cbid);
	if (!launch && driver_allocs_cbid(cbid)) {
		driver_allocs_note(cbid, data);
		return;
	}
	if (graph_cbid(cbid)) {
		capture_note(cbid, data);
		if (((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_ENTER)
			stop_following();
	}
	if (atomic_load(&stopped)) {
		stream_call_note(cbid, data);
		return;
	}
	if (!launch) {
		stream_call_note(cbid, data);
		on_write(cbid, data);
		return;
	}
	uint64_t t0 = rp_now();
	bool captured = stream_call_note(cbid, data);
	on_launch(cbid, data, captured);
	atomic_fetch_add(&callback_ns, rp_now() - t0);
}

static void on_free(const struct arena_alloc *a)
{
	if (atomic_load(&rp_active))
		engine_on_free(rp_engine, a->id); /* nothing once stopped: engine_stop */
}

/* The program resets the device, which destroys the memory the engine
 * models (arena_lost) or the replayer's stream and events if they live in
 * the context being reset: the following ends, as at a graph, and what
 * the worker queued is issued and finished before the reset; none of the
 * replayer's driver calls is made after it (rp_exec_end). What the
 * counters saw so far is handed over while the context lives, and the
 * measured residency ends there: both are the replay's. A reset that
 * destroys neither (before the program's first allocation and the
 * replayer's first op, a clean start) loses nothing: it goes on. */
static void on_device_reset(bool arena_lost)
{
	if (!atomic_load(&rp_active) || (!arena_lost && !rp_exec_in_current_context()))
		return;
	int following = 0;
	if (atomic_compare_exchange_strong(&stopped, &following, STOPPED_AT_RESET))
		um_info("the program resets the device (cudaDeviceReset): from here on the replayer follows it no more");
	/* Whoever set stopped: a stop at a graph on another thread may not
	 * have stopped the engine yet, and no thread may be in it when the
	 * stream goes. */
	engine_stop(rp_engine);
	rp_exec_end();
	rp_activity_hand_over();
	rp_residency_stop();
}

/* Subscribes to the launches and writes the engine follows, and starts the
 * activity records; on failure nothing stays subscribed. */
static CUptiResult attach(void)
{
	CUptiResult r = cupti_real()->Subscribe(&subscriber, on_callback, NULL);
	if (r != CUPTI_SUCCESS)
		return r;
	r = cbids_enable(subscriber, launch_cbids, (size_t)launch_ncbids);
	if (r == CUPTI_SUCCESS)
		r = write_calls_enable(subscriber);
	if (r == CUPTI_SUCCESS)
		r = cbids_enable(subscriber, stream_call_cbids, (size_t)stream_call_ncbids);
	if (r == CUPTI_SUCCESS)
		r = cbids_enable(subscriber, graph_cbids, (size_t)graph_ncbids);
	if (r == CUPTI_SUCCESS)
		r = driver_allocs_enable(subscriber, "the replay neither moves it nor counts it in the budget");
	if (r == CUPTI_SUCCESS)
		r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
					CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING);
	if (r == CUPTI_SUCCESS)
		r = rp_activity_start(kernel_times);
	if (r == CUPTI_SUCCESS)
		attached = true;
	else
		cupti_real()->Unsubscribe(subscriber);
	return r;
}

/* The engine stopped being idle: attach, so that launches take the full
 * path from now on. Launches from here are seen, and the next fence's
 * synchronize finishes those before (um_backend_launches_seen). */
static void follow_launches(void)
{
	pthread_mutex_lock(&waking);
	if (atomic_load(&idle) && !closed) {
		atomic_store(&idle, false);
		capture_watch(); /* a capture may have begun unseen: asked from the first callback */
		CUptiResult r = attach();
		if (r == CUPTI_SUCCESS) {
			um_backend_launches_seen(false);
			um_info("the program's memory outgrew the budget the plan fits in: following its kernel launches from now on");
		} else {
			const char *msg = "?";
			cuptiGetResultString(r, &msg);
			um_warn("the program's memory outgrew the budget the plan fits in, but CUPTI is unavailable (%s): "
				"its kernels are not followed and the budget is not kept", msg);
		}
	}
	pthread_mutex_unlock(&waking);
}

/* Waking inside a CUDA graph capture broke the capture on the H100 in
 * session 43, most likely through the fences' query of a stream first seen
 * inside the capture (um_backend_stream_queued, which no longer asks
 * there); waking on the capturing thread was not tried again since. An
 * allocation made outside CUDA's default, global capture mode may come
 * from inside one (capture_mode_global), so it does not wake the engine: a
 * later one does. Said once. */
bool rp_callbacks_may_wake(void)
{
	static atomic_int told;
	if (capture_mode_global())
		return true;
	if (!atomic_exchange(&told, 1))
		um_info("the program's memory outgrew the budget the plan fits in, in an allocation that may "
			"be inside a CUDA graph capture: following its launches from a later allocation");
	return false;
}

static void on_alloc(const struct arena_alloc *a, const char *api, CUstream stream)
{
	/* The program's own managed memory, which the host may write as soon
	 * as the program has it, in no stream's order, waits on the host for
	 * the discards in flight (below). So it does past the exit's stop
	 * (rp_inject.c's finish), where the discards issued before it land
	 * only by its drain. */
	bool host_writes = strcmp(api, TRACE_API_MANAGED) == 0;
	if (!atomic_load(&rp_active)) {
		if (host_writes)
			rp_exec_wait_discards(a->address, a->reserved);
		return;
	}
	bool was_stopped = atomic_load(&stopped) != 0;
	if (!was_stopped) {
		rp_residency_start();
		rp_check_device_fits();
	}
	/* The engine first: once it knows the range is live it queues no more
	 * discards of it, so none can be added after the forgetting. Also once
	 * stopped (it then adds nothing): its lock holds this allocation until
	 * a discard of the range that another thread is issuing has the
	 * program's streams wait for it (issue_ordered runs under that lock). */
	bool follows = host_writes ? engine_on_managed_alloc(rp_engine, a->id, a->address, a->size)
				   : engine_on_alloc(rp_engine, a->id, a->address, a->size);
	rp_exec_forget_discards(a->address, a->size);
	if (host_writes)
		rp_exec_wait_discards(a->address, a->reserved);
	if (was_stopped)
		return;
	/* Another thread's allocation may have woken the engine while this
	 * one is inside a capture: that thread attaches. */
	if (follows && atomic_load(&idle) && capture_mode_global())
		follow_launches();
}

CUptiResult rp_callbacks_start(bool with_kernel_times)
{
	static const struct um_alloc_hooks hooks = { on_alloc, on_free, on_device_reset };
	kernel_times = with_kernel_times;
	atomic_store(&idle, !engine_follows_launches(rp_engine));
	CUptiResult r = CUPTI_SUCCESS;
	if (!atomic_load(&idle) && (r = attach()) == CUPTI_SUCCESS)
		um_backend_launches_seen(true);
	if (r == CUPTI_SUCCESS)
		um_alloc_set_hooks(&hooks);
	return r;
}

void rp_callbacks_stop(void)
{
	pthread_mutex_lock(&waking);
	if (attached) {
		cupti_real()->Unsubscribe(subscriber);
		/* Again (rp_inject.c's finish made it before): a wake that
		 * raced the exit, from an allocation past its rp_active
		 * check, marked launches seen since. */
		um_backend_launches_unseen();
	}
	attached = false;
	closed = true; /* an allocation already past its check must not attach again */
	pthread_mutex_unlock(&waking);
}
