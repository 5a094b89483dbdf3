/*
 * act.c: single-block ops that keep the residency model, the op batches and
 * the budget in step (see engine_int.h). Every op the engine issues goes
 * through here, so the safety rules live in one place: nothing dead is
 * prefetched or evicted (either would undo a discard and copy dead bytes),
 * nothing live is discarded, and nothing freed is discarded before the
 * marker of its free.
 *
 * ondemand is plain Unified Memory: it never discards, and its budget
 * evicts dead blocks with a copy as the driver would (it cannot know they
 * are dead).
 */
#include "engine_int.h"

/* True when the latch marker follows launch seq (and what came after it
 * before the marker was recorded). */
static bool latch_covers(const engine *e, uint64_t seq)
{
	return e->latch.mark && seq <= e->latch.seq;
}

struct wait_ref act_use_wait(const engine *e, uint64_t seq)
{
	struct wait_ref w = marks_of_launch(e->marks, seq);
	return !w.mark && latch_covers(e, seq) ? e->latch : w;
}

/* What an op destroying block b's bytes must wait for: the marker of the
 * latest free that left b dead or holding one unused allocation
 * (blocktab.h), or the latch marker for a free before it (dead_seq 0:
 * freed before any launch the engine followed, which the latch covers
 * too). When the free's marker could not be recorded the executor waited
 * for the GPU instead, yet only a free before any launch reads {0, 0},
 * nothing to wait for; after one, mark 0 with seq not 0 reads unknown,
 * and the op is refused. */
static struct wait_ref dead_wait(const engine *e, const struct block *b)
{
	if (!b->dead_mark && latch_covers(e, b->dead_seq))
		return e->latch;
	return (struct wait_ref){ b->dead_seq, b->dead_mark };
}

static bool over_budget(engine *e, uint64_t extra)
{
	return residency_bytes(e->res) + e->reserved + extra > e->budget;
}

/* The first time the budget needs room: markers from now on, and one now
 * for everything before. Called while a launch is being prepared, so the
 * marker follows the launches before it (not yet this one). */
static void start_marking(engine *e)
{
	e->mark_all = true;
	uint64_t mark = e->x.mark(e->x.ctx);
	if (mark)
		e->latch = (struct wait_ref){ e->seq - 1, mark };
}

bool act_room(engine *e, uint64_t extra, bool for_prefetch)
{
	if (!e->budget)
		return true;
	if (!e->mark_all && over_budget(e, extra))
		start_marking(e);
	while (over_budget(e, extra)) {
		struct block *v = residency_victim(e->res, e->seq, true);
		if (!v && !for_prefetch)
			v = residency_victim(e->res, e->seq, false);
		if (!v)
			return false;
		if (v->live == 0 && e->policy != ENGINE_ONDEMAND) {
			if (act_discard(e, v, (struct wait_ref){ 0, 0 }) != ACT_DONE) {
				/* Unsafe to discard and never to be evicted: leave
				 * it to the driver, out of the model, as
				 * act_discard would (its prefetch's ticket
				 * with it). */
				residency_set(e->res, v, BLOCK_ABSENT);
				v->ticket = 0;
			}
		} else if (!act_evict(e, v, act_use_wait(e, v->use_seq))) {
			return false;
		}
		v->by_budget = 1;
		e->st.budget_evictions++;
	}
	return true;
}

/* Under a budget the model counts an eviction's room as made once it is
 * queued; the GPU holds the evicted blocks until they land, and a
 * discard-and-prefetch that takes their room lands only behind them
 * (replay/evicting.h), holding up the program's next kernel. Dead blocks
 * are discarded for it instead, while there are any: a discard copies
 * nothing, and the executor lands it ahead of those evictions where none
 * of them touches its blocks. The dead blocks' room is then the
 * discard-and-prefetch's, and the evictions' room is left for later. */
static void room_beside_evictions(engine *e, uint64_t extra)
{
	/* The executor's answer takes its queue's lock: not asked, once per
	 * block brought, where no dead block could be discarded anyway. */
	if (!e->budget || !e->x.evicting || !residency_dead_victim(e->res))
		return;
	uint64_t out = e->x.evicting(e->x.ctx);
	while (out && over_budget(e, extra + out)) {
		struct block *v = residency_dead_victim(e->res);
		if (!v || act_discard(e, v, (struct wait_ref){ 0, 0 }) != ACT_DONE)
			return;
		e->st.discards_beside_evictions++;
	}
}

bool act_bring(engine *e, struct block *b, enum engine_op op, struct wait_ref w, uint64_t keep)
{
	if (b->live == 0 || b->host)
		return false;
	if (b->state == BLOCK_RESIDENT) {
		/* Kept, not pinned: the kernel being launched may still take
		 * it if it needs the room. */
		residency_touch(e->res, b);
		if (keep > b->keep)
			b->keep = keep;
		return false;
	}
	if (op == ENGINE_OP_DISCARD_PREFETCH) {
		/* The arena hands a freed range out again before the GPU is
		 * done with it (the program's stream order protects its own
		 * kernels, not the replayer's stream), and the block may hold
		 * the rest of a neighbour freed just now: what the GPU may
		 * still read there is destroyed only behind their free. When
		 * that free has no marker, or an allocation the model does not
		 * hold may live in the block, it is brought without destroying
		 * anything. */
		struct wait_ref dead = dead_wait(e, b);
		if ((dead.seq && !dead.mark) || e->st.unmodelled_allocs)
			op = ENGINE_OP_PREFETCH;
		else
			w = wait_later(w, dead);
	}
	/* A block of the kernel being launched is already counted in
	 * reserved (and may take kept blocks' room); any other one needs
	 * room of its own. */
	bool own = b->pin == e->seq;
	if (op == ENGINE_OP_DISCARD_PREFETCH)
		room_beside_evictions(e, own ? 0 : BLOCK_BYTES);
	if (!act_room(e, own ? 0 : BLOCK_BYTES, !own))
		return false;
	if (batch_add(e->batch, op, b->no, w) != 0)
		return false;
	if (own)
		e->reserved -= BLOCK_BYTES;
	residency_set(e->res, b, BLOCK_RESIDENT);
	/* A discard-and-prefetch orders the program's stream after itself
	 * (the executor's rule for anything that destroys data); a prefetch
	 * is waited for only by the launches that gate on it. */
	b->ticket = op == ENGINE_OP_PREFETCH ? e->flushes + 1 : 0;
	b->fetch_seq = e->seq;
	b->pin = e->seq;
	if (keep > b->keep)
		b->keep = keep;
	return true;
}

bool act_evict(engine *e, struct block *b, struct wait_ref w)
{
	if (b->state != BLOCK_RESIDENT || b->pin == e->seq)
		return false;
	if (b->live == 0) {
		if (e->policy != ENGINE_ONDEMAND)
			return false;
		w = wait_later(w, dead_wait(e, b));
	}
	if (batch_add(e->batch, ENGINE_OP_EVICT, b->no, w) != 0)
		return false;
	residency_set(e->res, b, BLOCK_ABSENT);
	b->evicted = 1;
	b->ticket = 0;
	b->by_budget = 0;
	return true;
}

enum act_result act_discard(engine *e, struct block *b, struct wait_ref w)
{
	/* A block the model counts dead may hold an allocation it could not
	 * hold (engine.c, on_alloc): from the first, none is destroyed. */
	if (b->live || e->st.unmodelled_allocs)
		return ACT_REFUSED;
	if (b->state == BLOCK_DISCARDED)
		return ACT_NOTHING;
	struct wait_ref dead = dead_wait(e, b);
	if (dead.seq && !dead.mark)
		return ACT_REFUSED;
	w = wait_later(w, dead);
	if (batch_add(e->batch, ENGINE_OP_DISCARD, b->no, w) != 0)
		return ACT_REFUSED;
	residency_set(e->res, b, BLOCK_DISCARDED);
	b->ticket = 0;
	return ACT_DONE;
}

/* What the model leaves free under the limit it keeps to: the budget,
 * or without one the capacity the plan was made for (a GPU truly that
 * full would have the driver evict for whatever lands before its room is
 * made); UINT64_MAX where there is none. */
static uint64_t model_room(const engine *e)
{
	uint64_t limit = e->budget ? e->budget : e->plan ? e->plan->assume.capacity_bytes : 0;
	if (!e->model || !limit)
		return UINT64_MAX;
	uint64_t held = residency_bytes(e->res) + e->reserved;
	return held < limit ? limit - held : 0;
}

void act_flush(engine *e)
{
	batch_flush(e->batch, &e->x, &e->st, ++e->flushes, model_room(e));
}
