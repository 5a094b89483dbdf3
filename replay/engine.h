/*
 * engine.h: the replayer's brain, portable and unit-tested without a GPU.
 *
 * libumreplay.so feeds the engine what happens in the program (allocations,
 * frees, kernel launches with their execution IDs and the allocations their
 * arguments touch). The engine keeps its place in the plan, models which
 * 2 MB blocks are resident on the GPU, and decides the migration ops of the
 * chosen policy, which it hands to an executor: the CUDA one queues them on
 * the replayer's own stream; tests use a fake that records them.
 *
 * Policies (docs/replay.md, "Policies"):
 *   ideal     no ops, no budget: what the GPU does when everything fits;
 *   ondemand  no prefetch; under a budget, evict the least recently used
 *             blocks at kernel boundaries (what plain UM does when full);
 *   deepum    correlation-table prefetch of the blocks of the predicted next
 *             kernels, pre-eviction of blocks not predicted, discard of
 *             freed allocations (under a budget, of those freed once it
 *             has needed room: before, no marker is recorded at a free,
 *             and the budget discards their dead blocks first when it
 *             first needs room);
 *   plan      the plan's ops at their positions, correlation prefetch when
 *             the run drifts from the plan; the allocations the plan keeps
 *             in host memory placed there when they are made.
 * Under every policy but ideal a budget is a hard limit on modelled
 * residency: before a kernel, blocks are evicted (dead ones discarded first,
 * but under ondemand, which cannot know them dead; then LRU, never the
 * kernel's own) until its blocks fit. A discarded block is not resident.
 * docs/replay.md describes the rules in full.
 *
 * Thread-safety: every engine_* call takes the engine's lock (but
 * engine_after_launch only when it records a marker); launches may come
 * from several threads. Executor calls are made with the lock held and
 * must not block on the GPU.
 */
#ifndef UMKIT_REPLAY_ENGINE_H
#define UMKIT_REPLAY_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "faultsrc.h"
#include "lostids.h"
#include "plan.h"

typedef struct engine engine;

enum engine_policy { ENGINE_IDEAL, ENGINE_ONDEMAND, ENGINE_DEEPUM, ENGINE_PLAN };

/* "ideal", "ondemand", "deepum", "plan" <-> the enum; parse returns -1 for
 * an unknown name. */
const char *engine_policy_name(enum engine_policy p);
int engine_policy_parse(const char *name, enum engine_policy *out);

/* An address range for the executor, already widened to whole 2 MB blocks
 * and coalesced with its neighbours. */
struct engine_range {
	uint64_t address, bytes;
};

/* Whether two ranges share a byte, for ends up to 2^64. */
static inline bool engine_ranges_overlap(const struct engine_range *a, const struct engine_range *b)
{
	return a->address >= b->address ? a->address - b->address < b->bytes
					 : b->address - a->address < a->bytes;
}

enum engine_op { ENGINE_OP_PREFETCH, ENGINE_OP_EVICT, ENGINE_OP_DISCARD, ENGINE_OP_DISCARD_PREFETCH };

struct engine_executor {
	void *ctx;
	/* Queues one batch of ops of one kind on the replayer's stream, behind
	 * the marker wait_mark (0: nothing to wait for). ticket numbers the
	 * flush the batch belongs to (1, 2, ..., increasing); a launch that
	 * needs a block this flush prefetches passes it to gate. room: the
	 * bytes the residency model leaves free under its limit once the
	 * flush is issued (UINT64_MAX: no limit), which evictions still on
	 * their way out of the GPU must fit in for a discard-and-prefetch to
	 * land ahead of them. */
	void (*issue)(void *ctx, enum engine_op op, const struct engine_range *ranges, size_t n,
		      uint64_t wait_mark, uint64_t ticket, uint64_t room);
	/* Records a marker behind the kernel just launched (the most recent
	 * launch on the calling thread's stream); returns it (0: none could be
	 * recorded). Called from engine_after_launch; from engine_on_launch
	 * the first time the budget needs room (a marker for every launch
	 * before); and from engine_on_free when the free leaves blocks without
	 * a live allocation, or holding only one nothing has used yet: that
	 * marker must cover every kernel queued so far that may use the freed
	 * memory, since a later discard of it waits for that marker alone.
	 * Markers increase: one recorded later has a larger value. */
	uint64_t (*mark)(void *ctx);
	/* Monotonic time in ns (iteration timing); may be NULL (times read 0). */
	uint64_t (*now)(void *ctx);
	/* Keeps [address, address + bytes) in host memory and maps it for
	 * the GPU (on_host), or undoes that; synchronous. Returns false when
	 * it could not. May be NULL: the plan's host placement is then off. */
	bool (*place)(void *ctx, uint64_t address, uint64_t bytes, bool on_host);
	/* The kernel being launched uses blocks that the prefetch batch of
	 * flush `ticket` (or an earlier one) brings: order it after that
	 * batch if it may still be copying, so the kernel waits for the copy
	 * instead of faulting on the blocks. Returns the newest ticket whose
	 * prefetch batch has been handed to the driver (they go in ticket
	 * order), so the engine can count the kernel's blocks that were not
	 * yet on their way. With wait_issue, some of those blocks were
	 * prefetched for this very kernel, or the one before: wait (a bounded
	 * time) for their batch to be handed to the driver rather than let
	 * the kernel run ahead of it. Called under the plan policy only,
	 * before the launch is queued. May be NULL. */
	uint64_t (*gate)(void *ctx, uint64_t ticket, bool wait_issue);
	/* Bytes of the evictions queued that may not have left the GPU yet:
	 * the model counts their room as made, the GPU not until they land.
	 * May be NULL (none known). */
	uint64_t (*evicting)(void *ctx);
};

struct engine_config {
	enum engine_policy policy;
	uint64_t gpu_budget;      /* bytes; 0: no budget */
	const struct plan *plan;  /* required for ENGINE_PLAN; deepum uses its
				     correlation tables when present */
	bool fault_sources;       /* log every allocation, for
				     engine_fault_sources (its memory grows
				     with the run, up to FAULTSRC_MAX_ALLOCS) */
	bool framework_cache;     /* the program's allocations are its
				     framework's cache segments, not its
				     tensors (umreplay kept PyTorch's caching
				     allocator on): the plan's allocation
				     signature is not checked */
	/* Asked, under the engine's lock, when an allocation would end
	 * idleness: false leaves that to a later allocation (the caller
	 * cannot follow launches from this one on). NULL: always true. */
	bool (*may_wake)(void);
};

/* One allocation a launch's arguments point into. */
struct engine_access {
	uint64_t alloc_id; /* the arena's ordinal (= trace alloc.id) */
};

/* Returns NULL with err set when the configuration is unusable (plan policy
 * without a plan, ...). The plan and executor must outlive the engine. */
engine *engine_create(const struct engine_config *cfg, const struct engine_executor *exec,
		      char *err, size_t errlen);
void engine_destroy(engine *e);

/* Whether the engine needs the program's kernel launches. Not while it is
 * idle: under the plan policy, a plan without ops or host placements whose
 * predicted peak fits the limit the run keeps to (the budget, or without
 * one the capacity the plan was made for) has nothing to do at a launch, so
 * the caller need not pay for following them. Idle, the engine counts every
 * block an allocation has covered as resident (the program may have touched
 * it) and keeps nothing per block, so an allocation or free costs the same
 * however large it is. The allocation that would take that footprint past
 * the limit ends idleness for good (unless engine_config.may_wake says
 * not yet), and so does a launch passed to
 * engine_on_launch: the engine builds its residency model then (engine.c,
 * wake), from then on engine_on_launch must see every launch, and the
 * budget makes room at the first one that needs it, behind a marker that
 * follows everything before it. The engine sees no writes while idle, so
 * it takes every allocation made then for written. */
bool engine_follows_launches(engine *e);

/* The program allocated [address, address + size) as allocation id (ids are
 * 1, 2, ... in allocation order) / freed it. Call engine_on_alloc once the
 * memory is the program's and engine_on_free before the range can be handed
 * out again. A free may issue discards (deepum) and record a marker. Under
 * the plan policy, an allocation the plan keeps in host memory is placed
 * there (executor place) before engine_on_alloc returns, and released at
 * its free. engine_on_alloc returns engine_follows_launches as the
 * allocation left it (an allocation is what ends idleness, unless the
 * config's may_wake says not yet); after engine_stop it returns false. */
bool engine_on_alloc(engine *e, uint64_t id, uint64_t address, uint64_t size);
void engine_on_free(engine *e, uint64_t id);

/* As engine_on_alloc, for the program's own managed memory
 * (TRACE_API_MANAGED), which the host may write at any time without a
 * CUDA call: written from the start, in the same step, so that no
 * discard_prefetch of it is queued. */
bool engine_on_managed_alloc(engine *e, uint64_t id, uint64_t address, uint64_t size);

/* From now on every call above and below that would change the engine
 * (allocations, frees, writes, launches) does nothing and queues no op;
 * calls made before it have returned when it returns. For a program the
 * engine cannot follow any more (a CUDA graph). */
void engine_stop(engine *e);

/* The program wrote into allocation id other than through a kernel launch
 * (a memset, a copy into it), before the write is queued: a planned
 * discard_prefetch of it, which would drop that write, is skipped. */
void engine_on_write(engine *e, uint64_t id);

/* The program queued work that may write device memory the engine cannot
 * name (a 2-D or 3-D copy, a host function): no live allocation
 * counts as fresh any more, so none is discard-prefetched. */
void engine_on_unknown_write(engine *e);

/* A kernel is about to be launched: advance the plan position (match,
 * match by shape_id, or resynchronise, or lose the place; see match.h),
 * enforce the budget, and issue the ops due before it. Returns true when
 * the launch completed an iteration or the plan was judged foreign: the
 * caller's cue to read the stats, which it need not do at every launch. */
bool engine_on_launch(engine *e, uint64_t exec_id, uint64_t shape_id, const struct engine_access *acc,
		      size_t n);

/* The kernel announced by the last engine_on_launch on this thread has been
 * queued: records a marker if a later op must wait for it (a plan position
 * some op names as `after`; every launch once a budget has needed room,
 * for its evictions). Takes the lock only when it records. */
void engine_after_launch(engine *e);

struct engine_stats {
	uint64_t launches;
	uint64_t matched, shaped, resynced, lost; /* launches by how the position was
						     found (match.h: by ID, by shape, ...) */
	uint64_t ring_moves;                  /* of those placed, moved to another
						 step of a ring of buffers by the
						 memory they use (engine.c, ring_step) */
	uint64_t iterations;                  /* completed passes over the plan */
	uint64_t ops[4], bytes[4];            /* by enum engine_op: calls and bytes */
	uint64_t budget_evictions;            /* blocks given up for the budget
						 (evicted, or discarded when dead, or
						 left to the driver when a dead one's
						 discard was unsafe) */
	uint64_t discards_beside_evictions;   /* dead blocks discarded so that a
						 discard-and-prefetch finds room
						 beside the evictions still on their
						 way out (act.c, room_beside_evictions) */
	uint64_t modelled_peak_bytes;         /* peak modelled residency */
	uint64_t signature_mismatch;          /* 1: the plan is not for this program */
	uint64_t skipped_discards;            /* discard / discard_prefetch ops (or
						 parts) refused: live or written memory */
	uint64_t unmodelled_allocs;           /* allocations the model could not
						 hold (memory ran out): from the
						 first, nothing is discarded */
	uint64_t budget_overruns;             /* kernels whose own blocks exceed the budget */
	uint64_t refault_blocks;              /* blocks a kernel needed that held
						 data and were off the GPU, with no
						 op bringing them: the model's count
						 of blocks that fault back in */
	uint64_t refault_budget_blocks;       /* of those, the ones the budget had
						 evicted (the others an op of the
						 policy had) */
	uint64_t refault_shared_blocks;       /* of those, the ones holding more
						 than one live allocation: an op on
						 one tensor moved its neighbours */
	uint64_t unread_evicted_blocks;       /* blocks freed while off the GPU
						 after an eviction: their copy to the
						 host was never read back */
	uint64_t unread_evicted_budget_blocks; /* of those, the ones the budget
						  had evicted */
	uint64_t corr_launches;               /* launches that consulted the
						 correlation tables (deepum, plan fallback) */
	uint64_t host_allocs, host_bytes;     /* allocations placed in host memory
						 by the plan (plan.host), and their
						 bytes (whole blocks) */
	bool started_idle;                    /* launches were not followed from
						 the start (engine_follows_launches) */
	uint64_t woke_at_alloc;               /* the allocation that ended the idle
						 start; 0: none did */
	uint64_t wake_deferrals;              /* allocations past the idle limit
						 that could not wake the engine
						 (engine_config.may_wake) */
	uint64_t gated_launches;              /* launches passed to the executor's
						 gate: their blocks' prefetch may
						 have been in flight */
	uint64_t late_gated_launches;         /* of those, the ones gated with
						 wait_issue: a block brought by
						 their own ops or the launch's
						 before */
	uint64_t unissued_blocks;             /* blocks of those launches whose
						 prefetch the executor had not yet
						 issued (gate): they fault in unless
						 the prefetch overtakes the kernel */
};
void engine_get_stats(engine *e, struct engine_stats *out);

/* Iteration wall times so far (ns), oldest first, the first
 * ENGINE_ITERATION_TIMES of them; returns how many were copied into out
 * (at most max). */
#define ENGINE_ITERATION_TIMES 4096
size_t engine_iteration_times(engine *e, uint64_t *out, size_t max);

/* The on-demand migrations ev[0 .. n) charged to the allocations that held
 * their addresses (faultsrc.h; the times from the executor's clock): the
 * max sources with the most bytes into out, most first. Without
 * engine_config.fault_sources every migration is unattributed. */
size_t engine_fault_sources(engine *e, const struct fault_event *ev, size_t n, struct fault_source *out,
			    size_t max, struct fault_totals *tot);

/* The execution IDs the plan could not place in the steady iterations
 * (lostids.h): the max most frequent into out, most first. */
size_t engine_lost_kernels(engine *e, struct lost_id *out, size_t max, struct lost_totals *tot);

#endif
