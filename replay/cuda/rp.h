/*
 * rp.h: state shared by the replayer's pieces inside libumreplay.so.
 *
 *   rp_inject.c     InitializeInjection: settings, the plan, the engine,
 *                   CUPTI set-up; the exit path (summary line, --stats)
 *   rp_callbacks.c  kernel launches and allocations -> the engine
 *   rp_residency.c  the measured peak residency, sampled by a thread
 *   rp_exec.c       the engine's executor: the replayer's own stream,
 *                   markers (CUDA events) and the batch migration calls:
 *                   prefetches and evictions from a worker thread, so the
 *                   program never waits for them; discards on the
 *                   program's thread, its streams then ordered after them
 *   rp_activity.c   what the Unified Memory counters say actually moved
 */
#ifndef UMKIT_RP_H
#define UMKIT_RP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>
#include <cupti.h>

#include "replay/engine.h"

/* The engine; NULL when this process does not replay (then callbacks and
 * hooks do nothing). */
extern engine *rp_engine;
extern atomic_bool rp_active;
/* The plan's path as umreplay gave it (UMKIT_PLAN); NULL without a plan. */
extern char *rp_plan_path;

uint64_t rp_now(void);

/* The executor (rp_exec.c). Its stream is made at its first call, in the
 * calling thread's context. */
const struct engine_executor *rp_exec_get(void);
/* The stream of the launch the calling thread is making (for markers). */
void rp_exec_set_launch_stream(CUstream s);
/* A stream is being destroyed: every thread's launch stream is forgotten
 * (its markers go to the legacy stream until its next launch). */
void rp_exec_stream_destroyed(void);
/* Whether the calling thread is inside the replayer's own migration call
 * (its batched prefetch, evict or discard): the callbacks of that call
 * are not the program's, and its stream is outside the arena's fences
 * (docs/design.md, "Freed memory and the GPU"). */
bool rp_exec_own_call(void);
/* The range has a new owner: discards of its 2 MB blocks still waiting
 * for its previous owner's marker are not made. */
void rp_exec_forget_discards(uint64_t address, uint64_t bytes);
/* Waits until the discards issued so far onto [address, address + bytes)
 * have landed (replay/landing_discards.h), as the program's own managed
 * memory needs before the program has it: the host may write it at once,
 * in no stream's order, where a discard of an earlier owner issued (onto a
 * range then free) but still queued would drop what it wrote. Call after
 * the engine has the allocation: its lock, which issuing a discard holds,
 * has been taken since, so none is half issued. Also after the replayer
 * stopped following the program (it issues none then, but some may still
 * be in flight); after rp_exec_end, which waited for them all, it does
 * nothing. */
void rp_exec_wait_discards(uint64_t address, uint64_t bytes);
/* Waits until the worker has issued every queued op (no driver call of
 * the replayer's is made after it unless the engine queues more). */
void rp_exec_wait_issued(void);
/* Waits until every queued op has been issued and has finished; the
 * discards still waiting for their markers are dropped, counted in
 * dropped_discards. Call once the engine has stopped (it issues no more). */
void rp_exec_drain(void);
/* Drains, then forgets the stream, which the device reset about to come
 * destroys: no driver call of the executor's is made after it (the
 * engine, stopped, queues no more). */
void rp_exec_end(void);
/* Whether the executor has made its stream (and so its events) in the
 * calling thread's current context. */
bool rp_exec_in_current_context(void);
struct rp_exec_stats {
	uint64_t failed_calls;     /* driver calls that failed (check: the
				      first is warned of) */
	uint64_t marks;
	uint64_t dropped_discards; /* runs of 2 MB blocks of a discard not
				      made: reused, or in use again when
				      their marker completed, or no room
				      to wait, or still waiting at the
				      drain (docs/replay.md, Stats JSON) */
	uint64_t fresh_prefetched; /* discard-and-prefetch ranges made a plain
				      prefetch: their blocks' latest free
				      was still in the GPU's queue */
	uint64_t discard_waits;    /* times the program's stream was ordered
				      after the replayer's discards (or the
				      prefetches that stand in for them) */
	uint64_t gate_waits;       /* launches ordered after a prefetch of
				      their blocks still copying */
	uint64_t gates_unissued;   /* launches whose prefetch the worker had
				      not issued yet: they fault instead */
	uint64_t issue_waits;      /* launches that waited for the worker to
				      issue a prefetch of their own blocks
				      (engine.h, gate's wait_issue) */
	uint64_t issue_waits_expired; /* of those, the ones that gave up */
	uint64_t issue_wait_ns;    /* the host time they waited */
	uint64_t room_waits;       /* discard-and-prefetches that waited for
				      the worker to issue the evictions
				      queued before them that they follow
				      (follow_evictions) */
	uint64_t room_waits_expired; /* of those, the ones that gave up */
	uint64_t room_wait_ns;     /* the host time they waited */
	uint64_t discard_prefetches_ahead; /* discard-and-prefetch batches
				      issued on the lane, ahead of the
				      evictions queued before them */
	uint64_t discard_prefetches_ahead_in_part; /* of those, the ones
				      ahead of the newest alone, the lane
				      waiting for the older ones */
	uint64_t discards_ahead;   /* discard batches issued on the lane,
				      ahead of the evictions queued before
				      them (discard_stream) */
	uint64_t queue_peak;       /* the most migration jobs waiting for the
				      worker at once (its queue has no
				      bound: this shows how far it fell
				      behind) */
	/* Host time recording markers, ordering the program's streams after
	 * discards, and in gate (querying and waiting for a prefetch); and
	 * in all the engine's calls of issue, mark and gate. */
	uint64_t mark_ns, discard_wait_ns, gate_ns, exec_ns;
	uint64_t kind_calls[4], kind_ns[4]; /* driver calls per enum engine_op,
					       and the host time inside them */
};
void rp_exec_get_stats(struct rp_exec_stats *out);

/* Callbacks (rp_callbacks.c). */
/* Follows the program's allocations, and attaches to CUPTI for its launches
 * unless the engine is idle (then at the allocation that wakes it);
 * kernel_times as rp_activity_start takes it. */
CUptiResult rp_callbacks_start(bool kernel_times);
/* Ends the subscription: no callback of the replayer's runs after it. */
void rp_callbacks_stop(void);
/* engine_config.may_wake: false in an allocation that may be inside a
 * CUDA graph capture, where waking broke the capture on the H100. */
bool rp_callbacks_may_wake(void);
/* Whether the program's first CUDA graph (a capture or a graph launch)
 * ended the following (docs/replay.md, "CUDA graphs"). */
bool rp_callbacks_stopped_at_graph(void);
/* Whether the program's cudaDeviceReset ended it. */
bool rp_callbacks_stopped_at_reset(void);
/* Launches in another CUDA context than the arena's (another GPU's, or
 * one the program made), which the replayer does not follow. */
uint64_t rp_callbacks_other_context_launches(void);
/* Warns, once, if the plan's capacity, or the budget, is more than the
 * memory of the calling thread's current device (replay/device_fit.h):
 * at the program's first allocation, in its context (rp_inject.c). */
void rp_check_device_fits(void);
/* Host time the program's threads spent in the replayer's launch callbacks. */
uint64_t rp_callback_ns(void);
/* Each completed iteration's end: the CPU time (rp_now) and the running
 * totals then, for binning the counters by iteration. */
#define RP_MAX_ITERATIONS 4096
struct rp_iteration_end {
	uint64_t ns;
	uint64_t callback_ns;    /* rp_callback_ns() */
	uint64_t allocator_ns;   /* um_alloc_stats.ns */
	uint64_t resynced, lost, refault_blocks, unissued_blocks; /* the engine's counters */
	uint64_t unread_evicted_blocks;
};
/* Copies the ends so far to out, oldest first; returns how many (at most max). */
size_t rp_iteration_ends(struct rp_iteration_end *out, size_t max);

/* The measured residency (rp_residency.c). Each launch and allocation calls
 * start, on a thread with the program's context current: the first starts
 * the sampling. stop ends it for good and returns the peak device memory
 * in use above what was in use then, to every caller (a device reset and
 * the exit may stop it at once); the exit path calls it in the replaying
 * process only (a forked child has no sampler). */
void rp_residency_start(void);
uint64_t rp_residency_stop(void);

/* Unified Memory counters (rp_activity.c). */
/* Whether the records are kept, not only their totals: for --stats
 * (rp_activity_by_iteration and rp_activity_faults see none otherwise).
 * Set before the callbacks start. */
void rp_activity_keep_records(bool keep);
/* From ns on (the last iteration end the stats can hold), records and
 * launches are no longer kept, only counted: rp_activity_by_iteration and
 * the fault window would drop them, and a long run's would fill memory
 * (an ondemand step makes some 150,000 records). */
void rp_activity_keep_until(uint64_t ns);
/* Starts collecting the counters; with kernel_times also every kernel's
 * time on the GPU (CUPTI kernel activity). Before it (an idle replay),
 * nothing is collected and flush does nothing. */
CUptiResult rp_activity_start(bool kernel_times);
/* A launch the replayer follows was made now (kernel times and kept
 * records only: it dates the faults of its kernel, rp_activity_faults). */
void rp_activity_note_launch(uint32_t correlation);
/* Hands over every record CUPTI holds, once the GPU's work is done
 * (um_alloc_wait_for_gpu): at exit, and before a device reset destroys
 * the context. */
void rp_activity_hand_over(void);
/* Activity records CUPTI dropped (its buffers full): the counts below are
 * short by them. */
uint64_t rp_activity_dropped(void);
enum rp_busy { RP_BUSY_HTOD, RP_BUSY_DTOH, RP_BUSY_KERNELS, RP_BUSY_KINDS };
struct rp_traffic {
	uint64_t htod_bytes, dtoh_bytes;
	uint64_t fault_migrations, fault_bytes; /* HtoD migrations with cause 'fault' */
	uint64_t speculative_migrations, speculative_bytes; /* and 'prefetch': the driver's */
	uint64_t fault_records;                 /* GPU page-fault records (a sample) */
	/* Per iteration only: how long the migrations of each direction and
	 * the kernels kept the GPU busy within its window (replay/busy.h);
	 * kernels only with kernel times on. */
	uint64_t busy_ns[RP_BUSY_KINDS];
};
/* Totals, and per iteration given the iteration end times: out[i] counts
 * records that started before ends[i] and at or after ends[i-1], and the
 * busy times cover [ends[i-1], ends[i]). */
void rp_activity_totals(struct rp_traffic *out);
void rp_activity_by_iteration(const uint64_t *ends, size_t n, struct rp_traffic *out);
/* The on-demand migrations that started in [from_ns, to_ns), each dated
 * by its kernel's launch where kernel times make that known; malloc'ed,
 * NULL with *n 0 when there are none or memory ran out. */
struct fault_event *rp_activity_faults(uint64_t from_ns, uint64_t to_ns, size_t *n);

#endif
