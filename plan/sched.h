/*
 * sched.h: the migration scheduler (design.md, mechanism 6): G10's smart
 * eviction, then eager prefetch, discard at every death and
 * discard-and-prefetch of fresh allocations (these two only when capacity
 * binds).
 *
 * Residency is modelled per kernel position: before kernel k the ops due at
 * k take effect, then the kernel's tensors must be resident. A tensor is
 * resident from its first use (or from the start, if it is live and was
 * resident when the iteration began) until the program frees it, less the
 * stretches the plan evicts; a discarded range counts as free.
 *
 * 1. Smart eviction (G10): every inactive period (vital.h) is a candidate.
 *    Its eviction starts after its last use when the link is free and
 *    takes call_cost + bytes / dtoh_bw; its prefetch must end before the
 *    next use and takes call_cost + bytes / htod_bw. The link carries one
 *    transfer at a time in either direction: G10 gives each direction its
 *    own, but the UVM driver moves one way at a time (on the H100 a 512 MB
 *    eviction and a 512 MB prefetch released together took as long as the
 *    two one after the other, on one stream or two: docs/replay.md, "What
 *    the driver's calls cost"). A candidate helps only at the
 *    kernels between the end of its eviction and the start of its prefetch.
 *    Candidates are taken greedily, best first, by (bytes of excess pressure
 *    removed x kernel duration) / transfer time, until no kernel is above
 *    capacity or no candidate helps; the choice is lazy (a popped score is
 *    recomputed, since scores only fall as pressure drops and links fill).
 * 2. Forced eviction: where the links could not hide enough transfers, the
 *    remaining excess is removed at kernel granularity (the prefetch moved
 *    to the kernel that needs the data, accepting a stall), so the modelled
 *    residency fits wherever the kernel's own working set does.
 * 3. Eager prefetch: each prefetch moves as early as capacity allows (the
 *    ones that would stall first); an eviction that capacity turns out not
 *    to need is dropped.
 * 4. Deaths and births: DISCARD where the program frees a used tensor
 *    (after = its last use); DISCARD_PREFETCH where an iteration tensor is
 *    allocated, when capacity allows holding it from there to its first
 *    use; a plain PREFETCH instead when a copy or memset may have written
 *    the fresh allocation before its first kernel (a discard would lose
 *    that data). Only when capacity binds (the residency without
 *    evictions exceeds it somewhere): otherwise freed ranges stay resident
 *    for the next tensors, which costs nothing, and the plan has no ops.
 * 5. Late eviction of shared blocks: the replayer moves whole 2 MB blocks,
 *    so a tensor that shares one with another live in its stretch
 *    (blockmates.h) is evicted at the first kernel there that needs its
 *    room, not as its inactive period begins, where the eviction took
 *    the block from its neighbours and their next use faulted it back.
 * Where smart eviction leaves evictions to phase 2, the schedule is made
 * again without phase 1 and the plan that predicts less stall is kept
 * (sched_smart): the forced transfers take no link time in phase 1's
 * model, so the transfers it counted as hidden are not, and its picks,
 * brought back before the uses at the peak, leave the peak to forced
 * evictions that cover their stretches too, more bytes in all than
 * phase 2 alone would move (docs/planner.md, "Smart eviction left out").
 * Kernels whose own working set exceeds the capacity cannot fit; they are
 * listed, and the model there aims at the working set alone.
 * Tensors kept in host memory (tensor.host, host.h) are left out: never
 * resident, never moved, outside every working set. Of one kept there in
 * part (tensor.host_offset), what stays on the GPU is resident throughout
 * and never moved either.
 */
#ifndef UMKIT_SCHED_H
#define UMKIT_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "plan.h"
#include "tensor.h"
#include "vital.h"

/* The share of a GPU budget a plan leaves free by default (umplan
 * --headroom). The replayer's residency is not exactly the plan's: small
 * tensors share 2 MB blocks, and a fresh allocation that lands on a
 * resident block is resident before its first use. A plan filled to the
 * byte leaves every such block to the budget's LRU eviction, which evicts a
 * live block that faults back in and evicts the next: a cascade. On the
 * BERT-large trace at W/B 2, replayed through the engine offline, budget
 * evictions of live blocks that later faulted fell from 185 to 21 blocks
 * per iteration with 3 % (docs/planner.md, "Headroom"). */
#define SCHED_HEADROOM_PCT 3

/* The capacity a plan for a budget of capacity bytes keeps residency
 * under, headroom_pct percent (at most 50) left free. */
uint64_t sched_headroom(uint64_t capacity, uint32_t headroom_pct);

/* Whether the schedule starts with smart eviction (phase 1). */
enum sched_smart {
	SCHED_SMART_AUTO = 0, /* with it, unless it leaves evictions forced and
				 the schedule without it predicts less stall */
	SCHED_SMART_ALWAYS,   /* with it */
	SCHED_SMART_NEVER,    /* without: every eviction forced (phase 2) */
};

struct sched_options {
	uint64_t capacity;          /* bytes: residency is kept under it */
	uint64_t htod_bytes_per_s;
	uint64_t dtoh_bytes_per_s;
	uint64_t call_cost_ns;      /* fixed cost of each migration call */
	enum sched_smart smart;
};

struct sched_result {
	/* Ops in plan form, except that op.alloc is a tensor index. */
	size_t n_ops;
	struct plan_op *ops;
	uint64_t *baseline;  /* [p] residency without evictions */
	uint64_t *residency; /* [p] modelled residency under the plan */
	uint64_t baseline_peak, peak;
	uint64_t inflight_peak; /* peak counting evictions still in flight */
	uint32_t *unfit;     /* positions whose working set exceeds capacity */
	size_t n_unfit;
	size_t over;         /* other positions above capacity (0 by construction) */

	size_t evictions;    /* chosen inactive periods */
	size_t forced;       /* of those, not hidden behind computation */
	size_t dropped;      /* chosen, then found unnecessary */
	uint64_t evict_bytes, prefetch_bytes, discard_bytes, discard_prefetch_bytes;
	uint64_t tail_evict_bytes; /* of evict_bytes, tails: a tensor past its last
				      use until its free, copied to the host
				      and never read back */
	uint64_t stall_ns;   /* rough: prefetch time not covered before its
				deadline, or a link's busy time beyond the
				iteration, whichever is larger */
	size_t late_prefetches; /* prefetches whose copy the model has land
				   after the kernel that needs them starts */
	uint64_t late_prefetch_bytes;
	uint64_t htod_busy_ns, dtoh_busy_ns;
	bool smart_left_out;     /* SCHED_SMART_AUTO chose the schedule without
				    smart eviction */
	uint64_t smart_stall_ns; /* then: the stall predicted with it */
};

/* Plans one iteration, with or without smart eviction as o->smart says.
 * Returns 0, or -1 with err set (out of memory). */
int sched_run(const struct tensor_set *ts, const struct access_set *a, const struct vital *v,
	      const struct sched_options *o, struct sched_result *out, char *err, size_t errlen);

/* Frees what sched_run filled and zeroes r. */
void sched_result_free(struct sched_result *r);

#endif
