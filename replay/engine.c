/*
 * engine.c: the engine_* calls (engine.h): locking, the launch pipeline,
 * allocations and frees, markers, iterations and statistics. The policies'
 * decisions are in policy_plan.c and policy_corr.c, the block-level ops in
 * act.c; docs/replay.md explains the whole.
 *
 * A launch, in order: place it in the plan (match.c) and note iteration
 * starts; pin the kernel's own blocks and reserve room for the absent ones;
 * the policy's ops (plan ops at the position, or correlation prefetch);
 * populating its reused discarded blocks; then the budget for the kernel
 * itself; then one batch call per op kind.
 * Nothing here blocks, does I/O or allocates in a steady state.
 */
#include "engine_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "minmax.h"

/* The launch this thread announced last, for engine_after_launch. */
static _Thread_local struct {
	engine *e;
	uint64_t seq;
	uint32_t pos; /* plan position to mark, or PLAN_POS_NONE */
	bool mark;    /* a marker behind it whatever the position */
} this_launch;

static const char *const policy_names[] = { "ideal", "ondemand", "deepum", "plan" };

const char *engine_policy_name(enum engine_policy p)
{
	return (unsigned)p < 4 ? policy_names[p] : "?";
}

int engine_policy_parse(const char *name, enum engine_policy *out)
{
	for (int i = 0; name && i < 4; i++) {
		if (strcmp(name, policy_names[i]) == 0) {
			*out = (enum engine_policy)i;
			return 0;
		}
	}
	return -1;
}

/* op_start[p]: the first op at position p or later (ops are sorted). */
static uint32_t *index_ops(const struct plan *p)
{
	uint32_t n = p->signature.n_kernels;
	uint32_t *start = malloc((n + 1) * sizeof *start);
	if (!start)
		return NULL;
	uint64_t i = 0;
	for (uint32_t pos = 0; pos <= n; pos++) {
		while (i < p->n_ops && p->ops[i].position < pos)
			i++;
		start[pos] = (uint32_t)i;
	}
	return start;
}

/* deepum's tables, learnt online from the program's launches (none
 * without memory for them: -1). */
static int learn_online(engine *e)
{
	struct corr_config c;
	corr_config_default(&c);
	e->online = corr_create(&c, NULL, 0);
	e->tables = e->online;
	return e->online ? 0 : -1;
}

static int create_parts(engine *e, const struct engine_config *cfg)
{
	const struct plan *plan = cfg->plan;
	if (cfg->fault_sources && !(e->faults = faultsrc_create()))
		return -1;
	e->allocs = allocmap_create(plan);
	e->res = residency_create();
	e->marks = marks_create(plan);
	e->batch = batch_create();
	e->lost = lostids_create();
	if (!e->allocs || !e->res || !e->marks || !e->batch || !e->lost)
		return -1;
	if (e->idle && !(e->footprint = footprint_create()))
		return -1;
	if (plan) {
		e->match = match_create(plan->signature.exec_ids, plan->signature.shape_ids,
					plan->signature.n_kernels);
		e->sig = sigcheck_create(&plan->signature, !cfg->framework_cache);
		e->op_start = index_ops(plan);
		if (!e->match || !e->sig || !e->op_start)
			return -1;
	}
	if (e->policy == ENGINE_PLAN) {
		e->tables = plan->corr;
	} else if (e->policy == ENGINE_DEEPUM) {
		if (plan && plan->corr)
			e->tables = plan->corr;
		else if (learn_online(e) != 0)
			return -1;
	}
	return 0;
}

/* The limit (bytes) below which the plan has nothing to do, or 0 when the
 * engine must follow launches from the start (engine_follows_launches). */
static uint64_t idle_limit(const struct engine_config *cfg)
{
	return cfg->policy == ENGINE_PLAN ? plan_idle_limit(cfg->plan, cfg->gpu_budget) : 0;
}

engine *engine_create(const struct engine_config *cfg, const struct engine_executor *exec,
		      char *err, size_t errlen)
{
	if ((unsigned)cfg->policy > ENGINE_PLAN) {
		snprintf(err, errlen, "unknown policy %d", (int)cfg->policy);
		return NULL;
	}
	if (cfg->policy == ENGINE_PLAN && !cfg->plan) {
		snprintf(err, errlen, "policy plan needs a plan (--plan)");
		return NULL;
	}
	if (!exec || !exec->issue || !exec->mark) {
		snprintf(err, errlen, "the executor lacks issue or mark");
		return NULL;
	}
	engine *e = calloc(1, sizeof *e);
	if (!e || pthread_mutex_init(&e->lock, NULL) != 0) {
		free(e);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->policy = cfg->policy;
	e->plan = cfg->plan;
	e->may_wake = cfg->may_wake;
	e->x = *exec;
	e->model = cfg->policy != ENGINE_IDEAL;
	e->budget = e->model ? cfg->gpu_budget : 0;
	e->mark_frees = e->model && (e->budget || cfg->policy != ENGINE_ONDEMAND);
	e->idle_limit = idle_limit(cfg);
	e->idle = e->st.started_idle = e->idle_limit != 0;
	if (create_parts(e, cfg) != 0) {
		engine_destroy(e);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return e;
}

void engine_destroy(engine *e)
{
	if (!e)
		return;
	match_destroy(e->match);
	sigcheck_destroy(e->sig);
	free(e->op_start);
	allocmap_destroy(e->allocs);
	residency_destroy(e->res);
	marks_destroy(e->marks);
	batch_destroy(e->batch);
	faultsrc_destroy(e->faults);
	lostids_destroy(e->lost);
	footprint_destroy(e->footprint);
	corr_destroy(e->online);
	free(e->obs);
	free(e->kb);
	free(e->iter_ns);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* Room in e->kb for n blocks more: false when memory ran out. */
static bool kb_room(engine *e, uint32_t n)
{
	struct block **p = room_for(e->kb, e->n_kb, n, &e->cap_kb, sizeof *p, 256);
	if (!p)
		return false;
	e->kb = p;
	return true;
}

static uint64_t now_ns(engine *e)
{
	return e->x.now ? e->x.now(e->x.ctx) : 0;
}

bool engine_follows_launches(engine *e)
{
	pthread_mutex_lock(&e->lock);
	bool follows = !e->idle;
	pthread_mutex_unlock(&e->lock);
	return follows;
}

/* r is no longer fresh: its contents may matter from now on. */
static void touch(engine *e, struct alloc_rec *r)
{
	if (!r || r->touched)
		return;
	r->touched = true;
	for (uint32_t i = 0; e->model && i < r->n_blocks; i++) {
		struct block *b = residency_find(e->res, r->first_block + i);
		if (b && b->fresh)
			b->fresh--;
	}
}

static int by_id(const void *a, const void *b)
{
	const struct alloc_rec *x = *(struct alloc_rec *const *)a, *y = *(struct alloc_rec *const *)b;
	return (x->id > y->id) - (x->id < y->id);
}

/* Idleness ends, at allocation r or at a launch (r NULL): the residency
 * model, left unbuilt while idle, is built from the footprint and the live
 * allocations, as keeping it all along would have left it but for the
 * recency order. Every footprint block is resident; r's other blocks are
 * absent until a kernel uses them. Dead blocks go to their list in address
 * order, live ones most recently used by their newest live allocation. No
 * allocation made while idle is fresh (idle_alloc), so none is counted
 * fresh. */
/* Counts r live in each of its blocks, made where new, and fresh there
 * too where fresh. An allocation a block of which could not be made
 * (memory ran out) is counted in unmodelled_allocs, which stops every
 * discard (act.c): it lives where the model cannot tell. */
static void hold_blocks(engine *e, const struct alloc_rec *r, bool fresh)
{
	bool held = true;
	for (uint32_t i = 0; i < r->n_blocks; i++) {
		struct block *b = residency_block(e->res, r->first_block + i);
		if (b) {
			residency_live_add(e->res, b);
			b->fresh += fresh;
		}
		held &= b != NULL;
	}
	if (!held)
		e->st.unmodelled_allocs++;
}

static void wake(engine *e, struct alloc_rec *r)
{
	e->idle = false;
	e->st.woke_at_alloc = r ? r->id : 0;
	size_t n = 0, c = 0;
	for (struct alloc_rec *a; (a = allocmap_next_live(e->allocs, &c)); n++)
		hold_blocks(e, a, false);
	uint64_t first, len;
	for (size_t i = 0; footprint_interval(e->footprint, i, &first, &len); i++)
		for (uint64_t no = first; no < first + len; no++) {
			struct block *b = residency_block(e->res, no);
			if (b) /* a kernel the engine did not follow may have used it */
				b->used_idle = 1;
			if (b && !b->live)
				residency_set(e->res, b, BLOCK_RESIDENT);
		}
	/* Live blocks filed by id, the newest last; out of memory, in the
	 * table's order. */
	struct alloc_rec **sorted = malloc((n ? n : 1) * sizeof *sorted);
	c = 0;
	for (size_t i = 0; sorted && i < n; i++)
		sorted[i] = allocmap_next_live(e->allocs, &c);
	if (sorted)
		qsort(sorted, n, sizeof *sorted, by_id);
	c = 0;
	for (size_t i = 0; i < n; i++) {
		const struct alloc_rec *a = sorted ? sorted[i] : allocmap_next_live(e->allocs, &c);
		for (uint64_t no = a->first_block; no < a->first_block + a->n_blocks; no++) {
			struct block *b = residency_find(e->res, no);
			if (b && footprint_missing(e->footprint, no, 1) == 0)
				residency_set(e->res, b, BLOCK_RESIDENT);
		}
	}
	free(sorted);
}

/* Idle, r's blocks join the footprint counted resident, unless that would
 * pass the limit: then the engine wakes, if the caller lets it; if not,
 * they join all the same (a kernel may use them before the engine wakes),
 * and the next allocation the caller lets wake does (wake_due). The
 * engine sees no writes while idle, so r counts as written from the
 * start. */
static void idle_alloc(engine *e, struct alloc_rec *r)
{
	r->touched = true;
	uint64_t added = footprint_missing(e->footprint, r->first_block, r->n_blocks);
	bool over = (footprint_blocks(e->footprint) + added) * BLOCK_BYTES > e->idle_limit;
	/* Out of memory for the footprint, the model is what is left. */
	bool lost = !over && added && footprint_add(e->footprint, r->first_block, r->n_blocks) != 0;
	if ((over || lost || e->wake_due) && (!e->may_wake || e->may_wake())) {
		e->wake_due = false;
		wake(e, r);
		return;
	}
	if (over) {
		e->st.wake_deferrals++;
		footprint_add(e->footprint, r->first_block, r->n_blocks);
	}
	e->wake_due |= over || lost;
}

static bool on_alloc(engine *e, uint64_t id, uint64_t address, uint64_t size, bool host_writes)
{
	pthread_mutex_lock(&e->lock);
	if (e->stopped) {
		pthread_mutex_unlock(&e->lock);
		return false;
	}
	struct alloc_rec *r = allocmap_add(e->allocs, id, address, size);
	if (r)
		faultsrc_note(e->faults, now_ns(e), r);
	if (r && e->sig)
		sigcheck_alloc(e->sig, size);
	if (!r)
		e->st.unmodelled_allocs++; /* as hold_blocks counts them */
	else if (e->idle)
		idle_alloc(e, r);
	else if (e->model)
		hold_blocks(e, r, true);
	if (host_writes)
		touch(e, r);
	if (r && e->model)
		onhost_alloc(e, r);
	bool follows = !e->idle;
	pthread_mutex_unlock(&e->lock);
	return follows;
}

bool engine_on_alloc(engine *e, uint64_t id, uint64_t address, uint64_t size)
{
	return on_alloc(e, id, address, size, false);
}

bool engine_on_managed_alloc(engine *e, uint64_t id, uint64_t address, uint64_t size)
{
	return on_alloc(e, id, address, size, true);
}

/* True when a block with `live` live allocations, `fresh` of them fresh,
 * may be destroyed whole: by a discard (none live) or by the
 * discard-and-prefetch of its one allocation (fresh). */
static bool destroyable(uint32_t live, uint32_t fresh)
{
	return live == 0 || (live == 1 && fresh == 1);
}

/* Drops the freed allocation's hold on its blocks. A block left dead, or
 * holding only one fresh allocation, gets the free's marker (one marker per
 * free, only then): a discard of the block, or a discard-and-prefetch of
 * that allocation, destroys the freed bytes and must wait for it. Blocks
 * left dead are discarded at once under deepum when the free is marked;
 * under a budget before its first need they wait for it (engine.h), and
 * are not counted refused. */
static void free_blocks(engine *e, struct alloc_rec *r)
{
	touch(e, r);
	/* Under a budget frees are marked once the budget needs room (the
	 * latch covers those before), and before the first launch: copies and
	 * memsets queued then are GPU work no marker of a launch follows. */
	bool marking = e->mark_frees && (!e->budget || e->mark_all || !e->st.launches), marked = false;
	uint64_t mark = 0;
	for (uint32_t i = 0; i < r->n_blocks; i++) {
		struct block *b = residency_find(e->res, r->first_block + i);
		if (!b || !b->live)
			continue;
		bool dies = residency_live_drop(e->res, b);
		if (dies && b->evicted) {
			e->st.unread_evicted_blocks++;
			e->st.unread_evicted_budget_blocks += b->by_budget;
		}
		if (!destroyable(b->live, b->fresh))
			continue;
		/* Taken at the first block that needs it, before any discard
		 * below: no launch comes between, so it serves every block. */
		if (marking && !marked) {
			mark = e->x.mark(e->x.ctx);
			marked = true;
		}
		b->dead_seq = e->st.launches;
		b->dead_mark = mark;
		if (dies && marking && e->policy == ENGINE_DEEPUM &&
		    act_discard(e, b, (struct wait_ref){ 0, 0 }) == ACT_REFUSED)
			e->st.skipped_discards++;
	}
	act_flush(e);
}

void engine_on_free(engine *e, uint64_t id)
{
	pthread_mutex_lock(&e->lock);
	struct alloc_rec r;
	/* Idle, the allocation map is all there is to update. */
	if (!e->stopped && allocmap_remove(e->allocs, id, &r) && e->model && !e->idle) {
		onhost_free(e, &r);
		free_blocks(e, &r);
	}
	pthread_mutex_unlock(&e->lock);
}

void engine_on_write(engine *e, uint64_t id)
{
	pthread_mutex_lock(&e->lock);
	if (!e->stopped)
		touch(e, allocmap_live(e->allocs, id));
	pthread_mutex_unlock(&e->lock);
}

void engine_on_unknown_write(engine *e)
{
	pthread_mutex_lock(&e->lock);
	size_t c = 0;
	for (struct alloc_rec *r; !e->stopped && (r = allocmap_next_live(e->allocs, &c));)
		touch(e, r);
	pthread_mutex_unlock(&e->lock);
}

void engine_stop(engine *e)
{
	pthread_mutex_lock(&e->lock);
	e->stopped = true;
	pthread_mutex_unlock(&e->lock);
}

static void iteration_start(engine *e, uint32_t position)
{
	uint64_t now = now_ns(e);
	/* The allocations the map keeps as the new iteration's, made while
	 * the matcher was lost, are judged with it, not the one before. */
	sigcheck_iteration_start(e->sig, allocmap_iteration_start(e->allocs, position));
	if (e->timing) {
		uint64_t *p = e->n_iter < ENGINE_ITERATION_TIMES
				      ? room_for_one(e->iter_ns, e->n_iter, &e->cap_iter, sizeof *p, 64)
				      : NULL;
		if (p) {
			e->iter_ns = p;
			e->iter_ns[e->n_iter++] = now - e->iter_start_ns;
		}
		e->st.iterations++;
	}
	/* The launches lost in an iteration count once it completes, and
	 * only from the second: the first holds the warm-up. */
	lostids_iteration_end(e->lost, e->st.iterations >= 2);
	e->ops_from = 0;
	e->timing = true;
	e->iter_start_ns = now;
}

/* A foreign plan gives no more ops; deepum learns its own tables instead
 * of predicting from another program's. */
static void become_foreign(engine *e)
{
	e->foreign = true;
	e->st.signature_mismatch = 1;
	if (e->policy == ENGINE_DEEPUM && !e->online)
		(void)learn_online(e); /* without memory for them, none */
}

static bool touches(const struct engine_access *acc, size_t n, uint64_t alloc_id)
{
	for (size_t i = 0; i < n; i++)
		if (acc[i].alloc_id == alloc_id)
			return true;
	return false;
}

/* In a ring of buffers (plan.signature.ring_keys) the steps share IDs and
 * histories, so the matcher may place a launch a step off, as where the
 * program enters the ring at another buffer than the recording did: the
 * step is the one whose key allocation the launch uses, found among the
 * same kernel's places in the other steps (at most 63 looks). A move past
 * the plan's end begins a pass, as a wrap does; one ahead within the pass
 * counts the iteration's allocations on as from there. */
static void ring_step(engine *e, struct match_step *step, const struct engine_access *acc, size_t n)
{
	const struct plan_signature *sg = &e->plan->signature;
	uint32_t pos = step->position;
	if (!sg->ring_keys || pos == PLAN_POS_NONE || !sg->ring_keys[pos] ||
	    touches(acc, n, sg->ring_keys[pos]))
		return;
	uint32_t len = sg->n_kernels / sg->ring_steps;
	for (uint32_t m = 1; m < sg->ring_steps; m++) {
		uint32_t q = (pos + m * len) % sg->n_kernels;
		if (!sg->ring_keys[q] || !touches(acc, n, sg->ring_keys[q]))
			continue;
		match_move(e->match, q);
		if (q < pos)
			step->iteration_start = true;
		else if (!step->iteration_start)
			allocmap_position_moved(e->allocs, pos, q);
		step->position = q;
		step->moved = true;
		e->st.ring_moves++;
		return;
	}
}

static void place(engine *e, uint64_t exec_id, uint64_t shape_id, const struct engine_access *acc,
		  size_t n, struct match_step *step)
{
	match_launch(e->match, exec_id, shape_id, step);
	ring_step(e, step, acc, n);
	if (step->how == MATCH_MATCHED)
		e->st.matched++;
	else if (step->how == MATCH_SHAPED)
		e->st.shaped++;
	else if (step->how == MATCH_RESYNCED)
		e->st.resynced++;
	else {
		e->st.lost++;
		lostids_count(e->lost, exec_id);
	}
	/* A place found again half an iteration back, too far into the
	 * iteration to start one (match.h), starts one when the allocation
	 * count began it while the matcher was lost: the program wrapped
	 * unseen. It is counted (time, foreign check, lost kernels, the
	 * map's instances as at any start), but step->iteration_start stays
	 * false: the ops of the positions before it, which the program ran
	 * unplaced, are stale now, as a long forward resync's would be. */
	if (step->iteration_start || (step->found_back && allocmap_began_while_lost(e->allocs)))
		iteration_start(e, step->position);
	allocmap_place_lost(e->allocs, step->lost);
	/* Whether the plan is this program's is judged by IDs alone: another
	 * program may well launch the same kernel shapes. */
	sigcheck_launch(e->sig, step->how == MATCH_MATCHED || step->how == MATCH_RESYNCED);
	if (!e->foreign && sigcheck_foreign(e->sig))
		become_foreign(e);
}

/* Pins the kernel's blocks (whole allocations its arguments point into),
 * refreshes the resident ones and reserves room for the others. Blocks in
 * host memory are left alone, and the tail an allocation placed there is
 * not walked: DLRM's tables, 245 blocks each, have half theirs there at
 * W/B 2. A host block can still turn up before it: the tail of the
 * allocation before, whose last block this one shares. */
static void kernel_begin(engine *e, const struct engine_access *acc, size_t n)
{
	e->n_kb = 0;
	e->reserved = 0;
	for (size_t i = 0; i < n; i++) {
		const struct alloc_rec *r = allocmap_live(e->allocs, acc[i].alloc_id);
		if (!r || !kb_room(e, r->gpu_blocks))
			continue;
		/* A lookup per run of blocks that lie together: launches touch
		 * 73 blocks on average in DLRM's trace, 245 for a table. */
		for (uint32_t j = 0, run; j < r->gpu_blocks; j += run) {
			run = r->gpu_blocks - j;
			struct block *b = residency_find_run(e->res, r->first_block + j, &run);
			for (uint32_t k = 0; b && k < run; k++, b++) {
				if (b->host || b->pin == e->seq)
					continue;
				b->pin = e->seq;
				e->kb[e->n_kb++] = b;
				if (b->state == BLOCK_RESIDENT) {
					residency_touch(e->res, b);
					b->use_seq = e->seq;
				} else {
					e->reserved += BLOCK_BYTES;
				}
			}
		}
	}
}

/* Whether a kernel may have used block b: one the engine followed, or one
 * while it was idle (the engine then knows only what was allocated). */
static bool used_before(const struct block *b)
{
	return b->use_seq || b->used_idle;
}

/* The kernel's blocks that were discarded and have been handed out again by
 * the arena must be populated before the kernel writes them: a GPU write to
 * a discarded range faults page by page, moving nothing but taking ~2 s per
 * GiB on the H100 (docs/replay.md). Nor should a block evicted while its
 * previous owner lived come back by faults once a fresh allocation has it:
 * its bytes on the host are dead, and faulting them in would copy them
 * (on BERT-large at W/B 2, 59 blocks an iteration of gradient buffers
 * reused after their predecessors were evicted). A fresh allocation that
 * alone holds the block gets a discard-and-prefetch, which moves nothing;
 * any other block faults in as usual. Not under ondemand, which is plain
 * Unified Memory and never discards. */
static void repopulate(engine *e, const struct engine_access *acc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct alloc_rec *r = allocmap_live(e->allocs, acc[i].alloc_id);
		for (uint32_t j = 0; r && !r->touched && j < r->n_blocks; j++) {
			struct block *b = residency_find(e->res, r->first_block + j);
			if (!b || b->live != 1 || b->pin != e->seq)
				continue;
			bool stale = b->state == BLOCK_ABSENT && used_before(b) && e->policy != ENGINE_ONDEMAND;
			if (b->state == BLOCK_DISCARDED || stale)
				act_bring(e, b, ENGINE_OP_DISCARD_PREFETCH, (struct wait_ref){ 0, 0 }, e->seq);
		}
	}
}

/* A block prefetched by this launch's ops or the one's before is one
 * the plan brings at its kernel or one kernel ahead, having found no room
 * or link time earlier; its prefetch is still in the worker's queue, and
 * a kernel gated only on the jobs issued would fault on it page by page
 * (nearly all of the plan's steady faults on the H100, docs/replay.md,
 * "A launch waits for a late prefetch to be issued"). */
static bool fetched_late(const engine *e, const struct block *b)
{
	return b->ticket && e->seq - b->fetch_seq <= GATE_ISSUE_LAUNCHES;
}

/* What the kernel's gate needs of its blocks: the newest prefetch ticket
 * among them (0: none), and whether one was fetched late. */
struct gate_need {
	uint64_t ticket;
	bool late;
};

/* The budget for the kernel itself, then its blocks are resident (they
 * fault in if nothing brought them), and its allocations are no longer
 * fresh: only now, since a discard_prefetch of a fresh allocation is meant
 * to come right before its first kernel. Returns what gate_kernel needs
 * of its blocks. */
static struct gate_need kernel_end(engine *e, const struct engine_access *acc, size_t n)
{
	struct gate_need need = { 0, false };
	for (size_t i = 0; i < n; i++)
		touch(e, allocmap_live(e->allocs, acc[i].alloc_id));
	if (!act_room(e, 0, false))
		e->st.budget_overruns++;
	for (size_t i = 0; i < e->n_kb; i++) {
		struct block *b = e->kb[i];
		if (b->state != BLOCK_RESIDENT) {
			/* Used before and absent now: evicted (or, rarely, a dead
			 * block the budget left to the driver: act_room), so its
			 * bytes come back page by page; a discarded or never-used
			 * block moves nothing. */
			if (b->state == BLOCK_ABSENT && used_before(b)) {
				e->st.refault_blocks++;
				e->st.refault_budget_blocks += b->by_budget;
				e->st.refault_shared_blocks += b->live > 1;
			}
			residency_set(e->res, b, BLOCK_RESIDENT);
		}
		b->use_seq = e->seq;
		if (b->ticket > need.ticket)
			need.ticket = b->ticket;
		need.late |= fetched_late(e, b);
	}
	e->reserved = 0;
	return need;
}

/* After the launch's flush is queued: the kernel waits for the copies it
 * needs rather than fault on blocks still in flight (plan only: deepum's
 * prefetches race the kernels, as in DeepUM), and its blocks whose
 * prefetch the executor had not issued yet are counted. The blocks'
 * tickets are spent: the launches after this one on its stream are
 * ordered after it anyway. Ticket 0 (kernel_end's newest): none has one,
 * and the blocks are not walked again. */
static void gate_kernel(engine *e, struct gate_need need)
{
	if (!need.ticket)
		return;
	uint64_t issued = UINT64_MAX;
	if (e->policy == ENGINE_PLAN && e->x.gate) {
		issued = e->x.gate(e->x.ctx, need.ticket, need.late);
		e->st.gated_launches++;
		e->st.late_gated_launches += need.late;
	}
	for (size_t i = 0; i < e->n_kb; i++) {
		e->st.unissued_blocks += e->kb[i]->ticket > issued;
		e->kb[i]->ticket = 0;
	}
}

bool engine_on_launch(engine *e, uint64_t exec_id, uint64_t shape_id, const struct engine_access *acc,
		      size_t n)
{
	pthread_mutex_lock(&e->lock);
	if (e->stopped) {
		pthread_mutex_unlock(&e->lock);
		return false;
	}
	if (e->idle)
		wake(e, NULL);
	struct match_step step = { MATCH_LOST, PLAN_POS_NONE, 0, false, false, false, false };
	uint64_t iterations = e->st.iterations, verdict = e->st.signature_mismatch;
	struct gate_need gate = { 0, false };
	e->seq = ++e->st.launches;
	if (e->match)
		place(e, exec_id, shape_id, acc, n, &step);
	if (e->model)
		kernel_begin(e, acc, n);
	if (e->policy == ENGINE_PLAN && !e->foreign) {
		if (step.position != PLAN_POS_NONE)
			pplan_ops(e, &step);
		else if (step.lost)
			pcorr_prefetch(e, exec_id);
	} else if (e->policy == ENGINE_DEEPUM) {
		pcorr_learn(e, exec_id);
		pcorr_prefetch(e, exec_id);
	}
	if (e->model) {
		repopulate(e, acc, n);
		gate = kernel_end(e, acc, n);
	}
	act_flush(e);
	if (e->model)
		gate_kernel(e, gate);
	e->prev_exec = exec_id;

	this_launch.e = e;
	this_launch.seq = e->seq;
	this_launch.pos = e->policy == ENGINE_PLAN ? step.position : PLAN_POS_NONE;
	this_launch.mark = e->mark_all;
	bool news = e->st.iterations != iterations || e->st.signature_mismatch != verdict;
	pthread_mutex_unlock(&e->lock);
	return news;
}

void engine_after_launch(engine *e)
{
	if (this_launch.e != e || !this_launch.seq)
		return;
	uint64_t seq = this_launch.seq;
	uint32_t pos = this_launch.pos;
	this_launch.seq = 0;
	/* The bitmap never changes after creation, and whether to mark every
	 * launch was decided under the lock at the launch: no lock needed to
	 * decide that nothing is to be recorded. */
	if (!marks_position_wanted(e->marks, pos))
		pos = PLAN_POS_NONE;
	if (!this_launch.mark && pos == PLAN_POS_NONE)
		return;
	pthread_mutex_lock(&e->lock);
	uint64_t mark = e->stopped ? 0 : e->x.mark(e->x.ctx);
	if (mark)
		marks_note(e->marks, seq, pos, mark);
	pthread_mutex_unlock(&e->lock);
}

void engine_get_stats(engine *e, struct engine_stats *out)
{
	pthread_mutex_lock(&e->lock);
	*out = e->st;
	out->modelled_peak_bytes = residency_peak(e->res);
	if (e->footprint)
		out->modelled_peak_bytes = max_u64(out->modelled_peak_bytes,
						   footprint_blocks(e->footprint) * BLOCK_BYTES);
	pthread_mutex_unlock(&e->lock);
}

size_t engine_iteration_times(engine *e, uint64_t *out, size_t max)
{
	pthread_mutex_lock(&e->lock);
	size_t n = e->n_iter < max ? e->n_iter : max;
	if (n)
		memcpy(out, e->iter_ns, n * sizeof *out);
	pthread_mutex_unlock(&e->lock);
	return n;
}

size_t engine_fault_sources(engine *e, const struct fault_event *ev, size_t n, struct fault_source *out,
			    size_t max, struct fault_totals *tot)
{
	if (!e->faults) {
		*tot = (struct fault_totals){ .unattributed = n };
		return 0;
	}
	pthread_mutex_lock(&e->lock);
	size_t k = faultsrc_attribute(e->faults, ev, n, out, max, tot);
	pthread_mutex_unlock(&e->lock);
	return k;
}

size_t engine_lost_kernels(engine *e, struct lost_id *out, size_t max, struct lost_totals *tot)
{
	pthread_mutex_lock(&e->lock);
	size_t k = lostids_top(e->lost, out, max, tot);
	pthread_mutex_unlock(&e->lock);
	return k;
}
