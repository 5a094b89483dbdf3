/*
 * engine_int.h: the engine's state, shared by the files that implement it
 * (not part of the contract; the injection uses engine.h only):
 *
 *   engine.c       the engine_* calls: locking, the launch pipeline,
 *                  allocations, markers, iterations, statistics
 *   act.c          ops on single blocks that keep the residency model, the
 *                  batches and the budget consistent (act_*)
 *   policy_plan.c  the plan's ops at a position (pplan_*: plan_* names
 *                  belong to common/plan.h)
 *   policy_corr.c  correlation-table prediction and online learning
 *                  (pcorr_*: corr_* names belong to common/corr.h)
 *   onhost.c       allocations the plan keeps in host memory (onhost_*)
 *
 * Every function declared here expects the engine's lock held.
 */
#ifndef UMKIT_REPLAY_ENGINE_INT_H
#define UMKIT_REPLAY_ENGINE_INT_H

#include <pthread.h>

#include "allocmap.h"
#include "batch.h"
#include "corr.h"
#include "engine.h"
#include "footprint.h"
#include "marks.h"
#include "match.h"
#include "residency.h"
#include "sigcheck.h"

/* Correlation prefetch: kernels predicted ahead; blocks prefetched per
 * launch at most (64 MiB: about a millisecond of link time, the order of a
 * training kernel); table entries looked at per launch and pass at most
 * (an execution ID shared by many layers has a long merged block list, and
 * the launch path must stay short); and how many recently handled
 * predictions are remembered so each predicted kernel is handled once, not
 * at every launch that sees it ahead. */
#define PCORR_LOOKAHEAD 3
#define PCORR_MAX_BLOCKS 32
#define PCORR_MAX_VISITS 64
#define PCORR_RECENT 16

/* A launch whose blocks were prefetched by the ops of this many launches
 * before it, or its own, waits for the executor to issue that prefetch
 * (engine.c, fetched_late). */
#define GATE_ISSUE_LAUNCHES 1

struct engine {
	pthread_mutex_t lock;
	enum engine_policy policy;
	uint64_t budget;           /* 0: none (always 0 under ideal) */
	const struct plan *plan;   /* NULL: none */
	struct engine_executor x;

	match *match;              /* with a plan */
	sigcheck *sig;             /* with a plan */
	uint32_t *op_start;        /* with a plan: ops of position p are
				      plan->ops[op_start[p] .. op_start[p + 1]) */
	allocmap *allocs;
	residency *res;
	marks *marks;
	batch *batch;
	faultsrc *faults;          /* every allocation (config fault_sources), or NULL */
	lostids *lost;             /* launches lost in steady iterations */

	bool model;                /* keep the residency model (not ideal) */
	bool mark_frees;           /* a marker at frees that kill blocks */
	/* Under a budget, markers behind every launch and at frees, but only
	 * from the first time the budget needs room (act_room): before that
	 * no eviction waits for them (deepum's discards at frees are left to
	 * the budget's first need, engine.h), and each costs an event record
	 * on the program's thread. The marker recorded then follows every launch
	 * and free before it, so it stands in for their markers. */
	bool mark_all;             /* a marker behind every launch */
	struct wait_ref latch;     /* that first marker ({0, 0}: none yet) */
	bool foreign;              /* the plan is not for this program */
	bool idle;                 /* launches not followed (engine.h,
				      engine_follows_launches) */
	bool stopped;              /* engine_stop: every call does nothing */
	bool (*may_wake)(void);    /* engine_config.may_wake */
	bool wake_due;             /* an allocation that could not wake the
				      engine should have */
	uint64_t idle_limit;       /* the footprint that ends idleness */
	footprint *footprint;      /* when started idle: every block an
				      allocation covered while idle */

	const corr_tables *tables; /* prediction tables in use, or NULL */
	corr_tables *online;       /* learnt while running (deepum), or NULL */
	uint64_t prev_exec;        /* the previous launch's execution ID */
	struct {
		uint64_t exec_id, seq;
	} recent[PCORR_RECENT];    /* predictions handled, and when */
	uint32_t recent_next;
	struct corr_block *obs;    /* scratch for corr_observe */
	size_t cap_obs;

	uint64_t flushes;          /* batch flushes so far; prefetches added
				      now go out with ticket flushes + 1 */

	/* The launch being prepared. */
	uint64_t seq;              /* its sequence number: 1, 2, ...; pins */
	uint64_t reserved;         /* bytes of its own blocks not yet resident */
	struct block **kb;         /* its blocks */
	size_t n_kb, cap_kb;

	uint32_t ops_from;         /* the first position of this pass whose
				      ops are not issued yet (policy_plan.c) */

	struct engine_stats st;
	bool timing;               /* an iteration start has been seen */
	uint64_t iter_start_ns;
	uint64_t *iter_ns;
	size_t n_iter, cap_iter;
};

/* Results of act_discard. */
enum act_result { ACT_DONE = 1, ACT_NOTHING = 0, ACT_REFUSED = -1 };

/* What an op on a block last used by launch seq must wait for: that
 * launch's marker, or the latch marker for a launch before it ({0, 0}:
 * none known; the launch is then old or its marker was never recorded). */
struct wait_ref act_use_wait(const engine *e, uint64_t seq);

/* Gives up victims (dead blocks discarded, else the least recently used
 * live ones evicted, never a block pinned by the current launch) until the
 * model holds resident + reserved + extra bytes within the budget. Blocks
 * kept for a coming kernel go last, and only for the kernel being launched
 * (for_prefetch false): a prefetch never pushes out another that is still
 * to be used. Returns false when it cannot. True at once without a budget. */
bool act_room(engine *e, uint64_t extra, bool for_prefetch);

/* Brings live block b to the GPU with op (ENGINE_OP_PREFETCH, or
 * ENGINE_OP_DISCARD_PREFETCH when the caller has established that b holds
 * only a fresh allocation nothing has written: then behind w and the marker
 * of the block's latest free, or as a plain prefetch when that free has no
 * marker), making room first; pins it
 * for the current launch (no op of this launch undoes it) and keeps it
 * through launch `keep` (the launch expected to use it). A resident block
 * is only refreshed and kept. Returns true when an op was added. */
bool act_bring(engine *e, struct block *b, enum engine_op op, struct wait_ref w, uint64_t keep);

/* Evicts resident block b (not pinned), behind w: a live one, or under
 * ondemand a dead one too (behind its free's marker). Returns true when an
 * op was added. */
bool act_evict(engine *e, struct block *b, struct wait_ref w);

/* Discards block b behind w and behind the marker of the free that killed
 * it (or the latch marker, for a free before it). Refused when b holds a
 * live allocation, or was freed after a launch with neither marker
 * recorded (the freed memory may still be in use);
 * nothing to do when already discarded. */
enum act_result act_discard(engine *e, struct block *b, struct wait_ref w);

/* Issues the ops added since the last flush (batch_flush), numbered by
 * the flush. */
void act_flush(engine *e);

/* Issues the plan's ops for the launch placed by step (and for positions a
 * short forward resync jumped over). */
void pplan_ops(engine *e, const struct match_step *step);

/* Records the launch of exec_id with the current launch's blocks in the
 * online tables (when those are in use). */
void pcorr_learn(engine *e, uint64_t exec_id);

/* Prefetches the blocks of the kernels predicted to follow exec_id. */
void pcorr_prefetch(engine *e, uint64_t exec_id);

/* Allocation r was just made / is being freed: places it in host memory
 * when the plan keeps it there (setting r->gpu_blocks) / releases it if it
 * was placed. */
void onhost_alloc(engine *e, struct alloc_rec *r);
void onhost_free(engine *e, const struct alloc_rec *r);

#endif
