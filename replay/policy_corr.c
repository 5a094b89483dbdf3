/*
 * policy_corr.c: DeepUM-style correlation prefetching (common/corr.h), for
 * the deepum policy and for the plan policy while it has lost its place.
 *
 * The tables come from the plan (block entries name plan allocations,
 * resolved through the allocation map) or are learnt while running (deepum
 * without a usable plan). Learnt tables name blocks by address: a block
 * entry holds the 2 MB block number, high 32 bits in `alloc`, low 32 in
 * `block`; addresses repeat from iteration to iteration because the arena
 * is deterministic.
 *
 * At each launch the next PCORR_LOOKAHEAD execution IDs are predicted and
 * the non-resident live blocks of each are prefetched, at most
 * PCORR_MAX_BLOCKS per launch (and PCORR_MAX_VISITS table entries looked
 * at: a prediction cut short is taken up again at the next launch), making
 * room under the budget by evicting least recently used blocks
 * (pre-eviction). Every block of a predicted kernel is kept until the
 * launch expected to run it (act.c): making room for one prediction never
 * evicts another's blocks, though the kernel being launched may take them
 * when it needs the room. A prediction handled in the last PCORR_LOOKAHEAD
 * launches is skipped, so in a steady state each launch works only on the
 * one kernel that has just come into view.
 *
 * Plan tables name allocations as the plan does, per iteration, and the
 * lookahead may run past the iteration's end: there, a previous instance
 * is the one this iteration made (allocmap_resolve_next), not the one the
 * iteration before made, which by then is freed or soon will be.
 */
#include "engine_int.h"

#include <stdlib.h>

static bool online(const engine *e)
{
	return e->tables && e->tables == e->online;
}

void pcorr_learn(engine *e, uint64_t exec_id)
{
	if (!online(e))
		return;
	if (e->n_kb > e->cap_obs) {
		struct corr_block *o = realloc(e->obs, e->n_kb * sizeof *o);
		if (!o)
			return;
		e->obs = o;
		e->cap_obs = e->n_kb;
	}
	for (size_t i = 0; i < e->n_kb; i++)
		e->obs[i] = (struct corr_block){ (uint32_t)(e->kb[i]->no >> 32), (uint32_t)e->kb[i]->no };
	corr_observe(e->online, e->prev_exec, exec_id, e->obs, e->n_kb);
}

static bool handled_recently(const engine *e, uint64_t exec_id)
{
	for (int i = 0; i < PCORR_RECENT; i++)
		if (e->recent[i].exec_id == exec_id && e->recent[i].seq + PCORR_LOOKAHEAD >= e->seq)
			return true;
	return false;
}

static void remember(engine *e, uint64_t exec_id)
{
	e->recent[e->recent_next].exec_id = exec_id;
	e->recent[e->recent_next].seq = e->seq;
	e->recent_next = (e->recent_next + 1) % PCORR_RECENT;
}

/* One predicted kernel. */
struct prediction {
	uint64_t exec_id;
	uint64_t keep; /* the launch expected to run it */
	bool past_end; /* it lies past the current iteration's end */
};

/* Whether the chain of predictions, going from exec_id to next, follows the
 * link corr_build made from the plan's last kernel to its first
 * (corr_config.wrap): next begins the next iteration. Where the two also
 * follow each other inside the iteration the tables cannot tell which is
 * meant, and the end is assumed. Tables built without the wrap have no
 * such link: every link of theirs is inside the iteration. Learnt tables
 * have no plan to tell the end by, nor instances to choose (they name
 * blocks by address). */
static bool crosses_iteration_end(const engine *e, uint64_t exec_id, uint64_t next)
{
	if (online(e) || !corr_config_of(e->tables)->wrap)
		return false;
	const struct plan_signature *sg = &e->plan->signature;
	return exec_id == sg->exec_ids[sg->n_kernels - 1] && next == sg->exec_ids[0];
}

/* The kernels predicted to follow exec_id, at most PCORR_LOOKAHEAD, into
 * out. Returns how many. */
static size_t predict(engine *e, uint64_t exec_id, struct prediction *out)
{
	uint64_t next[PCORR_LOOKAHEAD];
	size_t n = corr_next_execs(e->tables, exec_id, next, PCORR_LOOKAHEAD);
	bool past_end = false;
	for (size_t i = 0; i < n; i++) {
		/* A chain that wraps again (a plan shorter than the lookahead)
		 * stays resolved as for the next iteration: the one after has
		 * no instances of its own to tell apart yet. */
		past_end = past_end || crosses_iteration_end(e, i ? next[i - 1] : exec_id, next[i]);
		out[i] = (struct prediction){ next[i], e->seq + i + 1, past_end };
	}
	return n;
}

/* The block numbers entry c of predicted kernel k stands for now:
 * [*first, *last]; false when it stands for none (a plan allocation not
 * live). */
static bool entry_blocks(engine *e, const struct prediction *k, struct corr_block c, uint64_t *first,
			 uint64_t *last)
{
	if (online(e)) {
		*first = *last = (uint64_t)c.alloc << 32 | c.block;
		return true;
	}
	struct allocmap_where w;
	if (k->past_end)
		allocmap_resolve_next(e->allocs, c.alloc, &w);
	else
		allocmap_resolve(e->allocs, c.alloc, &w);
	uint64_t bs = corr_config_of(e->tables)->block_size;
	uint64_t off = (uint64_t)c.block * bs;
	if (w.state != ALLOCMAP_LIVE || off >= w.size)
		return false;
	uint64_t end = off + bs < w.size ? off + bs : w.size;
	*first = (w.address + off) >> BLOCK_SHIFT;
	*last = (w.address + end - 1) >> BLOCK_SHIFT;
	return true;
}

/* Per-launch limits of one pass over the predictions. */
struct pass {
	uint32_t visits; /* table entries still to look at */
	uint32_t left;   /* blocks still to prefetch */
};

/* Visits the live blocks of predicted kernel k: resident ones are
 * refreshed and kept for it; with bring, absent ones are prefetched.
 * Returns false when it had to stop (a limit of the pass, or no room). */
static bool visit_kernel(engine *e, const struct prediction *k, bool bring, struct pass *ps)
{
	size_t n;
	const struct corr_block *list = corr_blocks_of(e->tables, k->exec_id, &n);
	for (size_t i = 0; i < n; i++) {
		uint64_t first, last;
		if (!ps->visits)
			return false;
		ps->visits--;
		if (!entry_blocks(e, k, list[i], &first, &last))
			continue;
		for (uint64_t no = first; no <= last; no++) {
			struct block *b = residency_find(e->res, no);
			if (!b || !b->live || b->host)
				continue;
			if (b->state == BLOCK_RESIDENT) {
				/* Recency only matters to a budget. */
				if (e->budget)
					act_bring(e, b, ENGINE_OP_PREFETCH, (struct wait_ref){ 0, 0 }, k->keep);
				continue;
			}
			if (!bring)
				continue;
			if (!ps->left || !act_bring(e, b, ENGINE_OP_PREFETCH, (struct wait_ref){ 0, 0 }, k->keep))
				return false;
			ps->left--;
		}
	}
	return true;
}

void pcorr_prefetch(engine *e, uint64_t exec_id)
{
	if (!e->tables || !exec_id)
		return;
	struct prediction next[PCORR_LOOKAHEAD];
	bool fresh[PCORR_LOOKAHEAD];
	size_t n = predict(e, exec_id, next);
	struct pass keep = { PCORR_MAX_VISITS, 0 }, bring = { PCORR_MAX_VISITS, PCORR_MAX_BLOCKS };
	e->st.corr_launches++;
	/* Keep first what is resident of every newly predicted kernel, so
	 * that room for one is never made by evicting another's blocks. */
	for (size_t i = 0; i < n; i++)
		fresh[i] = !handled_recently(e, next[i].exec_id);
	for (size_t i = 0; e->budget && i < n; i++)
		if (fresh[i] && !visit_kernel(e, &next[i], false, &keep))
			break;
	for (size_t i = 0; i < n; i++) {
		if (!fresh[i])
			continue;
		if (!visit_kernel(e, &next[i], true, &bring))
			return;
		remember(e, next[i].exec_id);
	}
}
