/*
 * policy_plan.c: the plan's ops at a position (common/plan.h, struct
 * plan_op). Each op's allocation is resolved through the allocation map,
 * its range widened to whole 2 MB blocks, and each block handed to act.c;
 * the batches then coalesce neighbours and order the kinds.
 *
 * What each kind may touch:
 *   discard           (without a budget: with one, dead blocks are discarded
 *                     when the budget needs their room) the named
 *                     allocation must be freed now, and each block
 *                     is discarded only while no live allocation overlaps it
 *                     (small allocations share blocks);
 *   evict             resident blocks of a live allocation, never one the
 *                     launch being prepared uses;
 *   discard_prefetch  a live allocation no kernel has used and the program
 *                     has not written since it was made, block by block
 *                     only where it is the block's sole live allocation;
 *   prefetch          non-resident blocks of a live allocation.
 * A refused discard or discard_prefetch is counted in skipped_discards: a
 * wrong discard silently corrupts training, a skipped one only costs time.
 */
#include "engine_int.h"

/* Positions a forward resync may jump over and still get their ops (they
 * were removed from the program, or the plan has extras): beyond this the
 * program is elsewhere, and old ops would be stale. Not so at an iteration
 * start, on track or found again: the positions before it are this
 * iteration's beginning, which the program no longer runs (match.h, the
 * entry). */
#define PLAN_REPLAY_SKIPPED 8

/* The op's blocks, widened: [*first, *last]. */
static void op_blocks(const struct plan_op *op, uint64_t address, uint64_t *first, uint64_t *last)
{
	*first = (address + op->offset) >> BLOCK_SHIFT;
	*last = (address + op->offset + op->bytes - 1) >> BLOCK_SHIFT;
}

static void op_discard(engine *e, const struct plan_op *op, const struct allocmap_where *w)
{
	/* Under a budget, dead blocks stay resident until the budget needs
	 * their room (act_room discards them first): the arena often hands
	 * the range out again before that, and then it is simply reused. A
	 * discard now would cost two driver calls (the discard, and the
	 * discard-and-prefetch the next allocation there needs). */
	if (e->budget)
		return;
	if (w->state != ALLOCMAP_FREED) {
		e->st.skipped_discards++;
		return;
	}
	struct wait_ref after = marks_of_position(e->marks, op->after);
	uint64_t first, last;
	bool refused = false;
	op_blocks(op, w->address, &first, &last);
	for (uint64_t no = first; no <= last; no++) {
		struct block *b = residency_find(e->res, no);
		if (b && act_discard(e, b, after) == ACT_REFUSED)
			refused = true;
	}
	e->st.skipped_discards += refused;
}

static void op_evict(engine *e, const struct plan_op *op, const struct allocmap_where *w)
{
	if (w->state != ALLOCMAP_LIVE)
		return;
	struct wait_ref after = marks_of_position(e->marks, op->after);
	uint64_t first, last;
	op_blocks(op, w->address, &first, &last);
	for (uint64_t no = first; no <= last; no++) {
		struct block *b = residency_find(e->res, no);
		if (b)
			act_evict(e, b, wait_later(after, act_use_wait(e, b->use_seq)));
	}
}

/* The launch expected to run kernel #deadline for an op of position q
 * issued at the launch of position pos (q <= pos); 0 when that kernel has
 * already run. */
static uint64_t launch_of(const engine *e, uint32_t q, uint32_t pos, uint32_t deadline)
{
	uint32_t n = e->plan->signature.n_kernels;
	uint32_t ahead = (deadline + n - q) % n, back = pos - q;
	return ahead >= back ? e->seq + ahead - back : 0;
}

static void op_bring(engine *e, const struct plan_op *op, const struct allocmap_where *w,
		     uint32_t q, uint32_t pos)
{
	if (w->state != ALLOCMAP_LIVE)
		return;
	bool fresh = op->kind == PLAN_OP_DISCARD_PREFETCH;
	if (fresh && (!w->rec || w->rec->touched)) {
		e->st.skipped_discards++;
		return;
	}
	struct wait_ref after = marks_of_position(e->marks, op->after);
	uint64_t first, last, keep = launch_of(e, q, pos, op->deadline);
	bool refused = false;
	op_blocks(op, w->address, &first, &last);
	for (uint64_t no = first; no <= last; no++) {
		struct block *b = residency_find(e->res, no);
		if (!b)
			continue;
		if (!fresh)
			act_bring(e, b, ENGINE_OP_PREFETCH, after, keep);
		else if (b->live != 1)
			refused = true;
		else
			act_bring(e, b, ENGINE_OP_DISCARD_PREFETCH, after, keep);
	}
	e->st.skipped_discards += refused;
}

/* The ops of position q, for the launch at position pos. */
static void plan_position(engine *e, uint32_t q, uint32_t pos)
{
	for (uint32_t i = e->op_start[q]; i < e->op_start[q + 1]; i++) {
		const struct plan_op *op = &e->plan->ops[i];
		struct allocmap_where w;
		allocmap_resolve(e->allocs, op->alloc, &w);
		switch (op->kind) {
		case PLAN_OP_DISCARD:
			op_discard(e, op, &w);
			break;
		case PLAN_OP_EVICT:
			op_evict(e, op, &w);
			break;
		default:
			op_bring(e, op, &w, q, pos);
			break;
		}
	}
}

void pplan_ops(engine *e, const struct match_step *step)
{
	/* A launch moved to another step of a ring gets the ops placed in its
	 * step up to its position, not those of the steps before, which an
	 * iteration's start would issue: they are mostly for buffers the
	 * program is not at. A prefetch for this step placed in the step
	 * before is missed so, and its buffer faults in, once per move. */
	const struct plan_signature *sg = &e->plan->signature;
	uint32_t from = step->position;
	if (step->moved)
		from -= step->position % (sg->n_kernels / sg->ring_steps);
	else if (step->iteration_start)
		from = 0;
	else if (step->skipped <= PLAN_REPLAY_SKIPPED)
		from -= step->skipped;
	/* Kernels the program runs in another order than the plan (two
	 * swapped) send the matcher back a position or two, then ahead again:
	 * the ops of the positions between were issued already, and issued
	 * again an eviction and a prefetch of one range would move it out and
	 * in twice. A move back farther is the program running those kernels
	 * again, which want their ops again. A pass ends at the plan's last
	 * position (two kernels swapped across it get the ops of the one
	 * placed first twice). */
	if (step->position + MATCH_NEAR < e->ops_from)
		e->ops_from = step->position;
	if (from < e->ops_from)
		from = e->ops_from;
	for (uint32_t q = from; q <= step->position; q++)
		plan_position(e, q, step->position);
	if (e->ops_from <= step->position)
		e->ops_from = (step->position + 1) % sg->n_kernels;
}
