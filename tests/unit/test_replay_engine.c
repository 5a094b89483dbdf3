/*
 * Unit tests for the replay engine under the plan policy (replay/engine.c,
 * policy_plan.c, policy_corr.c), judged by the recording executor
 * (replay/oplog.c): ops at their positions in kind order, behind the right
 * markers, widened to 2 MB blocks and coalesced; markers only where an op
 * waits; discards never on live memory (a block shared with a live small
 * allocation, a reused range, a written fresh allocation) nor behind a
 * free whose marker could not be recorded; iteration
 * allocations resolved by ordinal, previous instances in every iteration,
 * and none after an iteration that drifted from the plan (no discard of
 * the range of the instance before, live again or dead);
 * ops of a skipped position, and none past PLAN_REPLAY_SKIPPED; each op
 * once where two kernels run swapped, again where the program runs a
 * stretch again; a foreign
 * plan detected and then left alone; correlation fallback when lost (past
 * the iteration's end, previous instances as the next iteration's; lost
 * across the program's own iteration start, the new iteration's instances,
 * and the iteration counted where found again in its middle, without the
 * ops before),
 * and the plan again once matched; ideal issuing nothing; iteration times;
 * the launches that tell the caller to read the stats; allocations the plan
 * keeps in host memory placed at their allocation (an earlier tenant's
 * resident blocks evicted first), left out of the residency model and
 * released at their free, and only under the plan policy, on blocks of
 * their own; on-demand migrations charged to the plan's allocations; the
 * launches it lost in steady iterations counted by execution ID; the
 * blocks the model expects to fault back in; a ring of buffers placed by
 * the plan's ring keys.
 */
#include "testutil.h"

#include "failing_alloc.h"

#include "plan.h"
#include "replay/engine.h"
#include "replay/match.h"
#include "replay/oplog.h"

#define MB ((uint64_t)1 << 20)
#define BASE ((uint64_t)0x7f0000000000)

enum { K0 = 0x100, K1, K2, K3, K4, K5, U = 0x900 };

/* ---- building plans ---- */

static struct plan *new_plan(const uint64_t *ids, uint32_t n, const uint64_t *sizes, uint32_t ns)
{
	struct plan *p = plan_create();
	assert_non_null(p);
	p->signature.n_kernels = n;
	p->signature.exec_ids = malloc(n * sizeof(uint64_t));
	memcpy(p->signature.exec_ids, ids, n * sizeof(uint64_t));
	p->signature.n_alloc_sizes = ns;
	p->signature.alloc_sizes = malloc((ns ? ns : 1) * sizeof(uint64_t));
	if (ns)
		memcpy(p->signature.alloc_sizes, sizes, ns * sizeof(uint64_t));
	p->assume.capacity_bytes = (uint64_t)1 << 30;
	return p;
}

/* How many of the iteration's allocations precede each of the plan's
 * kernels (signature.alloc_before), one word per kernel. */
static void set_alloc_before(struct plan *p, const uint64_t *before)
{
	size_t bytes = p->signature.n_kernels * sizeof *before;
	p->signature.alloc_before = malloc(bytes);
	assert_non_null(p->signature.alloc_before);
	memcpy(p->signature.alloc_before, before, bytes);
}

static uint32_t add_alloc(struct plan *p, uint8_t origin, uint64_t ordinal, uint64_t size)
{
	p->allocs = realloc(p->allocs, (p->n_allocs + 1) * sizeof *p->allocs);
	p->allocs[p->n_allocs] = (struct plan_alloc){ origin, ordinal, size };
	return p->n_allocs++;
}

/* A plan for the first n of the kernels 0x1000, 0x1001, ..., with one
 * 2 MB persistent buffer (its index in *buf); ids gets all n_ids of them,
 * the ones past n being kernels the plan does not know. */
static struct plan *row_plan(uint64_t *ids, uint32_t n_ids, uint32_t n, uint32_t *buf)
{
	for (uint32_t i = 0; i < n_ids; i++)
		ids[i] = 0x1000 + (uint64_t)i;
	struct plan *p = new_plan(ids, n, NULL, 0);
	*buf = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 2 * MB);
	return p;
}

static void add_op(struct plan *p, uint32_t pos, uint8_t kind, uint32_t after, uint32_t deadline,
		   uint32_t alloc, uint64_t offset, uint64_t bytes)
{
	p->ops = realloc(p->ops, (p->n_ops + 1) * sizeof *p->ops);
	p->ops[p->n_ops++] = (struct plan_op){ pos, kind, after, deadline, alloc, offset, bytes };
}

static void finish_plan(struct plan *p)
{
	char err[256];
	plan_finalize(p);
	if (plan_validate(p, "test", err, sizeof err) != 0)
		fail_msg("%s", err);
}

/* ---- running the engine ---- */

struct rig {
	oplog *log;
	struct engine_executor x;
	engine *e;
	size_t seen; /* log entries already inspected */
};

static void rig_start_config(struct rig *r, const struct engine_config *cfg)
{
	char err[256];
	r->log = oplog_create();
	assert_non_null(r->log);
	r->x = oplog_executor(r->log);
	r->e = engine_create(cfg, &r->x, err, sizeof err);
	if (!r->e)
		fail_msg("%s", err);
	r->seen = 0;
}

/* The engine as umreplay --stats makes it (with the allocation log). */
static void rig_start(struct rig *r, enum engine_policy policy, uint64_t budget,
		      const struct plan *p)
{
	struct engine_config cfg = { policy, budget, p, true, false, NULL };
	rig_start_config(r, &cfg);
}

static void rig_stop(struct rig *r)
{
	assert_false(oplog_failed(r->log));
	engine_destroy(r->e);
	oplog_destroy(r->log);
}

/* Launches exec_id touching allocations ids[0 .. n), then marks it;
 * returns what engine_on_launch did. */
static bool launch(struct rig *r, uint64_t exec_id, const uint64_t *ids, size_t n)
{
	struct engine_access acc[8];
	for (size_t i = 0; i < n; i++)
		acc[i] = (struct engine_access){ ids[i] };
	bool news = engine_on_launch(r->e, exec_id, 0, acc, n);
	engine_after_launch(r->e);
	return news;
}

/* The entries logged since the last call. */
static const struct oplog_entry *fresh(struct rig *r, size_t *n)
{
	size_t all;
	const struct oplog_entry *e = oplog_entries(r->log, &all);
	*n = all - r->seen;
	e += r->seen;
	r->seen = all;
	return e;
}

/* Batches only (markers skipped) since the last call: up to max into out. */
static size_t batches(struct rig *r, const struct oplog_entry **out, size_t max)
{
	size_t n, k = 0;
	const struct oplog_entry *e = fresh(r, &n);
	for (size_t i = 0; i < n; i++)
		if (!e[i].is_mark) {
			assert_true(k < max);
			out[k++] = &e[i];
		}
	return k;
}

static void expect_batch(const struct oplog_entry *e, enum engine_op op, uint64_t wait,
			 const struct engine_range *want, size_t n)
{
	assert_false(e->is_mark);
	assert_int_equal(e->op, op);
	assert_int_equal(e->mark, wait);
	assert_int_equal(e->n, n);
	for (size_t i = 0; i < n; i++) {
		assert_true(e->ranges[i].address == want[i].address);
		assert_true(e->ranges[i].bytes == want[i].bytes);
	}
}

/*
 * The program of most tests: persistent W1 (8 MiB at BASE), W2 (4 MiB at
 * BASE + 8 MiB), two small S1 and S2 sharing the block at BASE + 12 MiB;
 * per iteration K0 .. K5 and one activation (6 MiB at BASE + 16 MiB,
 * iteration ordinal 1) made after K0 and freed after K4.
 */
static const uint64_t prog_ids[6] = { K0, K1, K2, K3, K4, K5 };
static const uint64_t act_size = 6 * MB;

struct prog {
	uint32_t w1, w2, s1, act; /* plan allocation indices */
};

static struct plan *prog_plan(struct prog *a)
{
	struct plan *p = new_plan(prog_ids, 6, &act_size, 1);
	a->w1 = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 8 * MB);
	a->w2 = add_alloc(p, PLAN_ALLOC_PERSISTENT, 2, 4 * MB);
	a->s1 = add_alloc(p, PLAN_ALLOC_PERSISTENT, 3, 4096);
	a->act = add_alloc(p, PLAN_ALLOC_ITERATION, 1, act_size);
	return p;
}

static void prog_setup(struct rig *r)
{
	engine_on_alloc(r->e, 1, BASE, 8 * MB);
	engine_on_alloc(r->e, 2, BASE + 8 * MB, 4 * MB);
	engine_on_alloc(r->e, 3, BASE + 12 * MB, 4096);
	engine_on_alloc(r->e, 4, BASE + 12 * MB + 4096, 4096);
}

/* One iteration; the activation gets id act_id. free_s1: S1 is freed after
 * K4 (in the first iteration only). */
static void prog_iteration(struct rig *r, uint64_t act_id, int free_s1)
{
	launch(r, K0, (const uint64_t[]){ 4 }, 1);
	engine_on_alloc(r->e, act_id, BASE + 16 * MB, act_size);
	launch(r, K1, (const uint64_t[]){ 1, act_id }, 2);
	launch(r, K2, (const uint64_t[]){ 2, act_id }, 2);
	launch(r, K3, (const uint64_t[]){ act_id, 4 }, 2);
	launch(r, K4, (const uint64_t[]){ act_id }, 1);
	engine_on_free(r->e, act_id);
	if (free_s1)
		engine_on_free(r->e, 3);
	launch(r, K5, NULL, 0);
}

/* The batches of kind op in the whole log (placements are no batches). */
static size_t count_kind(struct rig *r, enum engine_op op)
{
	size_t n, k = 0;
	const struct oplog_entry *e = oplog_entries(r->log, &n);
	for (size_t i = 0; i < n; i++)
		k += !e[i].is_mark && !e[i].place && e[i].op == op;
	return k;
}

/* The placements in host memory in the whole log. */
static size_t count_places(struct rig *r)
{
	size_t n, k = 0;
	const struct oplog_entry *e = oplog_entries(r->log, &n);
	for (size_t i = 0; i < n; i++)
		k += e[i].place != 0;
	return k;
}

/* The engine's stats after `iterations` iterations of the program under
 * policy, budget and plan p, and then (when not NULL) what `then` does. */
static struct engine_stats stats_then(enum engine_policy policy, uint64_t budget, const struct plan *p,
				      int iterations, void (*then)(struct rig *))
{
	struct rig r;
	struct engine_stats st;
	rig_start(&r, policy, budget, p);
	prog_setup(&r);
	for (int i = 0; i < iterations; i++)
		prog_iteration(&r, 5 + (uint64_t)i, 0);
	if (then)
		then(&r);
	engine_get_stats(r.e, &st);
	rig_stop(&r);
	return st;
}

static struct engine_stats stats_after(enum engine_policy policy, uint64_t budget, const struct plan *p,
				       int iterations)
{
	return stats_then(policy, budget, p, iterations, NULL);
}

/* The refault count of the same with no budget. */
static uint64_t refaults_after(enum engine_policy policy, const struct plan *p, int iterations)
{
	return stats_after(policy, 0, p, iterations).refault_blocks;
}

/* A block evicted and used again with no op bringing it faults back in:
 * counted, once per use; a first use, a prefetch before the use and ideal
 * count nothing. */
static void refaults_counted(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	add_op(p, 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, a.w1, 0, 8 * MB);
	finish_plan(p);
	assert_int_equal(refaults_after(ENGINE_PLAN, p, 1), 0);     /* W1's first use */
	assert_int_equal(refaults_after(ENGINE_PLAN, p, 3), 2 * 4); /* its 4 blocks, twice */
	add_op(p, 0, PLAN_OP_PREFETCH, PLAN_POS_NONE, 1, a.w1, 0, 8 * MB);
	finish_plan(p);
	assert_int_equal(refaults_after(ENGINE_PLAN, p, 3), 0);
	assert_int_equal(refaults_after(ENGINE_IDEAL, p, 3), 0);
	plan_destroy(p);
}

/* Refaults by how their blocks left: the budget's evictions (all of
 * ondemand's), or an op of the policy, which may have moved a block that
 * other live tensors share. */
static void refault_causes(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	finish_plan(p);
	/* 8 blocks for 10: the budget evicts the least recently used, among
	 * them the block S1 and S2 share, which comes back once an
	 * iteration. */
	struct engine_stats st = stats_after(ENGINE_ONDEMAND, 16 * MB, p, 3);
	assert_true(st.refault_blocks > 3);
	assert_int_equal(st.refault_budget_blocks, st.refault_blocks);
	assert_int_equal(st.refault_shared_blocks, 3);
	/* The plan evicts S1 after K1 with its block, which S2 shares: K3
	 * faults S2's block back in, once an iteration. W1's are its own. */
	add_op(p, 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, a.s1, 0, 4096);
	add_op(p, 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, a.w1, 0, 8 * MB);
	finish_plan(p);
	st = stats_after(ENGINE_PLAN, 0, p, 3);
	assert_int_equal(st.refault_blocks, 3 + 2 * 4); /* S2's block thrice, W1's 4 twice */
	assert_int_equal(st.refault_shared_blocks, 3);
	assert_int_equal(st.refault_budget_blocks, 0);
	plan_destroy(p);
}

static void free_w1(struct rig *r)
{
	engine_on_free(r->e, 1);
}

/* W1's K1 of the next iteration, then its free. */
static void use_and_free_w1(struct rig *r)
{
	launch(r, K0, (const uint64_t[]){ 4 }, 1);
	launch(r, K1, (const uint64_t[]){ 1 }, 1);
	free_w1(r);
}

/* A block freed while off the GPU after an eviction: the copy to the host
 * was never read. Counted once, at the free, and only for the eviction
 * that left it off the GPU; by who evicted it. */
static void unread_evictions_counted(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	add_op(p, 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, a.w1, 0, 8 * MB);
	finish_plan(p);
	/* W1 (4 blocks) evicted after K1, its only kernel, and freed there. */
	struct engine_stats st = stats_then(ENGINE_PLAN, 0, p, 1, free_w1);
	assert_int_equal(st.unread_evicted_blocks, 4);
	assert_int_equal(st.unread_evicted_budget_blocks, 0);
	/* Faulted back in by the next K1 and freed before it leaves again:
	 * what was copied out was read back. */
	st = stats_then(ENGINE_PLAN, 0, p, 1, use_and_free_w1);
	assert_int_equal(st.refault_blocks, 4);
	assert_int_equal(st.unread_evicted_blocks, 0);
	/* Under ondemand only the budget evicts: 8 blocks for 10 leave 2 of
	 * W1's 4 off the GPU by the end of an iteration (K2 to K5 and K0 use
	 * the others). */
	st = stats_then(ENGINE_ONDEMAND, 16 * MB, p, 1, free_w1);
	assert_int_equal(st.unread_evicted_blocks, 2);
	assert_int_equal(st.unread_evicted_budget_blocks, 2);
	plan_destroy(p);
}

/* How the program writes the second activation before its first kernel. */
enum act_write { ACT_UNWRITTEN, ACT_MEMSET, ACT_FROM_HOST /* its own managed memory */ };

/* The plan evicts the activation while it lives (at K2, after K1); the
 * next iteration's activation gets its blocks. Runs two iterations and
 * returns the blocks the engine expects to fault back in, with the
 * discard-and-prefetch batches in *fills. */
static uint64_t stale_blocks_refaults(enum engine_policy policy, enum act_write written, size_t *fills)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	add_op(p, 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, a.act, 0, act_size);
	finish_plan(p);
	struct rig r;
	rig_start(&r, policy, 0, p);
	prog_setup(&r);
	for (uint64_t act = 5; act <= 6; act++) {
		launch(&r, K0, (const uint64_t[]){ 4 }, 1);
		if (written == ACT_FROM_HOST && act == 6)
			engine_on_managed_alloc(r.e, act, BASE + 16 * MB, act_size);
		else
			engine_on_alloc(r.e, act, BASE + 16 * MB, act_size);
		if (written == ACT_MEMSET && act == 6)
			engine_on_write(r.e, act);
		launch(&r, K1, (const uint64_t[]){ 1, act }, 2);
		launch(&r, K2, (const uint64_t[]){ 2 }, 1);
		launch(&r, K3, (const uint64_t[]){ 4 }, 1);
		launch(&r, K4, NULL, 0);
		engine_on_free(r.e, act);
		launch(&r, K5, NULL, 0);
	}
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	*fills = count_kind(&r, ENGINE_OP_DISCARD_PREFETCH);
	rig_stop(&r);
	plan_destroy(p);
	return st.refault_blocks;
}

/* A block evicted while its allocation lived holds dead bytes on the host
 * once that allocation is freed: a fresh allocation that alone holds it is
 * populated by a discard-and-prefetch before its first kernel, not faulted
 * back in; one the program has written, or may have from the host, is
 * not touched. */
static void stale_blocks_repopulated(void **state)
{
	size_t fills;
	assert_int_equal(stale_blocks_refaults(ENGINE_PLAN, ACT_UNWRITTEN, &fills), 0);
	assert_int_equal(fills, 1); /* the second activation's 3 blocks, one batch */
	for (enum act_write how = ACT_MEMSET; how <= ACT_FROM_HOST; how++) {
		assert_int_equal(stale_blocks_refaults(ENGINE_PLAN, how, &fills), 3);
		assert_int_equal(fills, 0);
	}
}

/* Under a budget the plan's discards wait until the budget needs the room:
 * with room to spare, the activation's blocks stay resident after its free
 * and the next iteration's activation reuses them with no op at all. The
 * discards are left, not tried: none is counted skipped (a discard tried
 * here would be refused, as nothing marks the activation's last use yet,
 * and counted). */
static void budget_defers_plan_discards(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	add_op(p, 5, PLAN_OP_DISCARD, 4, PLAN_POS_NONE, a.act, 0, act_size);
	add_op(p, 1, PLAN_OP_DISCARD_PREFETCH, 0, 1, a.act, 0, act_size);
	finish_plan(p);
	struct rig r;
	struct engine_stats st;
	rig_start(&r, ENGINE_PLAN, 64 * MB, p);
	prog_setup(&r);
	prog_iteration(&r, 5, 0);
	prog_iteration(&r, 6, 0);
	prog_iteration(&r, 7, 0);
	assert_int_equal(count_kind(&r, ENGINE_OP_DISCARD), 0);
	/* The first activation's blocks had never been used: populated once. */
	assert_int_equal(count_kind(&r, ENGINE_OP_DISCARD_PREFETCH), 1);
	engine_get_stats(r.e, &st);
	assert_int_equal(st.skipped_discards, 0);
	rig_stop(&r);

	/* Without room (8 blocks for 10), dead blocks are discarded when the
	 * room is needed (here by a kernel on W1 and W2 between a free and
	 * the next allocation), and a reused discarded block is populated
	 * before its first kernel writes it. */
	rig_start(&r, ENGINE_PLAN, 16 * MB, p);
	prog_setup(&r);
	prog_iteration(&r, 5, 0);
	launch(&r, K5, (const uint64_t[]){ 1, 2 }, 2);
	prog_iteration(&r, 6, 0);
	size_t n;
	const struct oplog_entry *e = oplog_entries(r.log, &n);
	size_t discards = 0, after = 0;
	for (size_t i = 0; i < n; i++) {
		if (e[i].is_mark)
			continue;
		discards += e[i].op == ENGINE_OP_DISCARD;
		after += discards && e[i].op == ENGINE_OP_DISCARD_PREFETCH;
	}
	assert_true(discards > 0);
	assert_true(after > 0);
	engine_get_stats(r.e, &st);
	assert_true(st.modelled_peak_bytes <= 16 * MB);
	rig_stop(&r);
	plan_destroy(p);
}

/*
 * Evictions still on their way out of the GPU hold their room there, which
 * the model already counts as made: a discard-and-prefetch under a budget
 * takes a dead block's room first (its discard copies nothing, and the
 * executor lands it ahead of them). Budget 3 blocks: K0 fills it with W, X
 * and Z; K1's V pushes W out (the budget's first need: markers from then
 * on); X is freed, dead and resident; at K2 the plan evicts Z and
 * discard-prefetches the fresh Y. With one block still on its way out
 * (evicting), X is discarded for Y; with none, X stays and Y takes Z's
 * room.
 */
static void discard_prefetch_beside_evictions(void **state)
{
	const uint64_t ids[3] = { K0, K1, K2 }, sizes[1] = { 2 * MB };
	for (int out = 0; out < 2; out++) {
		struct plan *p = new_plan(ids, 3, sizes, 1);
		uint32_t z = add_alloc(p, PLAN_ALLOC_PERSISTENT, 3, 2 * MB);
		uint32_t y = add_alloc(p, PLAN_ALLOC_ITERATION, 1, 2 * MB);
		add_op(p, 2, PLAN_OP_EVICT, 0, PLAN_POS_NONE, z, 0, 2 * MB);
		add_op(p, 2, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE, 2, y, 0, 2 * MB);
		finish_plan(p);
		struct rig r;
		rig_start(&r, ENGINE_PLAN, 6 * MB, p);
		oplog_set_evicting(r.log, out ? 2 * MB : 0);
		engine_on_alloc(r.e, 1, BASE, 2 * MB);          /* W */
		engine_on_alloc(r.e, 2, BASE + 2 * MB, 2 * MB); /* X */
		engine_on_alloc(r.e, 3, BASE + 4 * MB, 2 * MB); /* Z */
		engine_on_alloc(r.e, 4, BASE + 6 * MB, 2 * MB); /* V */
		launch(&r, K0, (const uint64_t[]){ 1, 2, 3 }, 3);
		launch(&r, K1, (const uint64_t[]){ 4, 2 }, 2);
		engine_on_free(r.e, 2);
		engine_on_alloc(r.e, 5, BASE + 8 * MB, 2 * MB); /* Y */
		const struct oplog_entry *e[8];
		batches(&r, e, 8);
		launch(&r, K2, (const uint64_t[]){ 5 }, 1);
		assert_int_equal(batches(&r, e, 8), 2 + out);
		if (out)
			assert_true(e[0]->op == ENGINE_OP_DISCARD && e[0]->n == 1 &&
				    e[0]->ranges[0].address == BASE + 2 * MB && e[0]->ranges[0].bytes == 2 * MB);
		assert_true(e[out]->op == ENGINE_OP_EVICT && e[out]->ranges[0].address == BASE + 4 * MB);
		assert_true(e[out + 1]->op == ENGINE_OP_DISCARD_PREFETCH && e[out + 1]->ranges[0].address == BASE + 8 * MB);
		struct engine_stats st;
		engine_get_stats(r.e, &st);
		assert_int_equal(st.discards_beside_evictions, out);
		assert_true(st.modelled_peak_bytes <= 6 * MB);
		rig_stop(&r);
		plan_destroy(p);
	}
}

static void ops_at_positions_with_waits(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	/* K1: prefetch W2's first 3 MiB and W1's last 2 MiB (adjacent once
	 * widened: one range); K3: evict W1's first MiB after K1; K5: discard
	 * the activation after K4, and S1 (its block holds live S2). */
	add_op(p, 1, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, a.w2, 0, 3 * MB);
	add_op(p, 1, PLAN_OP_PREFETCH, PLAN_POS_NONE, 1, a.w1, 6 * MB, 2 * MB);
	add_op(p, 3, PLAN_OP_EVICT, 1, PLAN_POS_NONE, a.w1, 0, MB);
	add_op(p, 5, PLAN_OP_DISCARD, 4, PLAN_POS_NONE, a.act, 0, act_size);
	add_op(p, 5, PLAN_OP_DISCARD, 4, PLAN_POS_NONE, a.s1, 0, 4096);
	finish_plan(p);

	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	prog_setup(&r);
	const struct oplog_entry *b[8];
	size_t n;

	launch(&r, K0, (const uint64_t[]){ 4 }, 1);
	assert_int_equal(batches(&r, b, 8), 0);
	engine_on_alloc(r.e, 5, BASE + 16 * MB, act_size);
	launch(&r, K1, (const uint64_t[]){ 1, 5 }, 2);
	const struct oplog_entry *e = fresh(&r, &n);
	assert_int_equal(n, 2); /* the prefetch, then the marker behind K1 */
	expect_batch(&e[0], ENGINE_OP_PREFETCH, 0,
		     (const struct engine_range[]){ { BASE + 6 * MB, 6 * MB } }, 1);
	assert_true(e[1].is_mark && e[1].mark == 1);
	launch(&r, K2, (const uint64_t[]){ 2, 5 }, 2);
	assert_int_equal(batches(&r, b, 8), 0);
	launch(&r, K3, (const uint64_t[]){ 5, 4 }, 2);
	assert_int_equal(batches(&r, b, 8), 1);
	expect_batch(b[0], ENGINE_OP_EVICT, 1, (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
	launch(&r, K4, (const uint64_t[]){ 5 }, 1); /* marker 2 */
	engine_on_free(r.e, 5);                      /* marker 3: its blocks die */
	engine_on_free(r.e, 3);                      /* S1: its block lives on (S2) */
	e = fresh(&r, &n);
	assert_int_equal(n, 2);
	assert_true(e[0].is_mark && e[0].mark == 2 && e[1].is_mark && e[1].mark == 3);
	launch(&r, K5, NULL, 0);
	assert_int_equal(batches(&r, b, 8), 1);
	expect_batch(b[0], ENGINE_OP_DISCARD, 3,
		     (const struct engine_range[]){ { BASE + 16 * MB, 6 * MB } }, 1);

	/* The second iteration: its own activation (a new id, the same
	 * address), W1's block evicted again behind this iteration's K1. */
	prog_iteration(&r, 6, 0);
	/* K1's prefetches find W2 and W1's last block resident (used in the
	 * first iteration): skipped; the new activation's blocks were
	 * discarded, so they are populated without a copy before K1 writes
	 * them, behind the old activation's free (marker 3: its kernels may
	 * still be queued). Markers: 4 behind K1, 5 behind K4, 6 at the
	 * activation's free. */
	assert_int_equal(batches(&r, b, 8), 3);
	expect_batch(b[0], ENGINE_OP_DISCARD_PREFETCH, 3,
		     (const struct engine_range[]){ { BASE + 16 * MB, 6 * MB } }, 1);
	expect_batch(b[1], ENGINE_OP_EVICT, 4, (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
	expect_batch(b[2], ENGINE_OP_DISCARD, 6,
		     (const struct engine_range[]){ { BASE + 16 * MB, 6 * MB } }, 1);

	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.launches, 12);
	assert_int_equal(st.matched, 12);
	assert_int_equal(st.iterations, 1);
	assert_int_equal(st.skipped_discards, 2); /* S1, twice */
	assert_int_equal(st.signature_mismatch, 0);
	rig_stop(&r);
	plan_destroy(p);
}

/* Under a budget of two blocks, K0's ops prefetch A and B for K2, and
 * K1's prefetch C for K2 as well: there is no room, and a prefetch never
 * pushes out another still to be used, so C is left to fault in. K2 then
 * makes room for its own C by evicting A, kept for K2 no more than B is,
 * and the least recently used. */
static void prefetch_never_evicts_a_kept_prefetch(void **state)
{
	const uint64_t ids[3] = { K0, K1, K2 };
	struct plan *p = new_plan(ids, 3, NULL, 0);
	uint32_t pa = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 2 * MB);
	uint32_t pb = add_alloc(p, PLAN_ALLOC_PERSISTENT, 2, 2 * MB);
	uint32_t pc = add_alloc(p, PLAN_ALLOC_PERSISTENT, 3, 2 * MB);
	add_op(p, 0, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, pa, 0, 2 * MB);
	add_op(p, 0, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, pb, 0, 2 * MB);
	add_op(p, 1, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, pc, 0, 2 * MB);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 4 * MB, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	engine_on_alloc(r.e, 2, BASE + 2 * MB, 2 * MB);
	engine_on_alloc(r.e, 3, BASE + 8 * MB, 2 * MB);
	const struct oplog_entry *b[4];
	launch(&r, K0, NULL, 0);
	assert_int_equal(batches(&r, b, 4), 1);
	expect_batch(b[0], ENGINE_OP_PREFETCH, 0, (const struct engine_range[]){ { BASE, 4 * MB } }, 1);
	launch(&r, K1, NULL, 0);
	assert_int_equal(batches(&r, b, 4), 0);
	launch(&r, K2, (const uint64_t[]){ 3 }, 1);
	assert_int_equal(batches(&r, b, 4), 1);
	assert_int_equal(b[0]->op, ENGINE_OP_EVICT);
	assert_true(b[0]->n == 1 && b[0]->ranges[0].address == BASE && b[0]->ranges[0].bytes == 2 * MB);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.budget_evictions, 1);
	rig_stop(&r);
	plan_destroy(p);
}

/* A plan eviction waits for the later of its op's marker and the marker of
 * the block's last use: W1's first block, evicted at K3 after K1, was used
 * by K2 too (the program may use an allocation later than the plan says),
 * or evicted after K2, it was last used by K1. Either way the eviction
 * goes behind K2 (marker 2), not behind K1 (marker 1); the other op (W2,
 * never resident) only makes the plan mark the launch it names. */
static void eviction_waits_for_its_op_and_the_blocks_last_use(void **state)
{
	for (int used_late = 0; used_late < 2; used_late++) {
		struct prog a;
		struct plan *p = prog_plan(&a);
		add_op(p, 3, PLAN_OP_EVICT, used_late ? 1 : 2, PLAN_POS_NONE, a.w1, 0, 2 * MB);
		add_op(p, 5, PLAN_OP_EVICT, used_late ? 2 : 1, PLAN_POS_NONE, a.w2, 0, 4 * MB);
		finish_plan(p);
		struct rig r;
		rig_start(&r, ENGINE_PLAN, 0, p);
		prog_setup(&r);
		launch(&r, K0, (const uint64_t[]){ 4 }, 1);
		launch(&r, K1, (const uint64_t[]){ 1 }, 1);            /* marker 1 */
		launch(&r, K2, (const uint64_t[]){ 1 }, used_late ? 1 : 0); /* marker 2 */
		const struct oplog_entry *b[4];
		assert_int_equal(batches(&r, b, 4), 0);
		launch(&r, K3, NULL, 0);
		assert_int_equal(batches(&r, b, 4), 1);
		expect_batch(b[0], ENGINE_OP_EVICT, 2, (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
		rig_stop(&r);
		plan_destroy(p);
	}
}

/* Kernel 3 run before 2: the resync to 3 issues the eviction at 3, and 2,
 * run back, uses the range again. The launches after it, placed ahead
 * again (4 lost, 5 resynced, positions 3 and 4 jumped over), do not issue
 * the eviction at 3 a second time. */
static void reordered_kernels_repeat_no_eviction(void **state)
{
	enum { N = 40 };
	uint64_t ids[N];
	uint32_t a;
	struct plan *p = row_plan(ids, N, N, &a);
	add_op(p, 3, PLAN_OP_EVICT, PLAN_POS_NONE, PLAN_POS_NONE, a, 0, 2 * MB);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	const uint64_t uses_a[] = { 1 };
	launch(&r, ids[0], uses_a, 1);
	launch(&r, ids[1], NULL, 0);
	launch(&r, ids[3], NULL, 0);
	assert_int_equal(count_kind(&r, ENGINE_OP_EVICT), 1);
	launch(&r, ids[2], uses_a, 1);
	for (int i = 4; i < 8; i++)
		launch(&r, ids[i], NULL, 0);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.resynced, 3);
	assert_int_equal(count_kind(&r, ENGINE_OP_EVICT), 1);
	rig_stop(&r);
	plan_destroy(p);
}

/* A launch whose blocks a prefetch brought passes that prefetch's ticket to
 * the executor's gate, once per block: the first kernel to use the block
 * waits for the copy, the later ones follow it on the stream. A
 * discard-and-prefetch orders the stream itself, and deepum gates nothing.
 * The blocks whose prefetch the executor had not issued when the gate came
 * are counted, once. */
static void launches_gate_on_their_prefetch(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	add_op(p, 1, PLAN_OP_PREFETCH, PLAN_POS_NONE, 1, a.w1, 6 * MB, 2 * MB);
	add_op(p, 1, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, a.w2, 0, 4 * MB);
	add_op(p, 1, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE, 1, a.act, 0, act_size);
	finish_plan(p);

	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	prog_setup(&r);
	size_t n, ng;
	launch(&r, K0, (const uint64_t[]){ 4 }, 1);
	fresh(&r, &n);
	engine_on_alloc(r.e, 5, BASE + 16 * MB, act_size);
	launch(&r, K1, (const uint64_t[]){ 5 }, 1);
	const struct oplog_entry *e = fresh(&r, &n);
	const struct oplog_entry *pre = NULL;
	for (size_t i = 0; i < n; i++)
		if (!e[i].is_mark && e[i].op == ENGINE_OP_PREFETCH)
			pre = &e[i];
	assert_non_null(pre);
	assert_true(pre->ticket > 0);
	uint64_t pre_blocks = 0;
	for (size_t i = 0; i < pre->n; i++)
		pre_blocks += pre->ranges[i].bytes / (2 * MB);
	oplog_gates(r.log, &ng);
	assert_int_equal(ng, 0); /* K1 uses only the discard-prefetched activation */
	oplog_set_issued(r.log, pre->ticket - 1);
	launch(&r, K2, (const uint64_t[]){ 1, 2, 5 }, 3);
	const struct oplog_gate *g = oplog_gates(r.log, &ng);
	assert_int_equal(ng, 1); /* W1's last block and W2: one gate */
	assert_int_equal(g[0].ticket, pre->ticket);
	assert_true(g[0].wait_issue); /* brought by the launch before */
	launch(&r, K3, (const uint64_t[]){ 2, 4 }, 2);
	oplog_gates(r.log, &ng);
	assert_int_equal(ng, 1); /* W2 follows K2 on the stream */
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.gated_launches, 1);
	assert_int_equal(pre_blocks, 3); /* W1's last block, W2's two */
	assert_int_equal(st.unissued_blocks, pre_blocks);
	rig_stop(&r);

	rig_start(&r, ENGINE_DEEPUM, 0, p);
	prog_setup(&r);
	for (uint64_t it = 0; it < 3; it++)
		prog_iteration(&r, 5 + it, it == 0);
	oplog_gates(r.log, &ng);
	assert_int_equal(ng, 0);
	assert_true(count_kind(&r, ENGINE_OP_PREFETCH) > 0); /* it did prefetch */
	rig_stop(&r);
	plan_destroy(p);
}

/* Whether K2, which uses W2, is gated waiting for the prefetch of W2 to be
 * issued, with that prefetch placed at position pos. */
static bool waits_for_issue(uint32_t pos)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	add_op(p, pos, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, a.w2, 0, 4 * MB);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	prog_setup(&r);
	size_t ng;
	launch(&r, K0, (const uint64_t[]){ 4 }, 1);
	engine_on_alloc(r.e, 5, BASE + 16 * MB, act_size);
	launch(&r, K1, (const uint64_t[]){ 5 }, 1);
	launch(&r, K2, (const uint64_t[]){ 1, 2, 5 }, 3);
	const struct oplog_gate *g = oplog_gates(r.log, &ng);
	assert_int_equal(ng, 1);
	bool wait = g[0].wait_issue;
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.late_gated_launches, wait);
	rig_stop(&r);
	plan_destroy(p);
	return wait;
}

/* A launch waits for its prefetch to be issued only where the plan brings
 * the blocks at its own kernel or the one before (engine.c, fetched_late):
 * those are still in the executor's queue as the kernel comes; one brought
 * earlier has had a launch's time to go out, and the kernel is gated as
 * far as it has. */
static void only_late_prefetches_are_waited_for(void **state)
{
	assert_true(waits_for_issue(2));
	assert_true(waits_for_issue(1));
	assert_false(waits_for_issue(0));
}

/* The ticket of the one prefetch batch logged since the last call. */
static uint64_t prefetch_ticket(struct rig *r)
{
	const struct oplog_entry *e[4];
	size_t k = batches(r, e, 4), found = 0;
	uint64_t ticket = 0;
	for (size_t i = 0; i < k; i++)
		if (e[i]->op == ENGINE_OP_PREFETCH) {
			ticket = e[i]->ticket;
			found++;
		}
	assert_int_equal(found, 1);
	assert_true(ticket > 0);
	return ticket;
}

/*
 * K2 uses W1, prefetched at K0, and a block brought at K1: the gate takes
 * the newest ticket of the kernel's blocks, whichever comes first among
 * them. Brought at K1 by a prefetch (W2), the block is late and K2 waits
 * for its issue; brought at K1 by a discard-and-prefetch (the activation,
 * no ticket: the program's stream is ordered after it), nothing is late,
 * and K2 is gated on W1's prefetch without waiting. The executor has
 * issued the gate's ticket: no block counts unissued.
 */
static void gate_takes_the_newest_ticket_and_waits_only_for_a_late_prefetch(void **state)
{
	for (int late = 0; late < 2; late++) {
		struct prog a;
		struct plan *p = prog_plan(&a);
		add_op(p, 0, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, a.w1, 0, 8 * MB);
		if (late)
			add_op(p, 1, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, a.w2, 0, 4 * MB);
		else
			add_op(p, 1, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE, 2, a.act, 0, act_size);
		finish_plan(p);
		struct rig r;
		rig_start(&r, ENGINE_PLAN, 0, p);
		prog_setup(&r);
		launch(&r, K0, (const uint64_t[]){ 4 }, 1);
		uint64_t w1_ticket = prefetch_ticket(&r);
		engine_on_alloc(r.e, 5, BASE + 16 * MB, act_size);
		launch(&r, K1, NULL, 0);
		uint64_t k1_ticket = late ? prefetch_ticket(&r) : 0;
		const struct oplog_entry *e[4];
		if (!late) {
			assert_int_equal(batches(&r, e, 4), 1);
			assert_int_equal(e[0]->op, ENGINE_OP_DISCARD_PREFETCH);
		}
		/* Every prefetch issued by now: no block counts unissued. */
		oplog_set_issued(r.log, late ? k1_ticket : w1_ticket);
		/* W1 first among the kernel's blocks, the older ticket. */
		launch(&r, K2, (const uint64_t[]){ 1, late ? 2 : 5 }, 2);
		size_t ng;
		const struct oplog_gate *g = oplog_gates(r.log, &ng);
		assert_int_equal(ng, 1);
		assert_true(g[0].ticket == (late ? k1_ticket : w1_ticket));
		assert_true(!late || k1_ticket > w1_ticket);
		assert_int_equal(g[0].wait_issue, late);
		struct engine_stats st;
		engine_get_stats(r.e, &st);
		assert_int_equal(st.gated_launches, 1);
		assert_int_equal(st.late_gated_launches, late);
		assert_int_equal(st.unissued_blocks, 0);
		rig_stop(&r);
		plan_destroy(p);
	}
}

/* Every kind due at one position, issued discard, evict, discard_prefetch,
 * prefetch; a fresh allocation the program wrote, or may have written by
 * a call the engine cannot place or from the host (its own managed
 * memory), is not discard-prefetched. */
static void kinds_in_order(void **state)
{
	const uint64_t ids[3] = { K0, K1, K2 };
	const uint64_t sizes[2] = { 2 * MB, 4 * MB };
	struct plan *p = new_plan(ids, 3, sizes, 2);
	uint32_t a = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 4 * MB);
	uint32_t b = add_alloc(p, PLAN_ALLOC_PERSISTENT, 2, 2 * MB);
	uint32_t d = add_alloc(p, PLAN_ALLOC_ITERATION, 1, 2 * MB);
	uint32_t f = add_alloc(p, PLAN_ALLOC_ITERATION, 2, 4 * MB);
	add_op(p, 1, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, b, 0, 2 * MB);
	add_op(p, 1, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE, 2, f, 0, 4 * MB);
	add_op(p, 1, PLAN_OP_EVICT, 0, PLAN_POS_NONE, a, 0, 4 * MB);
	add_op(p, 1, PLAN_OP_DISCARD, 0, PLAN_POS_NONE, d, 0, 2 * MB);
	finish_plan(p);

	for (int how = 0; how < 4; how++) {
		bool written = how > 0;
		struct rig r;
		rig_start(&r, ENGINE_PLAN, 0, p);
		engine_on_alloc(r.e, 1, BASE, 4 * MB);
		engine_on_alloc(r.e, 2, BASE + 4 * MB, 2 * MB);
		launch(&r, K0, (const uint64_t[]){ 1 }, 1); /* marker 1 */
		engine_on_alloc(r.e, 3, BASE + 8 * MB, 2 * MB);
		engine_on_free(r.e, 3);                       /* marker 2 */
		if (how == 3)
			engine_on_managed_alloc(r.e, 4, BASE + 16 * MB, 4 * MB);
		else
			engine_on_alloc(r.e, 4, BASE + 16 * MB, 4 * MB);
		if (how == 1)
			engine_on_write(r.e, 4); /* say, a memset */
		else if (how == 2)
			engine_on_unknown_write(r.e); /* say, a 2-D copy */
		launch(&r, K1, NULL, 0);
		const struct oplog_entry *e[8];
		size_t n = batches(&r, e, 8);
		assert_int_equal(n, written ? 3 : 4);
		expect_batch(e[0], ENGINE_OP_DISCARD, 2,
			     (const struct engine_range[]){ { BASE + 8 * MB, 2 * MB } }, 1);
		expect_batch(e[1], ENGINE_OP_EVICT, 1, (const struct engine_range[]){ { BASE, 4 * MB } }, 1);
		if (!written)
			expect_batch(e[2], ENGINE_OP_DISCARD_PREFETCH, 0,
				     (const struct engine_range[]){ { BASE + 16 * MB, 4 * MB } }, 1);
		expect_batch(e[n - 1], ENGINE_OP_PREFETCH, 0,
			     (const struct engine_range[]){ { BASE + 4 * MB, 2 * MB } }, 1);
		struct engine_stats st;
		engine_get_stats(r.e, &st);
		assert_int_equal(st.skipped_discards, written);
		assert_int_equal(st.ops[ENGINE_OP_DISCARD], 1);
		assert_true(st.bytes[ENGINE_OP_EVICT] == 4 * MB);
		rig_stop(&r);
	}
	plan_destroy(p);
}

/*
 * Discards that must not happen: of an allocation still live; of a freed
 * one whose range a new allocation already holds; a discard_prefetch of a
 * fresh small allocation whose block holds another live one, or of one a
 * kernel has used. The fresh allocation that took the freed range is
 * discard-prefetched behind the free (marker 2): it is its block's only live
 * allocation, and the block is not on the GPU (on the GPU, there would be
 * nothing to gain).
 */
static void discard_never_touches_live_memory(void **state)
{
	const uint64_t ids[3] = { K0, K1, K2 };
	const uint64_t sizes[3] = { 2 * MB, 4096, 2 * MB };
	struct plan *p = new_plan(ids, 3, sizes, 3);
	uint32_t x = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 4 * MB);
	uint32_t y = add_alloc(p, PLAN_ALLOC_PERSISTENT, 2, 2 * MB);
	uint32_t z = add_alloc(p, PLAN_ALLOC_ITERATION, 1, 2 * MB);
	uint32_t s = add_alloc(p, PLAN_ALLOC_ITERATION, 2, 4096);
	uint32_t w = add_alloc(p, PLAN_ALLOC_ITERATION, 3, 2 * MB);
	add_op(p, 2, PLAN_OP_DISCARD, 0, PLAN_POS_NONE, x, 0, 4 * MB);
	add_op(p, 2, PLAN_OP_DISCARD, 0, PLAN_POS_NONE, y, 0, 2 * MB);
	add_op(p, 2, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE, 2, z, 0, 2 * MB);
	add_op(p, 2, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE, 2, s, 0, 4096);
	add_op(p, 2, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE, 2, w, 0, 2 * MB);
	finish_plan(p);

	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 1, BASE, 4 * MB);                 /* x, stays live */
	engine_on_alloc(r.e, 2, BASE + 4 * MB, 2 * MB);        /* y */
	engine_on_alloc(r.e, 3, BASE + 6 * MB + 4096, 4096);   /* a small one */
	launch(&r, K0, (const uint64_t[]){ 1 }, 1); /* y stays on the host */
	engine_on_free(r.e, 2);
	engine_on_alloc(r.e, 4, BASE + 4 * MB, 2 * MB);        /* z takes y's range */
	engine_on_alloc(r.e, 5, BASE + 6 * MB, 4096);          /* s shares a block */
	engine_on_alloc(r.e, 6, BASE + 8 * MB, 2 * MB);        /* w */
	launch(&r, K1, (const uint64_t[]){ 6 }, 1);            /* w used */
	launch(&r, K2, (const uint64_t[]){ 4, 5, 6 }, 3);
	const struct oplog_entry *e[8];
	assert_int_equal(batches(&r, e, 8), 1);
	expect_batch(e[0], ENGINE_OP_DISCARD_PREFETCH, 2,
		     (const struct engine_range[]){ { BASE + 4 * MB, 2 * MB } }, 1);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.skipped_discards, 4);
	rig_stop(&r);
	plan_destroy(p);
}

/*
 * Memory freed before the first launch may still be read by GPU work no
 * launch marks: T is filled by a copy and copied into P (device to device,
 * which the engine does not see), then freed. deepum discards T's blocks at
 * once; with or without a budget the discard waits for the marker its free
 * recorded, not for nothing.
 */
static void discard_before_first_launch_waits_for_the_free(void **state)
{
	for (int budgeted = 0; budgeted < 2; budgeted++) {
		struct rig r;
		rig_start(&r, ENGINE_DEEPUM, budgeted ? 64 * MB : 0, NULL);
		engine_on_alloc(r.e, 1, BASE, 8 * MB);
		engine_on_write(r.e, 1);
		engine_on_alloc(r.e, 2, BASE + 8 * MB, 8 * MB);
		engine_on_write(r.e, 2);
		engine_on_free(r.e, 1);
		size_t n, discards = 0;
		const struct oplog_entry *en = fresh(&r, &n);
		assert_true(n >= 2);
		assert_true(en[0].is_mark);
		for (size_t i = 1; i < n; i++) {
			assert_false(en[i].is_mark);
			assert_int_equal(en[i].op, ENGINE_OP_DISCARD);
			assert_int_equal(en[i].mark, en[0].mark);
			discards += en[i].n;
		}
		assert_true(discards > 0);
		rig_stop(&r);
	}
}

/* An allocation the model could not hold (memory for its block ran out)
 * still lives in that block, which the model counts as holding another
 * only: nothing may be discarded from then on. Before, freeing the
 * unheld one dropped the other's hold, and deepum discarded the block
 * with the other's data in it. */
static void unmodelled_allocation_stops_discards(void **state)
{
	struct rig r;
	rig_start(&r, ENGINE_DEEPUM, 0, NULL);
	calloc_fails = true;
	engine_on_alloc(r.e, 1, BASE, 4096); /* its block not made */
	calloc_fails = false;
	engine_on_alloc(r.e, 2, BASE + 4096, 4096); /* the same block */
	engine_on_write(r.e, 2);
	engine_on_free(r.e, 1);
	size_t n;
	const struct oplog_entry *en = fresh(&r, &n);
	for (size_t i = 0; i < n; i++)
		assert_true(en[i].is_mark || en[i].op != ENGINE_OP_DISCARD);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.unmodelled_allocs, 1);
	rig_stop(&r);
}

/* The same under the plan: U's block could not be made, and F, fresh and
 * the block's only allocation in the model, is due a discard-and-prefetch.
 * U's data is there: F is brought with a plain prefetch, which destroys
 * nothing. With U held (in a block of its own), F is
 * discarded-and-prefetched. */
static void unmodelled_allocation_makes_discard_prefetch_a_prefetch(void **state)
{
	const uint64_t ids[2] = { K0, K1 };
	struct plan *p = new_plan(ids, 2, NULL, 0);
	add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 4096);
	uint32_t f = add_alloc(p, PLAN_ALLOC_PERSISTENT, 2, MB);
	add_op(p, 1, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE, 1, f, 0, MB);
	finish_plan(p);
	for (int unheld = 0; unheld < 2; unheld++) {
		struct rig r;
		rig_start(&r, ENGINE_PLAN, 0, p);
		calloc_fails = unheld;
		/* Unheld, U shares F's block; held, it gets one of its own. */
		engine_on_alloc(r.e, 1, unheld ? BASE + MB : BASE + 64 * MB, 4096);
		calloc_fails = false;
		engine_on_alloc(r.e, 2, BASE, MB);
		launch(&r, K0, NULL, 0);
		launch(&r, K1, NULL, 0);
		const struct oplog_entry *e[4];
		assert_int_equal(batches(&r, e, 4), 1);
		expect_batch(e[0], unheld ? ENGINE_OP_PREFETCH : ENGINE_OP_DISCARD_PREFETCH, 0,
			     (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
		struct engine_stats st;
		engine_get_stats(r.e, &st);
		assert_int_equal(st.unmodelled_allocs, unheld);
		rig_stop(&r);
	}
	plan_destroy(p);
}

/* The plan discards a freed allocation at K1 and again at K2: the block is
 * discarded already, and the second op issues nothing. */
static void discarded_block_is_not_discarded_again(void **state)
{
	const uint64_t ids[3] = { K0, K1, K2 };
	struct plan *p = new_plan(ids, 3, NULL, 0);
	uint32_t d = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 2 * MB);
	add_op(p, 1, PLAN_OP_DISCARD, 0, PLAN_POS_NONE, d, 0, 2 * MB);
	add_op(p, 2, PLAN_OP_DISCARD, 0, PLAN_POS_NONE, d, 0, 2 * MB);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	launch(&r, K0, (const uint64_t[]){ 1 }, 1); /* marker 1 */
	engine_on_free(r.e, 1);                      /* marker 2 */
	const struct oplog_entry *b[4];
	assert_int_equal(batches(&r, b, 4), 0);
	launch(&r, K1, NULL, 0);
	assert_int_equal(batches(&r, b, 4), 1);
	expect_batch(b[0], ENGINE_OP_DISCARD, 2, (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
	launch(&r, K2, NULL, 0);
	assert_int_equal(batches(&r, b, 4), 0);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.ops[ENGINE_OP_DISCARD], 1);
	assert_int_equal(st.skipped_discards, 0);
	rig_stop(&r);
	plan_destroy(p);
}

static uint64_t no_marker(void *ctx)
{
	return 0;
}

/* A free after a launch whose marker could not be recorded (the executor
 * gave 0): the GPU may still read the freed memory, so deepum's discard
 * at the free is refused, not issued waiting for nothing. With markers,
 * the same free's discard goes behind its marker. */
static void discard_refused_without_its_frees_marker(void **state)
{
	for (int marking = 0; marking < 2; marking++) {
		struct rig r;
		struct engine_config cfg = { ENGINE_DEEPUM, 0, NULL, true, false, NULL };
		char err[256];
		r.log = oplog_create();
		assert_non_null(r.log);
		r.x = oplog_executor(r.log);
		if (!marking)
			r.x.mark = no_marker;
		r.e = engine_create(&cfg, &r.x, err, sizeof err);
		if (!r.e)
			fail_msg("%s", err);
		r.seen = 0;
		engine_on_alloc(r.e, 1, BASE, 8 * MB);
		launch(&r, K0, (const uint64_t[]){ 1 }, 1);
		engine_on_free(r.e, 1);
		assert_int_equal(count_kind(&r, ENGINE_OP_DISCARD), marking);
		rig_stop(&r);
	}
}

/*
 * A discard-and-prefetch destroys the whole block, and the GPU may still
 * read what was freed there (the arena hands ranges out in stream order, not
 * once the GPU is done). D (4 KiB, used by K0) and the fresh F (1 MiB) share
 * a block, evicted after K0; D's free leaves F alone there, so it records a
 * marker, and F's discard-and-prefetch at K2 waits for it. Had a kernel
 * used F before, the free would record none: nothing could destroy the
 * block then.
 */
static void discard_prefetch_waits_for_the_blocks_free(void **state)
{
	const uint64_t ids[3] = { K0, K1, K2 };
	struct plan *p = new_plan(ids, 3, NULL, 0);
	uint32_t d = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 4096);
	uint32_t f = add_alloc(p, PLAN_ALLOC_PERSISTENT, 2, MB);
	add_op(p, 1, PLAN_OP_EVICT, 0, PLAN_POS_NONE, d, 0, 4096);
	add_op(p, 2, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE, 2, f, 0, MB);
	finish_plan(p);

	for (int used = 0; used < 2; used++) {
		struct rig r;
		rig_start(&r, ENGINE_PLAN, 0, p);
		engine_on_alloc(r.e, 1, BASE, 4096);
		engine_on_alloc(r.e, 2, BASE + 4096, MB);
		launch(&r, K0, (const uint64_t[]){ 1, 2 }, used ? 2 : 1); /* marker 1 */
		const struct oplog_entry *e[4];
		launch(&r, K1, NULL, 0);
		assert_int_equal(batches(&r, e, 4), 1);
		expect_batch(e[0], ENGINE_OP_EVICT, 1, (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
		engine_on_free(r.e, 1);
		size_t n;
		const struct oplog_entry *m = fresh(&r, &n);
		if (used) {
			assert_int_equal(n, 0);
		} else {
			assert_int_equal(n, 1);
			assert_true(m[0].is_mark && m[0].mark == 2);
		}
		launch(&r, K2, NULL, 0);
		if (used) {
			assert_int_equal(batches(&r, e, 4), 0);
		} else {
			assert_int_equal(batches(&r, e, 4), 1);
			expect_batch(e[0], ENGINE_OP_DISCARD_PREFETCH, 2,
				     (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
		}
		rig_stop(&r);
	}
	plan_destroy(p);
}

/* Under a budget that never needed room, frees record no marker: a fresh
 * allocation on a block freed after some launch is brought with a plain
 * prefetch, which destroys nothing. */
static void discard_prefetch_without_a_marker_is_a_prefetch(void **state)
{
	const uint64_t ids[3] = { K0, K1, K2 };
	struct plan *p = new_plan(ids, 3, NULL, 0);
	uint32_t d = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 2 * MB);
	uint32_t f = add_alloc(p, PLAN_ALLOC_PERSISTENT, 2, 2 * MB);
	add_op(p, 1, PLAN_OP_EVICT, 0, PLAN_POS_NONE, d, 0, 2 * MB);
	add_op(p, 2, PLAN_OP_DISCARD_PREFETCH, PLAN_POS_NONE, 2, f, 0, 2 * MB);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 64 * MB, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	launch(&r, K0, (const uint64_t[]){ 1 }, 1); /* marker 1, for the eviction */
	launch(&r, K1, NULL, 0);
	engine_on_free(r.e, 1);
	engine_on_alloc(r.e, 2, BASE, 2 * MB); /* F takes D's range */
	launch(&r, K2, NULL, 0);
	size_t n;
	const struct oplog_entry *e = fresh(&r, &n);
	assert_int_equal(n, 3);
	assert_true(e[0].is_mark && e[0].mark == 1);
	expect_batch(&e[1], ENGINE_OP_EVICT, 1, (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
	expect_batch(&e[2], ENGINE_OP_PREFETCH, 0, (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
	rig_stop(&r);
	plan_destroy(p);
}

/* K2 removed from the program: K3 resyncs one position ahead, and the op
 * due at K2 is issued with K3's. */
static void skipped_position_ops(void **state)
{
	const uint64_t ids[4] = { K0, K1, K2, K3 };
	struct plan *p = new_plan(ids, 4, NULL, 0);
	uint32_t a = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 2 * MB);
	add_op(p, 2, PLAN_OP_PREFETCH, PLAN_POS_NONE, 3, a, 0, 2 * MB);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	launch(&r, K0, NULL, 0);
	launch(&r, K1, NULL, 0);
	launch(&r, K3, NULL, 0);
	const struct oplog_entry *e[4];
	assert_int_equal(batches(&r, e, 4), 1);
	expect_batch(e[0], ENGINE_OP_PREFETCH, 0, (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.matched, 2);
	assert_int_equal(st.resynced, 1);
	rig_stop(&r);
	plan_destroy(p);
}

/* K2 and K3 swapped in the program: K3 resyncs one ahead, with K2's ops;
 * K2 then resyncs back, and a later launch ahead again over K3. Each op is
 * issued once in the pass: an eviction at 2 and a prefetch of the same
 * range at 3 done again would move it out and in twice. A jump back
 * farther than MATCH_NEAR (the program runs positions 14 on again, found
 * after being lost) is no reordering: their ops are issued again. */
static void reordered_kernels_issue_each_op_once(void **state)
{
	enum { N = 40 };
	uint64_t ids[N];
	uint32_t a;
	struct plan *p = row_plan(ids, N, N, &a);
	add_op(p, 2, PLAN_OP_EVICT, PLAN_POS_NONE, PLAN_POS_NONE, a, 0, 2 * MB);
	add_op(p, 3, PLAN_OP_PREFETCH, PLAN_POS_NONE, 20, a, 0, 2 * MB);
	add_op(p, 14, PLAN_OP_EVICT, PLAN_POS_NONE, PLAN_POS_NONE, a, 0, 2 * MB);
	add_op(p, 15, PLAN_OP_PREFETCH, PLAN_POS_NONE, 20, a, 0, 2 * MB);
	finish_plan(p);
	struct rig r;
	struct engine_stats st;
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	const uint64_t uses_a[] = { 1 };
	launch(&r, ids[0], uses_a, 1);
	static const int order[] = { 1, 3, 2, 4, 5 };
	for (size_t i = 0; i < sizeof order / sizeof *order; i++)
		launch(&r, ids[order[i]], NULL, 0);
	engine_get_stats(r.e, &st);
	assert_int_equal(st.resynced, 3);
	assert_int_equal(count_kind(&r, ENGINE_OP_EVICT), 1);
	assert_int_equal(count_kind(&r, ENGINE_OP_PREFETCH), 1);

	for (int i = 6; i < 30; i++)
		launch(&r, ids[i], NULL, 0);
	assert_int_equal(count_kind(&r, ENGINE_OP_EVICT), 2);
	assert_int_equal(count_kind(&r, ENGINE_OP_PREFETCH), 2);
	uint64_t lost = st.lost;
	for (int i = 10; i < 25; i++)
		launch(&r, ids[i], NULL, 0);
	engine_get_stats(r.e, &st);
	assert_int_equal(st.lost - lost, MATCH_LOST_AFTER); /* 10 .. 13 */
	assert_int_equal(count_kind(&r, ENGINE_OP_EVICT), 3);
	assert_int_equal(count_kind(&r, ENGINE_OP_PREFETCH), 3);
	rig_stop(&r);
	plan_destroy(p);
}

/* A program whose iterations lack the plan's first 12 kernels: the
 * iteration that starts where it enters the plan (at 13, its 12 lost) gets
 * the ops of every position before it, here a prefetch at 2 for kernel 15,
 * though a forward resync past more than PLAN_REPLAY_SKIPPED positions
 * drops them as stale elsewhere. The first pass, joined at 13, has none.
 * The same when unknown kernels before the wrap lost the matcher its place
 * (the start is then found again, with no positions skipped). */
static void iteration_start_issues_the_ops_before_it(void **state)
{
	enum { N = 40, SKIP = 12 };
	uint64_t ids[N];
	uint32_t a;
	struct plan *p = row_plan(ids, N, N, &a);
	add_op(p, 2, PLAN_OP_PREFETCH, PLAN_POS_NONE, 15, a, 0, 2 * MB);
	finish_plan(p);
	for (int unknown = 0; unknown <= MATCH_LOST_AFTER; unknown += MATCH_LOST_AFTER) {
		struct rig r;
		rig_start(&r, ENGINE_PLAN, 0, p);
		engine_on_alloc(r.e, 1, BASE, 2 * MB);
		const struct oplog_entry *e[4];
		for (int i = SKIP; i < N; i++)
			launch(&r, ids[i], NULL, 0);
		assert_int_equal(batches(&r, e, 4), 0);
		for (int i = 0; i < unknown; i++)
			launch(&r, U + (uint64_t)i, NULL, 0);
		launch(&r, ids[SKIP], NULL, 0);
		launch(&r, ids[SKIP + 1], NULL, 0);
		assert_int_equal(batches(&r, e, 4), 1);
		expect_batch(e[0], ENGINE_OP_PREFETCH, 0, (const struct engine_range[]){ { BASE, 2 * MB } }, 1);
		struct engine_stats st;
		engine_get_stats(r.e, &st);
		assert_int_equal(st.resynced, 2);
		assert_int_equal(st.lost, 2 + (uint64_t)unknown);
		rig_stop(&r);
	}
	plan_destroy(p);
}

/* A forward resync past more than PLAN_REPLAY_SKIPPED positions, not at an
 * iteration start, issues its own position's ops and not those of the
 * positions it jumped over: the program is elsewhere, and they would be
 * stale. A program whose iterations lack the first 12 of the plan's 20
 * kernels (half of it or more: it never starts an iteration, match.h) is
 * found again at 13 after each wrap, 13 positions on from the expected 0:
 * there the prefetch at 13 is issued (its range evicted at 19), the one at
 * 2 is not. Then a program that runs the plan's last kernels again after
 * its first two: the resync to 39 goes 3 back across the iteration's
 * start, and no op of the positions between is issued (the matcher
 * counted it 37 on until session 62, and the cap kept their ops). */
static void resync_past_the_skipped_cap_drops_their_ops(void **state)
{
	enum { N = 20, SKIP = 12 };
	uint64_t ids[40];
	uint32_t a;
	struct plan *p = row_plan(ids, 40, N, &a);
	uint32_t b = add_alloc(p, PLAN_ALLOC_PERSISTENT, 2, 2 * MB);
	add_op(p, 2, PLAN_OP_PREFETCH, PLAN_POS_NONE, 15, a, 0, 2 * MB);
	add_op(p, 13, PLAN_OP_PREFETCH, PLAN_POS_NONE, 14, b, 0, 2 * MB);
	add_op(p, 19, PLAN_OP_EVICT, PLAN_POS_NONE, PLAN_POS_NONE, b, 0, 2 * MB);
	finish_plan(p);
	struct rig r;
	const struct oplog_entry *e[4];
	struct engine_stats st;
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	engine_on_alloc(r.e, 2, BASE + 16 * MB, 2 * MB);
	for (int i = SKIP; i < N; i++)
		launch(&r, ids[i], NULL, 0);
	assert_int_equal(batches(&r, e, 4), 2); /* b's prefetch at 13, its eviction at 19 */
	launch(&r, ids[SKIP], NULL, 0);       /* lost */
	launch(&r, ids[SKIP + 1], NULL, 0);   /* resynced at 13 */
	engine_get_stats(r.e, &st);
	assert_int_equal(st.resynced, 2);
	assert_int_equal(st.lost, 2);
	assert_int_equal(batches(&r, e, 4), 1);
	expect_batch(e[0], ENGINE_OP_PREFETCH, 0, (const struct engine_range[]){ { BASE + 16 * MB, 2 * MB } }, 1);
	rig_stop(&r);
	plan_destroy(p);

	/* 40 kernels, a prefetch at 20 and the eviction of its range at 30. */
	p = new_plan(ids, 40, NULL, 0);
	a = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 2 * MB);
	add_op(p, 20, PLAN_OP_PREFETCH, PLAN_POS_NONE, 21, a, 0, 2 * MB);
	add_op(p, 30, PLAN_OP_EVICT, PLAN_POS_NONE, PLAN_POS_NONE, a, 0, 2 * MB);
	finish_plan(p);
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	for (int i = 0; i < 40; i++)
		launch(&r, ids[i], NULL, 0);
	assert_int_equal(batches(&r, e, 4), 2);
	launch(&r, ids[0], NULL, 0);
	launch(&r, ids[1], NULL, 0);
	launch(&r, ids[38], NULL, 0); /* lost: what ran before it is not what precedes 38 */
	launch(&r, ids[39], NULL, 0); /* resynced at 39: 38 precedes it */
	engine_get_stats(r.e, &st);
	assert_int_equal(st.resynced, 1);
	assert_int_equal(st.lost, 1);
	assert_int_equal(batches(&r, e, 4), 0);
	rig_stop(&r);
	plan_destroy(p);
}

/* An activation freed only after its next instance is made: each
 * iteration's K0 reads the instance made in the iteration before, which
 * is freed after K1, by then the iteration's own instance exists. The
 * plan's eviction of the older one after K0 (origin PREVIOUS) lands on the
 * instance of the iteration before in every iteration, never on the
 * iteration's own; the ITERATION allocation of the same ordinal, evicted
 * after K1, is the new one. */
static void previous_instance_resolved_in_every_iteration(void **state)
{
	const uint64_t ids[3] = { K0, K1, K2 };
	const uint64_t sizes[1] = { 4 * MB };
	struct plan *p = new_plan(ids, 3, sizes, 1);
	const uint64_t before[3] = { 0, 1, 1 };
	set_alloc_before(p, before);
	uint32_t older = add_alloc(p, PLAN_ALLOC_PREVIOUS, 1, 4 * MB);
	uint32_t newer = add_alloc(p, PLAN_ALLOC_ITERATION, 1, 4 * MB);
	add_op(p, 1, PLAN_OP_EVICT, 0, PLAN_POS_NONE, older, 0, 4 * MB);
	add_op(p, 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, newer, 0, 4 * MB);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	enum { ITERATIONS = 5 };
	for (uint64_t i = 0; i < ITERATIONS; i++) {
		uint64_t id = 10 + i, address = BASE + i * 8 * MB;
		launch(&r, K0, (const uint64_t[]){ id - 1 }, i > 0);
		engine_on_alloc(r.e, id, address, 4 * MB);
		launch(&r, K1, (const uint64_t[]){ id }, 1);
		const struct oplog_entry *b[4];
		/* The first iteration has no older instance. */
		if (i > 0) {
			assert_int_equal(batches(&r, b, 4), 1);
			expect_batch(b[0], ENGINE_OP_EVICT, b[0]->mark,
				     (const struct engine_range[]){ { address - 8 * MB, 4 * MB } }, 1);
			engine_on_free(r.e, id - 1);
		}
		launch(&r, K2, NULL, 0);
		assert_int_equal(batches(&r, b, 4), 1);
		expect_batch(b[0], ENGINE_OP_EVICT, b[0]->mark,
			     (const struct engine_range[]){ { address, 4 * MB } }, 1);
	}
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.ops[ENGINE_OP_EVICT], 2 * ITERATIONS - 1);
	rig_stop(&r);
	plan_destroy(p);
}

/* An activation freed after its successor is made, as above; the plan
 * discards the previous instance at K2, behind its free after K1. The
 * third iteration's activation drifted from the plan (6 MiB, not 4), so
 * the fourth has no previous instance to discard: not the second
 * iteration's either, freed and discarded a whole iteration before, whose
 * range the program has handed to R since. With R still live at the
 * fourth K2, a discard there would destroy its data; with R freed by
 * then, it would discard what the plan did not name. The fifth iteration,
 * after one of the plan's size, discards its previous instance again. */
static void no_previous_instance_after_a_drifted_iteration(void **state)
{
	const uint64_t ids[3] = { K0, K1, K2 };
	const uint64_t sizes[1] = { 4 * MB };
	const uint64_t before[3] = { 0, 1, 1 };
	struct plan *p = new_plan(ids, 3, sizes, 1);
	set_alloc_before(p, before);
	uint32_t older = add_alloc(p, PLAN_ALLOC_PREVIOUS, 1, 4 * MB);
	add_op(p, 2, PLAN_OP_DISCARD, 1, PLAN_POS_NONE, older, 0, 4 * MB);
	finish_plan(p);
	enum { R = 99 };
	/* The range each iteration's K2 discards (0: none). */
	const uint64_t discarded[5] = { 0, BASE, BASE + 8 * MB, 0, BASE + 24 * MB };
	for (int r_freed = 0; r_freed < 2; r_freed++) {
		struct rig r;
		rig_start(&r, ENGINE_PLAN, 0, p);
		for (uint64_t i = 0; i < 5; i++) {
			uint64_t id = 10 + i;
			const struct oplog_entry *b[4];
			launch(&r, K0, (const uint64_t[]){ id - 1, R }, i == 0 ? 0 : i == 3 ? 2 : 1);
			engine_on_alloc(r.e, id, BASE + i * 8 * MB, i == 2 ? 6 * MB : 4 * MB);
			launch(&r, K1, (const uint64_t[]){ id }, 1);
			if (i > 0)
				engine_on_free(r.e, id - 1);
			if (i == 3 && r_freed)
				engine_on_free(r.e, R);
			batches(&r, b, 4); /* K0 brings R at its first use */
			launch(&r, K2, NULL, 0);
			if (!discarded[i]) {
				assert_int_equal(batches(&r, b, 4), 0);
			} else {
				assert_int_equal(batches(&r, b, 4), 1);
				expect_batch(b[0], ENGINE_OP_DISCARD, b[0]->mark,
					     (const struct engine_range[]){ { discarded[i], 4 * MB } }, 1);
			}
			if (i == 2)
				engine_on_alloc(r.e, R, BASE + 8 * MB, 4 * MB);
		}
		struct engine_stats st;
		engine_get_stats(r.e, &st);
		assert_int_equal(st.skipped_discards, 2);
		rig_stop(&r);
	}
	plan_destroy(p);
}

/* A fault on an iteration allocation that the plan names only as the
 * next iteration's previous instance is charged to that plan allocation,
 * not to none (session 61's review: plan_alloc was null). */
static void previous_only_instance_charged_to_its_plan_allocation(void **state)
{
	const uint64_t ids[2] = { K0, K1 };
	const uint64_t sizes[1] = { 4 * MB };
	struct plan *p = new_plan(ids, 2, sizes, 1);
	uint32_t older = add_alloc(p, PLAN_ALLOC_PREVIOUS, 1, 4 * MB);
	add_op(p, 0, PLAN_OP_EVICT, PLAN_POS_NONE, PLAN_POS_NONE, older, 0, 4 * MB);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	for (uint64_t i = 0; i < 3; i++) {
		uint64_t id = 10 + i;
		launch(&r, K0, NULL, 0);
		engine_on_alloc(r.e, id, BASE + (i % 2) * 8 * MB, 4 * MB);
		launch(&r, K1, (const uint64_t[]){ id }, 1);
		if (i)
			engine_on_free(r.e, id - 1);
	}
	oplog_set_time(r.log, 5);
	struct fault_event ev = { 10, BASE + 8 * MB + 4096, 4096, 0 };
	struct fault_source s[1];
	struct fault_totals tot;
	assert_int_equal(engine_fault_sources(r.e, &ev, 1, s, 1, &tot), 1);
	assert_int_equal(s[0].origin, PLAN_ALLOC_ITERATION);
	assert_int_equal(s[0].ordinal, 1);
	assert_int_equal(s[0].plan_alloc, older);
	rig_stop(&r);
	plan_destroy(p);
}

/* A resync counts allocations on, whatever the plan made before the
 * kernel it lands on: here K2 launched again after its allocation (the
 * matcher resyncs back to K2), so the allocation made after K3 is still
 * the plan's third and K5's eviction of it is issued; and the same when
 * K2 is missing but its allocation comes after K3's launch (another
 * thread's), where the plan's count at K3 would be one too many. */
static void resync_counts_allocations_on(void **state)
{
	const uint64_t ids[6] = { K0, K1, K2, K3, K4, K5 };
	const uint64_t sizes[3] = { 2 * MB, 4 * MB, 6 * MB };
	struct plan *p = new_plan(ids, 6, sizes, 3);
	const uint64_t before[6] = { 0, 1, 1, 2, 3, 3 };
	set_alloc_before(p, before);
	uint32_t third = add_alloc(p, PLAN_ALLOC_ITERATION, 3, 6 * MB);
	add_op(p, 5, PLAN_OP_EVICT, 4, PLAN_POS_NONE, third, 0, 6 * MB);
	finish_plan(p);
	for (int repeated = 1; repeated >= 0; repeated--) {
		struct rig r;
		rig_start(&r, ENGINE_PLAN, 0, p);
		launch(&r, K0, NULL, 0);
		engine_on_alloc(r.e, 1, BASE, 2 * MB);
		launch(&r, K1, (const uint64_t[]){ 1 }, 1);
		if (repeated) {
			launch(&r, K2, NULL, 0);
			engine_on_alloc(r.e, 2, BASE + 2 * MB, 4 * MB);
			launch(&r, K2, NULL, 0);
			launch(&r, K3, NULL, 0);
		} else {
			launch(&r, K3, NULL, 0);
			engine_on_alloc(r.e, 2, BASE + 2 * MB, 4 * MB);
		}
		engine_on_alloc(r.e, 3, BASE + 6 * MB, 6 * MB);
		launch(&r, K4, (const uint64_t[]){ 3 }, 1);
		const struct oplog_entry *b[4];
		assert_int_equal(batches(&r, b, 4), 0);
		launch(&r, K5, NULL, 0);
		assert_int_equal(batches(&r, b, 4), 1);
		assert_int_equal(b[0]->op, ENGINE_OP_EVICT);
		assert_int_equal(b[0]->n, 1);
		assert_true(b[0]->ranges[0].address == BASE + 6 * MB && b[0]->ranges[0].bytes == 6 * MB);
		struct engine_stats st;
		engine_get_stats(r.e, &st);
		assert_int_equal(st.resynced, 1);
		rig_stop(&r);
	}
	plan_destroy(p);
}

/* The same kernels with other allocation sizes (another batch size): ops
 * while the plan is on probation, none once three complete iterations
 * disagreed; never foreign when the allocations are a framework cache's
 * segments. */
static void foreign_by_allocations(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	add_op(p, 3, PLAN_OP_EVICT, 1, PLAN_POS_NONE, a.w1, 0, 8 * MB);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	prog_setup(&r);
	for (int it = 0; it < 6; it++) {
		launch(&r, K0, (const uint64_t[]){ 4 }, 1);
		engine_on_alloc(r.e, 10 + (uint64_t)it, BASE + 16 * MB, 8 * MB); /* not 6 MiB */
		launch(&r, K1, (const uint64_t[]){ 1 }, 1);
		launch(&r, K2, NULL, 0);
		launch(&r, K3, NULL, 0);
		launch(&r, K4, NULL, 0);
		engine_on_free(r.e, 10 + (uint64_t)it);
		launch(&r, K5, NULL, 0);
		const struct oplog_entry *e[4];
		struct engine_stats st;
		engine_get_stats(r.e, &st);
		/* Judged at the fourth K0, after three complete iterations. */
		assert_int_equal(st.signature_mismatch, it >= 3);
		assert_int_equal(batches(&r, e, 4), it < 3 ? 1 : 0);
	}
	rig_stop(&r);

	/* The allocations are a framework cache's segments: the kernels
	 * alone are judged, and they agree. */
	struct engine_config cfg = { ENGINE_PLAN, 0, p, true, .framework_cache = true };
	rig_start_config(&r, &cfg);
	prog_setup(&r);
	for (int it = 0; it < 6; it++) {
		launch(&r, K0, (const uint64_t[]){ 4 }, 1);
		engine_on_alloc(r.e, 10 + (uint64_t)it, BASE + 16 * MB, 8 * MB);
		launch(&r, K1, (const uint64_t[]){ 1 }, 1);
		launch(&r, K2, NULL, 0);
		launch(&r, K3, NULL, 0);
		launch(&r, K4, NULL, 0);
		engine_on_free(r.e, 10 + (uint64_t)it);
		launch(&r, K5, NULL, 0);
	}
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.signature_mismatch, 0);
	assert_true(st.iterations >= 5);
	rig_stop(&r);
	plan_destroy(p);
}

/* Another program: its kernels are placed less than half the time once
 * the window opens, or never. */
static void foreign_by_kernels(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	launch(&r, K0, NULL, 0);
	launch(&r, K1, NULL, 0);
	for (int i = 0; i < 3; i++)
		launch(&r, U + (uint64_t)i, NULL, 0);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.signature_mismatch, 0);
	launch(&r, U + 3, NULL, 0); /* 2 of 6 placed: a failed window */
	engine_get_stats(r.e, &st);
	assert_int_equal(st.signature_mismatch, 0);
	for (int i = 4; i < 10 * 6 + 10000 - 3; i++)
		launch(&r, U + (uint64_t)i, NULL, 0);
	engine_get_stats(r.e, &st);
	assert_int_equal(st.signature_mismatch, 0);
	launch(&r, U, NULL, 0); /* 10 * n + slack since the first placed one */
	engine_get_stats(r.e, &st);
	assert_int_equal(st.signature_mismatch, 1);
	rig_stop(&r);

	rig_start(&r, ENGINE_PLAN, 0, p);
	for (int i = 0; i < 10 * 6 + 10000; i++)
		launch(&r, U + (uint64_t)i, NULL, 0);
	engine_get_stats(r.e, &st);
	assert_int_equal(st.signature_mismatch, 1);
	assert_int_equal(st.lost, 10060);
	rig_stop(&r);
	plan_destroy(p);
}

/*
 * Kernel i uses allocation i (one block each); the plan has correlation
 * tables and one prefetch (A3 at K1). Under a 3-block budget the program
 * runs an iteration, then unknown kernels until the engine is lost, then K5:
 * the tables predict K0 K1 K2, whose blocks are prefetched (room made by
 * evicting the least recently used), as many as fit. Then K0 resyncs and
 * the plan's own op is issued again; the tables are no longer consulted.
 */
static void lost_falls_back_to_correlation(void **state)
{
	const uint64_t ids[6] = { K0, K1, K2, K3, K4, K5 };
	struct plan *p = new_plan(ids, 6, NULL, 0);
	struct corr_block blocks[6];
	struct corr_kernel_blocks kb[6];
	for (uint32_t i = 0; i < 6; i++) {
		add_alloc(p, PLAN_ALLOC_PERSISTENT, i + 1, 2 * MB);
		blocks[i] = (struct corr_block){ i, 0 };
		kb[i] = (struct corr_kernel_blocks){ &blocks[i], 1 };
	}
	add_op(p, 1, PLAN_OP_PREFETCH, PLAN_POS_NONE, 3, 3, 0, 2 * MB);
	struct corr_config cc;
	corr_config_default(&cc);
	p->corr = corr_build(&cc, ids, 6, kb, NULL, 0);
	assert_non_null(p->corr);
	finish_plan(p);

	struct rig r;
	rig_start(&r, ENGINE_PLAN, 6 * MB, p);
	for (uint64_t i = 0; i < 6; i++)
		engine_on_alloc(r.e, i + 1, BASE + 2 * MB * i, 2 * MB);
	for (uint64_t i = 0; i < 6; i++)
		launch(&r, ids[i], (const uint64_t[]){ i + 1 }, 1);
	const struct oplog_entry *e[8];
	batches(&r, e, 8);
	for (uint64_t i = 0; i < 4; i++)
		launch(&r, U + i, NULL, 0);
	assert_int_equal(batches(&r, e, 8), 0);
	launch(&r, K5, (const uint64_t[]){ 6 }, 1);
	/* Resident were A3 A4 A5, A5 is K5's own: A3 and A4 make room for A0
	 * and A1, behind the marker of A4's last use, launch 5. Markers began
	 * at launch 3 (K2, the first to need room: A3 was prefetched at K1):
	 * 1 recorded then, 2 behind launch 3, so 4 behind launch 5. */
	assert_int_equal(batches(&r, e, 8), 2);
	expect_batch(e[0], ENGINE_OP_EVICT, 4,
		     (const struct engine_range[]){ { BASE + 6 * MB, 4 * MB } }, 1);
	expect_batch(e[1], ENGINE_OP_PREFETCH, 0, (const struct engine_range[]){ { BASE, 4 * MB } }, 1);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.corr_launches, 2); /* U3 (nothing predicted) and K5 */
	launch(&r, K0, (const uint64_t[]){ 1 }, 1);
	launch(&r, K1, (const uint64_t[]){ 2 }, 1);
	engine_get_stats(r.e, &st);
	assert_int_equal(st.resynced, 1);
	assert_int_equal(st.matched, 7);
	assert_int_equal(st.corr_launches, 2);
	size_t n = batches(&r, e, 8);
	assert_true(n >= 1);
	expect_batch(e[n - 1], ENGINE_OP_PREFETCH, 0,
		     (const struct engine_range[]){ { BASE + 6 * MB, 2 * MB } }, 1);
	assert_true(st.modelled_peak_bytes <= 6 * MB);
	rig_stop(&r);
	plan_destroy(p);
}

/*
 * The correlation fallback's lookahead past the iteration's end: K0 reads
 * the activation made in the iteration before (origin PREVIOUS), made
 * after K0 and written by K1 (ITERATION), which the plan evicts at K2. Lost
 * at K3, the tables predict K4, K5 and the next iteration's K0, for which
 * the PREVIOUS activation is this iteration's instance: its blocks are
 * prefetched, whether the instance before it is freed already (it would
 * stand for nothing) or not yet (it would stand for the wrong blocks).
 */
static void lookahead_past_iteration_end_prefetches_previous_instance(void **state)
{
	const uint64_t ids[6] = { K0, K1, K2, K3, K4, K5 };
	const uint64_t sizes[1] = { 4 * MB };
	struct plan *p = new_plan(ids, 6, sizes, 1);
	const uint64_t before[6] = { 0, 1, 1, 1, 1, 1 };
	set_alloc_before(p, before);
	uint32_t older = add_alloc(p, PLAN_ALLOC_PREVIOUS, 1, 4 * MB);
	uint32_t newer = add_alloc(p, PLAN_ALLOC_ITERATION, 1, 4 * MB);
	add_op(p, 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, newer, 0, 4 * MB);
	const struct corr_block k0[2] = { { older, 0 }, { older, 1 } };
	const struct corr_block k1[2] = { { newer, 0 }, { newer, 1 } };
	const struct corr_kernel_blocks kb[6] = { { k0, 2 }, { k1, 2 } };
	struct corr_config cc;
	corr_config_default(&cc);
	p->corr = corr_build(&cc, ids, 6, kb, NULL, 0);
	assert_non_null(p->corr);
	finish_plan(p);

	for (int older_freed = 1; older_freed >= 0; older_freed--) {
		struct rig r;
		rig_start(&r, ENGINE_PLAN, 0, p);
		launch(&r, K0, NULL, 0);
		engine_on_alloc(r.e, 10, BASE, 4 * MB);
		for (uint64_t i = 1; i < 6; i++)
			launch(&r, ids[i], (const uint64_t[]){ 10 }, i == 1);
		launch(&r, K0, (const uint64_t[]){ 10 }, 1);
		engine_on_alloc(r.e, 11, BASE + 8 * MB, 4 * MB);
		launch(&r, K1, (const uint64_t[]){ 11 }, 1);
		if (older_freed)
			engine_on_free(r.e, 10);
		launch(&r, K2, NULL, 0);
		for (uint64_t i = 0; i < MATCH_LOST_AFTER; i++)
			launch(&r, U + i, NULL, 0);
		const struct oplog_entry *e[8];
		batches(&r, e, 8);
		launch(&r, K3, NULL, 0);
		assert_int_equal(batches(&r, e, 8), 1);
		expect_batch(e[0], ENGINE_OP_PREFETCH, 0,
			     (const struct engine_range[]){ { BASE + 8 * MB, 4 * MB } }, 1);
		struct engine_stats st;
		engine_get_stats(r.e, &st);
		assert_int_equal(st.corr_launches, 2); /* the last U and K3 */
		rig_stop(&r);
	}
	plan_destroy(p);
}

/*
 * Tables built without the wrap (corr_config.wrap false) hold no link from
 * the plan's last kernel to its first: where the last kernel's ID is
 * followed by the first's, that is inside the iteration. Here K5 (the last)
 * runs at position 2 too, followed by K0 again, which reads the PREVIOUS
 * activation. Lost at K1, the tables predict K5, K0 and K2: that K0 runs in
 * this iteration, so its activation is the one the iteration before made
 * (at BASE, evicted), not this iteration's (at BASE + 8 MiB, evicted too).
 * Before the wrap flag was asked, K5 -> K0 was taken for the iteration's
 * end and this iteration's activation was prefetched.
 */
static void lookahead_without_wrap_stays_in_the_iteration(void **state)
{
	const uint64_t ids[6] = { K0, K1, K5, K0, K2, K5 };
	const uint64_t sizes[1] = { 4 * MB };
	struct plan *p = new_plan(ids, 6, sizes, 1);
	const uint64_t before[6] = { 0, 1, 1, 1, 1, 1 };
	set_alloc_before(p, before);
	uint32_t older = add_alloc(p, PLAN_ALLOC_PREVIOUS, 1, 4 * MB);
	uint32_t newer = add_alloc(p, PLAN_ALLOC_ITERATION, 1, 4 * MB);
	add_op(p, 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, newer, 0, 4 * MB);
	const struct corr_block k0[2] = { { older, 0 }, { older, 1 } };
	const struct corr_block k1[2] = { { newer, 0 }, { newer, 1 } };
	const struct corr_kernel_blocks kb[6] = { { k0, 2 }, { k1, 2 }, { NULL, 0 }, { k0, 2 } };
	struct corr_config cc;
	corr_config_default(&cc);
	cc.wrap = false;
	p->corr = corr_build(&cc, ids, 6, kb, NULL, 0);
	assert_non_null(p->corr);
	finish_plan(p);

	struct rig r;
	const struct oplog_entry *e[8];
	rig_start(&r, ENGINE_PLAN, 0, p);
	for (uint64_t i = 0; i < 2; i++) {
		uint64_t id = 10 + i;
		launch(&r, K0, NULL, 0);
		engine_on_alloc(r.e, id, BASE + 8 * MB * i, 4 * MB);
		launch(&r, K1, (const uint64_t[]){ id }, 1);
		launch(&r, K5, NULL, 0);
		if (i == 0) {
			launch(&r, K0, NULL, 0);
			launch(&r, K2, NULL, 0);
			launch(&r, K5, NULL, 0);
		}
	}
	for (uint64_t i = 0; i < MATCH_LOST_AFTER; i++)
		launch(&r, U + i, NULL, 0);
	batches(&r, e, 8);
	launch(&r, K1, NULL, 0);
	assert_int_equal(batches(&r, e, 8), 1);
	expect_batch(e[0], ENGINE_OP_PREFETCH, 0, (const struct engine_range[]){ { BASE, 4 * MB } }, 1);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.corr_launches, 2); /* the last U and K1 */
	rig_stop(&r);
	plan_destroy(p);
}

/*
 * The replay stays lost across the program's own iteration start: the
 * activation is made after K0 and written by K1 (ITERATION), evicted by
 * the plan at K2, and read by the next iteration's K3 (PREVIOUS), whose
 * blocks the plan prefetches there; the older instance is freed after
 * K3. After two iterations the matcher loses its place at unknown
 * kernels, and the third iteration begins with one (U4) before it makes
 * its activation. That allocation is the third iteration's: at K1, still
 * lost, the tables predict K3, whose PREVIOUS activation is the second
 * iteration's (evicted, so prefetched), not the first's (freed, standing
 * for nothing). K2 then finds the place again, at the start of the
 * iteration the allocation began: K2's eviction lands on the third
 * iteration's activation (K1 wrote it), not on the second's, and in the
 * fourth iteration K3's prefetch on the third's. Before a lost replay
 * counted the allocations past the plan's into the next iteration, the
 * third activation was no plan allocation at all: all three found
 * nothing to move.
 */
static void lost_across_iteration_start_resolves_the_new_iteration(void **state)
{
	const uint64_t ids[6] = { K0, K1, K2, K3, K4, K5 };
	const uint64_t sizes[1] = { 4 * MB };
	struct plan *p = new_plan(ids, 6, sizes, 1);
	const uint64_t before[6] = { 0, 1, 1, 1, 1, 1 };
	set_alloc_before(p, before);
	uint32_t older = add_alloc(p, PLAN_ALLOC_PREVIOUS, 1, 4 * MB);
	uint32_t newer = add_alloc(p, PLAN_ALLOC_ITERATION, 1, 4 * MB);
	add_op(p, 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, newer, 0, 4 * MB);
	add_op(p, 3, PLAN_OP_PREFETCH, PLAN_POS_NONE, 3, older, 0, 4 * MB);
	const struct corr_block k1[2] = { { newer, 0 }, { newer, 1 } };
	const struct corr_block k3[2] = { { older, 0 }, { older, 1 } };
	const struct corr_kernel_blocks kb[6] = { { NULL, 0 }, { k1, 2 }, { NULL, 0 }, { k3, 2 } };
	struct corr_config cc;
	corr_config_default(&cc);
	p->corr = corr_build(&cc, ids, 6, kb, NULL, 0);
	assert_non_null(p->corr);
	finish_plan(p);

	/* The second and the third iteration's activations. */
	const struct engine_range second = { BASE + 8 * MB, 4 * MB }, third = { BASE + 16 * MB, 4 * MB };
	struct rig r;
	const struct oplog_entry *e[8];
	rig_start(&r, ENGINE_PLAN, 0, p);
	for (uint64_t i = 0; i < 2; i++) {
		uint64_t id = 10 + i;
		launch(&r, K0, NULL, 0);
		engine_on_alloc(r.e, id, BASE + 8 * MB * i, 4 * MB);
		launch(&r, K1, (const uint64_t[]){ id }, 1);
		launch(&r, K2, NULL, 0);
		launch(&r, K3, (const uint64_t[]){ id - 1 }, i > 0);
		if (i > 0)
			engine_on_free(r.e, id - 1);
		launch(&r, K4, NULL, 0);
		launch(&r, K5, NULL, 0);
	}
	for (uint64_t i = 0; i < MATCH_LOST_AFTER + 1; i++)
		launch(&r, U + i, NULL, 0);
	batches(&r, e, 8);
	engine_on_alloc(r.e, 12, third.address, third.bytes);
	launch(&r, K1, (const uint64_t[]){ 12 }, 1);
	assert_int_equal(batches(&r, e, 8), 1);
	expect_batch(e[0], ENGINE_OP_PREFETCH, 0, &second, 1);

	launch(&r, K2, NULL, 0);
	assert_int_equal(batches(&r, e, 8), 1);
	expect_batch(e[0], ENGINE_OP_EVICT, e[0]->mark, &third, 1);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.resynced, 1);
	assert_int_equal(st.iterations, 2);
	launch(&r, K3, (const uint64_t[]){ 11 }, 1);
	engine_on_free(r.e, 11);
	launch(&r, K4, NULL, 0);
	launch(&r, K5, NULL, 0);

	launch(&r, K0, NULL, 0);
	engine_on_alloc(r.e, 13, BASE, 4 * MB);
	launch(&r, K1, (const uint64_t[]){ 13 }, 1);
	launch(&r, K2, NULL, 0);
	batches(&r, e, 8);
	launch(&r, K3, (const uint64_t[]){ 12 }, 1);
	assert_int_equal(batches(&r, e, 8), 1);
	expect_batch(e[0], ENGINE_OP_PREFETCH, e[0]->mark, &third, 1);
	rig_stop(&r);
	plan_destroy(p);
}

/*
 * Lost across the program's iteration start and found again in the middle
 * of the next iteration, farther than MATCH_NEAR past the entry: kernels
 * the plan does not know run from the second iteration's last one to the
 * third's 10th, and the 11th, known, has no support. The third iteration's
 * activation (made after kernel 5, used by 6, freed after 30) is made
 * while the matcher is lost, so the count began the iteration, and the
 * place found again at 12, half an iteration behind the last one placed
 * (30), starts it: counted, its time from that launch. Not the ops of the
 * positions before it, which the program ran unplaced: W's eviction at 3
 * would take a tensor that kernel 20 has used since. The eviction at 12
 * lands on the third iteration's activation. Before, no iteration started
 * from the loss to the next one on track (2 counted, not 3), and the one
 * that held the loss took the time of two (2000, not 1400 and 600).
 */
static void lost_across_iteration_start_found_mid_iteration_counts_it(void **state)
{
	enum { N = 32, FOUND = 12 };
	uint64_t ids[N], before[N];
	for (int i = 0; i < N; i++) {
		ids[i] = 0x1000 + (uint64_t)i;
		before[i] = i > 5;
	}
	const uint64_t sizes[1] = { 4 * MB };
	struct plan *p = new_plan(ids, N, sizes, 1);
	set_alloc_before(p, before);
	uint32_t w = add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 2 * MB);
	uint32_t act = add_alloc(p, PLAN_ALLOC_ITERATION, 1, 4 * MB);
	add_op(p, 3, PLAN_OP_EVICT, PLAN_POS_NONE, PLAN_POS_NONE, w, 0, 2 * MB);
	add_op(p, FOUND, PLAN_OP_EVICT, PLAN_POS_NONE, PLAN_POS_NONE, act, 0, 4 * MB);
	finish_plan(p);

	struct rig r;
	const struct oplog_entry *e[4];
	struct engine_stats st;
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	for (int k = 0; k < 4 * N; k++) {
		int it = k / N, i = k % N;
		uint64_t act_id = 10 + (uint64_t)it, use = i == 6 ? act_id : i == 20 ? 1 : 0;
		bool known = k < 2 * N - 1 || k > 2 * N + FOUND - 2;
		if (i == 0 || k == 2 * N + FOUND)
			oplog_set_time(r.log, 1000 * (uint64_t)(it + 1) + (i ? 400 : 0));
		batches(&r, e, 4);
		launch(&r, known ? ids[i] : U + (uint64_t)k, &use, use != 0);
		if (k == 2 * N + FOUND) {
			assert_int_equal(batches(&r, e, 4), 1);
			expect_batch(e[0], ENGINE_OP_EVICT, e[0]->mark,
				     (const struct engine_range[]){ { BASE + 8 * MB, 4 * MB } }, 1);
			engine_get_stats(r.e, &st);
			assert_int_equal(st.iterations, 2);
		}
		if (i == 5)
			engine_on_alloc(r.e, act_id, BASE + 8 * MB * (uint64_t)(1 + it % 2), 4 * MB);
		if (i == 30)
			engine_on_free(r.e, act_id);
	}
	engine_get_stats(r.e, &st);
	assert_int_equal(st.lost, FOUND + 1);
	assert_int_equal(st.iterations, 3);
	uint64_t t[4];
	assert_int_equal(engine_iteration_times(r.e, t, 4), 3);
	assert_true(t[0] == 1000 && t[1] == 1400 && t[2] == 600);
	rig_stop(&r);
	plan_destroy(p);
}

/*
 * Lost across the iteration start and found again near it, where the
 * matcher starts the iteration itself: the allocation the count made
 * meanwhile is the new iteration's for the foreign-plan check as for the
 * map. Every other iteration runs five kernels the plan does not know in
 * K0's place, then allocates, lost. Before, the check took that
 * allocation as the iteration before's (two in one window, none in the
 * next) and judged the program's own plan foreign.
 */
static void lost_across_iteration_start_found_near_it_judged_with_it(void **state)
{
	enum { N = 6, ITERATIONS = 8 };
	uint64_t ids[N], before[N];
	for (int i = 0; i < N; i++) {
		ids[i] = K0 + (uint64_t)i;
		before[i] = i > 0;
	}
	const uint64_t sizes[1] = { 4 * MB };
	struct plan *p = new_plan(ids, N, sizes, 1);
	set_alloc_before(p, before);
	add_alloc(p, PLAN_ALLOC_ITERATION, 1, 4 * MB);
	finish_plan(p);

	struct rig r;
	struct engine_stats st;
	rig_start(&r, ENGINE_PLAN, 0, p);
	for (int it = 0; it < ITERATIONS; it++) {
		uint64_t act = 10 + (uint64_t)it;
		if (it % 2)
			for (uint64_t u = 0; u < 5; u++)
				launch(&r, U + 8 * (uint64_t)it + u, NULL, 0);
		else
			launch(&r, ids[0], NULL, 0);
		engine_on_alloc(r.e, act, BASE + 8 * MB * (uint64_t)(1 + it % 2), 4 * MB);
		for (int i = 1; i < N; i++)
			launch(&r, ids[i], &act, i == 1);
		engine_on_free(r.e, act);
	}
	engine_get_stats(r.e, &st);
	assert_int_equal(st.signature_mismatch, 0);
	assert_int_equal(st.iterations, ITERATIONS - 1);
	rig_stop(&r);
	plan_destroy(p);
}

/* ideal: nothing issued, no markers, but launches and iterations counted,
 * with their times. */
static void ideal_counts_only(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	add_op(p, 1, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, a.w2, 0, 4 * MB);
	add_op(p, 5, PLAN_OP_DISCARD, 4, PLAN_POS_NONE, a.act, 0, act_size);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_IDEAL, 4 * MB, p);
	prog_setup(&r);
	for (int it = 0; it < 4; it++) {
		oplog_set_time(r.log, 1000 + 100 * (uint64_t)it * (uint64_t)it);
		prog_iteration(&r, 10 + (uint64_t)it, it == 0);
	}
	size_t n;
	fresh(&r, &n);
	assert_int_equal(n, 0);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.launches, 24);
	assert_int_equal(st.matched, 24);
	assert_int_equal(st.iterations, 3);
	assert_int_equal(st.modelled_peak_bytes, 0);
	uint64_t t[8];
	assert_int_equal(engine_iteration_times(r.e, t, 8), 3);
	assert_true(t[0] == 100 && t[1] == 300 && t[2] == 500);
	assert_int_equal(engine_iteration_times(r.e, t, 2), 2);
	rig_stop(&r);
	plan_destroy(p);
}

/* A long run keeps the times of its first ENGINE_ITERATION_TIMES
 * iterations and stops growing; the count goes on. Each iteration takes
 * its own time (launch i at i^2 ns: iteration k takes 2k + 1), so a time
 * past the cap that took a kept one's slot, or kept times out of order,
 * shows. */
static void iteration_times_capped(void **state)
{
	const uint64_t ids[1] = { K0 };
	struct plan *p = new_plan(ids, 1, NULL, 0);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_IDEAL, 0, p);
	const int runs = ENGINE_ITERATION_TIMES + 100;
	static uint64_t t[ENGINE_ITERATION_TIMES + 100];
	for (int i = 0; i <= runs; i++) {
		oplog_set_time(r.log, (uint64_t)i * (uint64_t)i);
		launch(&r, K0, NULL, 0);
		if (i == ENGINE_ITERATION_TIMES) { /* just full */
			assert_int_equal(engine_iteration_times(r.e, t, runs), ENGINE_ITERATION_TIMES);
			assert_int_equal(t[ENGINE_ITERATION_TIMES - 1], 2 * ENGINE_ITERATION_TIMES - 1);
		}
	}
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.iterations, runs);
	memset(t, 0, sizeof t);
	assert_int_equal(engine_iteration_times(r.e, t, runs), ENGINE_ITERATION_TIMES);
	for (uint64_t k = 0; k < ENGINE_ITERATION_TIMES; k++)
		if (t[k] != 2 * k + 1)
			fail_msg("iteration %llu: %llu ns, not %llu", (unsigned long long)k,
				 (unsigned long long)t[k], (unsigned long long)(2 * k + 1));
	assert_int_equal(t[ENGINE_ITERATION_TIMES], 0); /* nothing copied past them */
	rig_stop(&r);
	plan_destroy(p);
}

/* On-demand migrations are charged to the allocations that held their
 * addresses, by the identity the plan gives them, under any policy: an
 * activation made anew each iteration is one source (its plan allocation,
 * its first instance's id); a weight keeps its id. */
static void faults_charged_to_plan_allocations(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_ONDEMAND, 0, p);
	oplog_set_time(r.log, 10);
	prog_setup(&r);
	for (uint64_t it = 0; it < 3; it++) {
		oplog_set_time(r.log, 1000 * (it + 1));
		prog_iteration(&r, 10 + it, 0);
	}
	struct fault_event ev[] = {
		{ 1500, BASE + 16 * MB + 5, 4096, 0 }, { 2500, BASE + 20 * MB, 4096, 0 },
		{ 100, BASE + 1, 65536, 0 }, { 5, BASE, 4096, 0 },
	};
	struct fault_source s[4];
	struct fault_totals tot;
	assert_int_equal(engine_fault_sources(r.e, ev, 4, s, 4, &tot), 2);
	assert_int_equal(tot.unattributed, 1);
	assert_int_equal(s[0].origin, PLAN_ALLOC_PERSISTENT);
	assert_int_equal(s[0].ordinal, 1);
	assert_int_equal(s[0].plan_alloc, a.w1);
	assert_int_equal(s[1].origin, PLAN_ALLOC_ITERATION);
	assert_int_equal(s[1].ordinal, 1);
	assert_int_equal(s[1].plan_alloc, a.act);
	assert_int_equal(s[1].alloc_id, 10);
	assert_int_equal(s[1].migrations, 2);
	rig_stop(&r);

	/* Without the log (no --stats), nothing is noted or charged. */
	struct engine_config cfg = { ENGINE_ONDEMAND, 0, p, false, false, NULL };
	rig_start_config(&r, &cfg);
	prog_setup(&r);
	assert_int_equal(engine_fault_sources(r.e, ev, 4, s, 4, &tot), 0);
	assert_int_equal(tot.sources, 0);
	assert_int_equal(tot.unattributed, 4);
	rig_stop(&r);
	plan_destroy(p);
}

/* The plan of a ring of `steps` steps over ids[0 .. n) and persistent
 * buffers 1 .. nbuf (2 MiB each, plan allocations 0 .. nbuf - 1), with
 * ring keys keys (NULL: none). Ops go in before finish_plan. */
static struct plan *ring_plan(const uint64_t *ids, uint32_t n, uint32_t nbuf, uint32_t steps,
			      const uint64_t *keys)
{
	struct plan *p = new_plan(ids, n, NULL, 0);
	for (uint32_t b = 0; b < nbuf; b++)
		add_alloc(p, PLAN_ALLOC_PERSISTENT, b + 1, 2 * MB);
	if (keys) {
		p->signature.ring_steps = steps;
		p->signature.ring_keys = malloc(n * sizeof(uint64_t));
		memcpy(p->signature.ring_keys, keys, n * sizeof(uint64_t));
	}
	return p;
}

/* The engine on p with the ring's nbuf buffers allocated (buffer b at BASE
 * + 2 (b - 1) MiB) and, with lost, the matcher's place lost by four
 * launches the plan does not know, as the probe's fill kernels do. */
static void ring_rig(struct rig *r, const struct plan *p, uint32_t nbuf, bool lost)
{
	rig_start(r, ENGINE_PLAN, 0, p);
	for (uint64_t b = 0; b < nbuf; b++)
		engine_on_alloc(r->e, b + 1, BASE + 2 * b * MB, 2 * MB);
	for (int i = 0; lost && i < 4; i++)
		launch(r, U, NULL, 0);
}

/* A ring of four 2 MiB buffers used in turn by one kernel (tests/gpu/
 * ring_probe.cu): the plan's positions share the ID, and the program's
 * four fill kernels before the ring lose the matcher's place, so it
 * places the ring's second launch at the first position. With the plan's
 * ring keys the engine moves it to the second, and issues that position's
 * op (a prefetch of the third buffer), not the first position's (of the
 * second buffer), which an iteration's start would issue too: it belongs
 * to a step the program has passed. Without keys the place stays a step
 * behind, and so do the ops. */
static void ring_placed_by_its_keys(void **state)
{
	const uint64_t ids[4] = { K0, K0, K0, K0 }, keys[4] = { 1, 2, 3, 4 };
	for (int keyed = 0; keyed <= 1; keyed++) {
		struct plan *p = ring_plan(ids, 4, 4, 4, keyed ? keys : NULL);
		add_op(p, 0, PLAN_OP_PREFETCH, PLAN_POS_NONE, 1, 1, 0, 2 * MB);
		add_op(p, 1, PLAN_OP_PREFETCH, PLAN_POS_NONE, 2, 2, 0, 2 * MB);
		finish_plan(p);
		struct rig r;
		ring_rig(&r, p, 4, true);
		const struct oplog_entry *got[4];
		launch(&r, K0, (const uint64_t[]){ 1 }, 1); /* lost: no history yet */
		assert_int_equal(batches(&r, got, 4), 0);
		launch(&r, K0, (const uint64_t[]){ 2 }, 1); /* resynced at position 0 */
		size_t n = batches(&r, got, 4);
		struct engine_stats st;
		engine_get_stats(r.e, &st);
		assert_int_equal(n, 1);
		expect_batch(got[0], ENGINE_OP_PREFETCH, 0,
			     (const struct engine_range[]){ { BASE + (keyed ? 4 : 2) * MB, 2 * MB } }, 1);
		assert_int_equal(st.ring_moves, keyed ? 1 : 0);
		/* In step from then on: the next turn moves nothing more. */
		for (uint64_t b = 3; b <= 6; b++)
			launch(&r, K0, (const uint64_t[]){ (b - 1) % 4 + 1 }, 1);
		engine_get_stats(r.e, &st);
		assert_int_equal(st.ring_moves, keyed ? 1 : 0);
		assert_int_equal(st.resynced, 1);
		assert_int_equal(st.matched, 4);
		rig_stop(&r);
		plan_destroy(p);
	}
}

/* A ring of two steps of two kernels (K1 on nothing of its own, then K0
 * on the step's buffer), whose plan prefetches each step's buffer at its
 * K1. A program that enters at the second step is placed at the first
 * (the steps' histories are alike) and moved by the key of its K0: it
 * gets the second step's prefetch, placed before the moved position in
 * its step, and not the first step's. */
static void ring_move_issues_its_steps_ops(void **state)
{
	const uint64_t ids[4] = { K1, K0, K1, K0 }, keys[4] = { 0, 1, 0, 2 };
	struct plan *p = ring_plan(ids, 4, 2, 2, keys);
	add_op(p, 0, PLAN_OP_PREFETCH, PLAN_POS_NONE, 1, 0, 0, 2 * MB);
	add_op(p, 2, PLAN_OP_PREFETCH, PLAN_POS_NONE, 3, 1, 0, 2 * MB);
	finish_plan(p);
	struct rig r;
	ring_rig(&r, p, 2, true);
	const struct oplog_entry *got[4];
	launch(&r, K1, NULL, 0); /* lost: no history yet */
	assert_int_equal(batches(&r, got, 4), 0);
	launch(&r, K0, (const uint64_t[]){ 2 }, 1);
	assert_int_equal(batches(&r, got, 4), 1);
	expect_batch(got[0], ENGINE_OP_PREFETCH, 0,
		     (const struct engine_range[]){ { BASE + 2 * MB, 2 * MB } }, 1);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.ring_moves, 1);
	rig_stop(&r);
	plan_destroy(p);
}

/* A program that skips a step's K0 in the middle of a pass (a ring of two
 * steps of K1 then K0, as in ring_move_issues_its_steps_ops) is moved
 * ahead within the pass, and the iteration's allocations count on as
 * from the step it is at: the one made after it is the iteration's
 * second (the plan makes one before kernel 2, one after kernel 3), which
 * the plan prefetches at the next pass's start. */
static void ring_move_ahead_counts_allocations_on(void **state)
{
	const uint64_t ids[4] = { K1, K0, K1, K0 }, sizes[2] = { 2 * MB, 4 * MB };
	const uint64_t before[4] = { 0, 0, 1, 1 };
	struct plan *p = new_plan(ids, 4, sizes, 2);
	add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 2 * MB);
	add_alloc(p, PLAN_ALLOC_PERSISTENT, 2, 2 * MB);
	uint32_t second = add_alloc(p, PLAN_ALLOC_ITERATION, 2, 4 * MB);
	add_op(p, 0, PLAN_OP_PREFETCH, PLAN_POS_NONE, 1, second, 0, 4 * MB);
	set_alloc_before(p, before);
	p->signature.ring_steps = 2;
	p->signature.ring_keys = calloc(4, sizeof(uint64_t));
	p->signature.ring_keys[1] = 1;
	p->signature.ring_keys[3] = 2;
	finish_plan(p);
	struct rig r;
	ring_rig(&r, p, 2, false);
	const struct oplog_entry *got[4];
	/* A whole pass, then the next one's K1. */
	launch(&r, K1, NULL, 0);
	launch(&r, K0, (const uint64_t[]){ 1 }, 1);
	engine_on_alloc(r.e, 10, BASE + 8 * MB, 2 * MB);
	launch(&r, K1, NULL, 0);
	launch(&r, K0, (const uint64_t[]){ 2 }, 1);
	engine_on_alloc(r.e, 11, BASE + 16 * MB, 4 * MB);
	launch(&r, K1, NULL, 0);
	batches(&r, got, 4);
	/* Step 0's K0 skipped: on buffer 2, it is kernel 3. */
	launch(&r, K0, (const uint64_t[]){ 2 }, 1);
	engine_on_alloc(r.e, 12, BASE + 24 * MB, 4 * MB);
	assert_int_equal(batches(&r, got, 4), 0);
	launch(&r, K1, NULL, 0);
	assert_int_equal(batches(&r, got, 4), 1);
	expect_batch(got[0], ENGINE_OP_PREFETCH, 0,
		     (const struct engine_range[]){ { BASE + 24 * MB, 4 * MB } }, 1);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.ring_moves, 1);
	assert_int_equal(st.iterations, 2);
	rig_stop(&r);
	plan_destroy(p);
}

/* A program that goes back to the ring's first buffer before the end of a
 * turn (a new epoch): the move back past the plan's end starts a pass, as
 * a wrap does. */
static void ring_restart_starts_an_iteration(void **state)
{
	const uint64_t ids[4] = { K0, K0, K0, K0 }, keys[4] = { 1, 2, 3, 4 };
	struct plan *p = ring_plan(ids, 4, 4, 4, keys);
	finish_plan(p);
	struct rig r;
	ring_rig(&r, p, 4, false);
	const uint64_t turns[] = { 1, 2, 3, 4, 1, 2, 3, 1 };
	for (size_t i = 0; i < sizeof turns / sizeof turns[0]; i++)
		launch(&r, K0, &turns[i], 1);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.matched, 8);
	assert_int_equal(st.ring_moves, 1);
	assert_int_equal(st.iterations, 2);
	rig_stop(&r);
	plan_destroy(p);
}

/* Launches the plan cannot place are counted by execution ID in the steady
 * iterations: not before the first completes (warm-up), nor after the last
 * (the program's end-of-run work). */
static void steady_lost_kernels_counted(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_IDEAL, 0, p);
	prog_setup(&r);
	launch(&r, U, NULL, 0);
	prog_iteration(&r, 10, 0);
	prog_iteration(&r, 11, 0);     /* its K0 starts the first iteration */
	launch(&r, U + 3, NULL, 0);    /* in the first: warm-up */
	prog_iteration(&r, 12, 0);
	for (int i = 0; i < 3; i++)    /* in the second: steady */
		launch(&r, U + 1, NULL, 0);
	prog_iteration(&r, 13, 0);
	launch(&r, U + 2, NULL, 0);    /* after the last completed one */
	launch(&r, U + 2, NULL, 0);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.iterations, 2);
	assert_true(st.lost >= 7);
	struct lost_id top[2];
	struct lost_totals tot;
	assert_int_equal(engine_lost_kernels(r.e, top, 2, &tot), 1);
	assert_int_equal(tot.launches, 3);
	assert_int_equal(tot.distinct, 1);
	assert_int_equal(top[0].exec_id, U + 1);
	assert_int_equal(top[0].launches, 3);
	rig_stop(&r);
	plan_destroy(p);
}

/* Launches exec_id as launch() does and checks its answer against the
 * stats: news exactly when an iteration completed or the verdict came. */
static bool checked_launch(struct rig *r, uint64_t exec_id, const uint64_t *ids, size_t n)
{
	struct engine_stats before, after;
	engine_get_stats(r->e, &before);
	bool news = launch(r, exec_id, ids, n);
	engine_get_stats(r->e, &after);
	assert_int_equal(news, after.iterations != before.iterations ||
				       after.signature_mismatch != before.signature_mismatch);
	return news;
}

/* engine_on_launch tells the injection when the stats have news, and only
 * then: a program whose iterations complete (its allocations agree with
 * the plan's), and one whose kernels the plan does not hold, judged foreign
 * at a launch that completes no iteration. */
static void launch_tells_of_iterations_and_the_verdict(void **state)
{
	struct prog a;
	struct plan *p = prog_plan(&a);
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	prog_setup(&r);
	size_t told = 0;
	for (uint64_t it = 0; it < 4; it++) {
		told += checked_launch(&r, K0, (const uint64_t[]){ 4 }, 1);
		engine_on_alloc(r.e, 10 + it, BASE + 16 * MB, act_size);
		told += checked_launch(&r, K1, (const uint64_t[]){ 1, 10 + it }, 2);
		told += checked_launch(&r, K2, (const uint64_t[]){ 2, 10 + it }, 2);
		told += checked_launch(&r, K3, (const uint64_t[]){ 10 + it, 4 }, 2);
		told += checked_launch(&r, K4, (const uint64_t[]){ 10 + it }, 1);
		engine_on_free(r.e, 10 + it);
		told += checked_launch(&r, K5, NULL, 0);
	}
	assert_int_equal(told, 3);
	rig_stop(&r);

	rig_start(&r, ENGINE_PLAN, 0, p);
	told = 0;
	for (int i = 0; i < 10 * 6 + 10000; i++)
		told += checked_launch(&r, U + (uint64_t)i, NULL, 0);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.signature_mismatch, 1);
	assert_int_equal(st.iterations, 0);
	assert_int_equal(told, 1);
	rig_stop(&r);
	plan_destroy(p);
}

/* ---- host placement ---- */

/*
 * The program of the host placement tests: persistent W1 (2 MiB at BASE),
 * H (3 MiB at BASE + 2 MiB: blocks 1 and 2), which the plan keeps in host
 * memory, and W2 (2 MiB at BASE + 6 MiB); kernels K0 (W1), K1 (H, W2), K2
 * (H).
 */
static const uint64_t host_ids[3] = { K0, K1, K2 };
static const struct engine_range host_range = { BASE + 2 * MB, 4 * MB };

static struct plan *host_plan(void)
{
	struct plan *p = new_plan(host_ids, 3, NULL, 0);
	add_alloc(p, PLAN_ALLOC_PERSISTENT, 1, 2 * MB);
	uint32_t h = add_alloc(p, PLAN_ALLOC_PERSISTENT, 2, 3 * MB);
	add_alloc(p, PLAN_ALLOC_PERSISTENT, 3, 2 * MB);
	p->host = malloc(sizeof *p->host);
	assert_non_null(p->host);
	p->host[0] = h;
	p->n_host = 1;
	return p;
}

static void host_iteration(struct rig *r)
{
	launch(r, K0, (const uint64_t[]){ 1 }, 1);
	launch(r, K1, (const uint64_t[]){ 2, 3 }, 2);
	launch(r, K2, (const uint64_t[]){ 2 }, 1);
}

static void expect_place(const struct oplog_entry *e, int place, const struct engine_range *want)
{
	assert_false(e->is_mark);
	assert_int_equal(e->place, place);
	assert_int_equal(e->n, 1);
	assert_true(e->ranges[0].address == want->address);
	assert_true(e->ranges[0].bytes == want->bytes);
}

/* Frees allocation id: the only placement that brings is the release of
 * want. */
static void expect_released(struct rig *r, uint64_t id, const struct engine_range *want)
{
	size_t n, places = 0;
	engine_on_free(r->e, id);
	const struct oplog_entry *e = fresh(r, &n);
	for (size_t i = 0; i < n; i++)
		if (e[i].place) {
			expect_place(&e[i], -1, want);
			places++;
		}
	assert_int_equal(places, 1);
}

/* H is placed when it is made, on its whole blocks, and nothing else is;
 * its blocks then count toward no budget and are never prefetched or
 * evicted (a budget of W1 and W2 alone needs no eviction); its free
 * releases the placement, after which the blocks count again. */
static void host_allocation_placed_and_released(void **state)
{
	struct plan *p = host_plan();
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 4 * MB, p);
	size_t n;
	const struct oplog_entry *e;
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	fresh(&r, &n);
	assert_int_equal(n, 0);
	engine_on_alloc(r.e, 2, BASE + 2 * MB, 3 * MB);
	e = fresh(&r, &n);
	assert_int_equal(n, 1);
	expect_place(&e[0], 1, &host_range);
	engine_on_alloc(r.e, 3, BASE + 6 * MB, 2 * MB);
	fresh(&r, &n);
	assert_int_equal(n, 0);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.host_allocs, 1);
	assert_true(st.host_bytes == 4 * MB);

	host_iteration(&r);
	host_iteration(&r);
	e = fresh(&r, &n);
	for (size_t i = 0; i < n; i++)
		assert_true(e[i].is_mark);
	engine_get_stats(r.e, &st);
	assert_int_equal(st.launches, 6);
	assert_int_equal(st.budget_evictions, 0);
	assert_int_equal(st.budget_overruns, 0);
	assert_true(st.modelled_peak_bytes == 4 * MB);

	expect_released(&r, 2, &host_range);
	assert_int_equal(count_places(&r), 2);
	engine_get_stats(r.e, &st);
	assert_int_equal(st.host_allocs, 1);

	/* A later tenant of the blocks (no plan allocation) is modelled:
	 * its first kernel makes room by evicting W1 and W2. */
	engine_on_alloc(r.e, 9, BASE + 2 * MB, 4 * MB);
	launch(&r, K0, (const uint64_t[]){ 9 }, 1);
	engine_get_stats(r.e, &st);
	assert_int_equal(st.budget_evictions, 2);
	assert_int_equal(count_kind(&r, ENGINE_OP_EVICT), 1);
	assert_int_equal(count_places(&r), 2);
	rig_stop(&r);
	plan_destroy(p);
}

/* With a host offset of 2 MiB only H's second block (its tail) is placed;
 * its first is modelled like any other, so a budget of W1, W2 and that
 * block needs no eviction, and the free releases the tail alone. */
static void host_tail_placed_and_released(void **state)
{
	struct plan *p = host_plan();
	p->host_offset = calloc(1, sizeof *p->host_offset);
	assert_non_null(p->host_offset);
	p->host_offset[0] = 2 * MB;
	finish_plan(p);
	const struct engine_range tail = { BASE + 4 * MB, 2 * MB };
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 6 * MB, p);
	size_t n;
	const struct oplog_entry *e;
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	engine_on_alloc(r.e, 2, BASE + 2 * MB, 3 * MB);
	e = fresh(&r, &n);
	assert_int_equal(n, 1);
	expect_place(&e[0], 1, &tail);
	engine_on_alloc(r.e, 3, BASE + 6 * MB, 2 * MB);
	host_iteration(&r);
	host_iteration(&r);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.host_allocs, 1);
	assert_true(st.host_bytes == 2 * MB);
	assert_int_equal(st.budget_evictions, 0);
	assert_true(st.modelled_peak_bytes == 6 * MB);
	fresh(&r, &n);
	expect_released(&r, 2, &tail);
	rig_stop(&r);
	plan_destroy(p);
}

/* Runs the host program (H at address h_at, a small allocation at BASE +
 * 5 MiB made first when shared) under policy and a budget of W1 and W2, and
 * checks H was not placed; returns the budget evictions. */
static uint64_t run_unplaced(const struct plan *p, enum engine_policy policy, uint64_t h_at,
			     bool shared)
{
	struct rig r;
	rig_start(&r, policy, 4 * MB, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	if (shared)
		engine_on_alloc(r.e, 9, BASE + 5 * MB, 4096);
	engine_on_alloc(r.e, 2, h_at, 3 * MB);
	engine_on_alloc(r.e, 3, BASE + 6 * MB, 2 * MB);
	host_iteration(&r);
	assert_int_equal(count_places(&r), 0);
	engine_on_free(r.e, 2);
	assert_int_equal(count_places(&r), 0);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.host_allocs, 0);
	assert_int_equal(st.host_bytes, 0);
	rig_stop(&r);
	return st.budget_evictions;
}

/* Not placed: under the other policies (they have no host placement: H's
 * blocks are modelled, and where there is a model the budget evicts for
 * them), at an address inside a block, on a block another live allocation
 * holds, under a plan judged foreign, or with an executor that cannot
 * place. */
static void host_allocation_not_placed(void **state)
{
	struct plan *p = host_plan();
	finish_plan(p);
	assert_int_equal(run_unplaced(p, ENGINE_IDEAL, BASE + 2 * MB, false), 0);
	assert_true(run_unplaced(p, ENGINE_ONDEMAND, BASE + 2 * MB, false) > 0);
	assert_true(run_unplaced(p, ENGINE_DEEPUM, BASE + 2 * MB, false) > 0);
	assert_true(run_unplaced(p, ENGINE_PLAN, BASE + 2 * MB + 4096, false) > 0);
	assert_true(run_unplaced(p, ENGINE_PLAN, BASE + 2 * MB, true) > 0);

	/* Nor once the plan is judged another program's. */
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 4 * MB, p);
	for (int i = 0; i < 10 * 3 + 10000; i++)
		launch(&r, U + (uint64_t)i, NULL, 0);
	engine_on_alloc(r.e, 2, BASE + 2 * MB, 3 * MB);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.signature_mismatch, 1);
	assert_int_equal(st.host_allocs, 0);
	assert_int_equal(count_places(&r), 0);
	rig_stop(&r);

	oplog *l = oplog_create();
	struct engine_executor x = oplog_executor(l);
	x.place = NULL;
	char err[128];
	struct engine_config cfg = { ENGINE_PLAN, 4 * MB, p, false, false, NULL };
	engine *e = engine_create(&cfg, &x, err, sizeof err);
	assert_non_null(e);
	engine_on_alloc(e, 2, BASE + 2 * MB, 3 * MB);
	engine_on_free(e, 2);
	engine_get_stats(e, &st);
	assert_int_equal(st.host_allocs, 0);
	/* Nothing placed, nothing issued: only the free's marker. */
	size_t n;
	const struct oplog_entry *en = oplog_entries(l, &n);
	assert_int_equal(n, 1);
	assert_true(en[0].is_mark);
	engine_destroy(e);
	oplog_destroy(l);
	plan_destroy(p);
}

/* An earlier tenant of H's blocks (freed, its blocks left resident) is
 * evicted before H is placed there: a page on the GPU would stay there. */
static void host_placement_evicts_earlier_tenant(void **state)
{
	struct plan *p = host_plan();
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 64 * MB, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	engine_on_alloc(r.e, 9, BASE + 2 * MB, 4 * MB);
	launch(&r, K0, (const uint64_t[]){ 1, 9 }, 2);
	engine_on_free(r.e, 9);
	size_t n;
	fresh(&r, &n);
	engine_on_alloc(r.e, 2, BASE + 2 * MB, 3 * MB);
	const struct oplog_entry *e = fresh(&r, &n);
	assert_int_equal(n, 2);
	expect_batch(&e[0], ENGINE_OP_EVICT, 0, &host_range, 1);
	assert_int_equal(e[0].place, 0);
	expect_place(&e[1], 1, &host_range);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.ops[ENGINE_OP_EVICT], 1);
	assert_true(st.bytes[ENGINE_OP_EVICT] == 4 * MB);
	assert_int_equal(st.host_allocs, 1);
	rig_stop(&r);
	plan_destroy(p);
}

/* H's blocks, kept in host memory, were used there by K1 and K2 though no
 * kernel made them resident: once H is freed its bytes lie dead on the
 * host, as an evicted block's would. A fresh tenant's first kernel gets a
 * discard-and-prefetch of them (behind H's free), not faults that copy
 * those bytes in, and a tenant that is no longer fresh counts them among
 * the blocks it faults back in. */
static void host_blocks_count_as_used(void **state)
{
	struct plan *p = host_plan();
	finish_plan(p);
	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	engine_on_alloc(r.e, 2, BASE + 2 * MB, 3 * MB);
	engine_on_alloc(r.e, 3, BASE + 6 * MB, 2 * MB);
	host_iteration(&r);
	size_t n;
	fresh(&r, &n);
	engine_on_free(r.e, 2);
	const struct oplog_entry *e = fresh(&r, &n);
	uint64_t freed = 0;
	for (size_t i = 0; i < n; i++)
		if (e[i].is_mark)
			freed = e[i].mark;
	assert_true(freed != 0);
	engine_on_alloc(r.e, 9, BASE + 2 * MB, 4 * MB);
	launch(&r, K0, (const uint64_t[]){ 9 }, 1);
	const struct oplog_entry *b[4];
	assert_int_equal(batches(&r, b, 4), 1);
	expect_batch(b[0], ENGINE_OP_DISCARD_PREFETCH, freed, &host_range, 1);
	rig_stop(&r);

	/* A tenant written by the host before its first kernel faults the
	 * blocks in: counted as such. */
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 2, BASE + 2 * MB, 3 * MB);
	host_iteration(&r);
	engine_on_free(r.e, 2);
	engine_on_managed_alloc(r.e, 10, BASE + 2 * MB, 4 * MB);
	struct engine_stats before, after;
	engine_get_stats(r.e, &before);
	launch(&r, K0, (const uint64_t[]){ 10 }, 1);
	engine_get_stats(r.e, &after);
	fresh(&r, &n);
	assert_int_equal(count_kind(&r, ENGINE_OP_DISCARD_PREFETCH), 0);
	assert_int_equal(after.refault_blocks - before.refault_blocks, 2);
	rig_stop(&r);
	plan_destroy(p);
}

/* Correlation tables that name H (umplan leaves it out of them; a plan made
 * otherwise may not): once the run is lost, K0's predicted successors
 * prefetch W3, which no kernel used, but never H's blocks. W3 comes last in
 * K1's list, after H's blocks: the pass skips them rather than ending
 * there. */
static void host_blocks_never_prefetched(void **state)
{
	struct plan *p = host_plan();
	add_alloc(p, PLAN_ALLOC_PERSISTENT, 4, 2 * MB);
	const struct corr_block k0[1] = { { 0, 0 } };
	const struct corr_block k1[4] = { { 2, 0 }, { 1, 0 }, { 1, 1 }, { 3, 0 } };
	const struct corr_block k2[2] = { { 1, 0 }, { 1, 1 } };
	const struct corr_kernel_blocks kb[3] = { { k0, 1 }, { k1, 4 }, { k2, 2 } };
	struct corr_config cc;
	corr_config_default(&cc);
	p->corr = corr_build(&cc, host_ids, 3, kb, NULL, 0);
	assert_non_null(p->corr);
	finish_plan(p);

	struct rig r;
	rig_start(&r, ENGINE_PLAN, 0, p);
	engine_on_alloc(r.e, 1, BASE, 2 * MB);
	engine_on_alloc(r.e, 2, BASE + 2 * MB, 3 * MB);
	engine_on_alloc(r.e, 3, BASE + 6 * MB, 2 * MB);
	engine_on_alloc(r.e, 4, BASE + 8 * MB, 2 * MB);
	host_iteration(&r);
	for (uint64_t i = 0; i < 4; i++)
		launch(&r, U + i, NULL, 0);
	launch(&r, K0, (const uint64_t[]){ 1 }, 1);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_true(st.corr_launches > 0);
	assert_int_equal(st.host_allocs, 1);
	size_t n;
	const struct oplog_entry *e = oplog_entries(r.log, &n);
	size_t w3 = 0;
	for (size_t i = 0; i < n; i++) {
		if (e[i].is_mark || e[i].place)
			continue;
		for (size_t j = 0; j < e[i].n; j++) {
			const struct engine_range *g = &e[i].ranges[j];
			assert_false(g->address < host_range.address + host_range.bytes &&
				     host_range.address < g->address + g->bytes);
			w3 += e[i].op == ENGINE_OP_PREFETCH && g->address == BASE + 8 * MB;
		}
	}
	assert_int_equal(w3, 1);
	rig_stop(&r);
	plan_destroy(p);
}

static void create_checks_config(void **state)
{
	oplog *l = oplog_create();
	struct engine_executor x = oplog_executor(l);
	char err[128];
	struct engine_config cfg = { ENGINE_PLAN, 0, NULL, false, false, NULL };
	assert_null(engine_create(&cfg, &x, err, sizeof err));
	assert_string_equal(err, "policy plan needs a plan (--plan)");
	cfg.policy = ENGINE_ONDEMAND;
	struct engine_executor bad = x;
	bad.mark = NULL;
	assert_null(engine_create(&cfg, &bad, err, sizeof err));
	engine *e = engine_create(&cfg, &x, err, sizeof err);
	assert_non_null(e);
	engine_destroy(e);
	engine_destroy(NULL);
	enum engine_policy pol;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(engine_policy_parse(engine_policy_name((enum engine_policy)i), &pol), 0);
		assert_int_equal(pol, i);
	}
	assert_int_equal(engine_policy_parse("lru", &pol), -1);
	assert_int_equal(engine_policy_parse(NULL, &pol), -1);
	oplog_destroy(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ops_at_positions_with_waits),
		cmocka_unit_test(launches_gate_on_their_prefetch),
		cmocka_unit_test(only_late_prefetches_are_waited_for),
		cmocka_unit_test(gate_takes_the_newest_ticket_and_waits_only_for_a_late_prefetch),
		cmocka_unit_test(budget_defers_plan_discards),
		cmocka_unit_test(discard_prefetch_beside_evictions),
		cmocka_unit_test(kinds_in_order),
		cmocka_unit_test(discard_never_touches_live_memory),
		cmocka_unit_test(discard_before_first_launch_waits_for_the_free),
		cmocka_unit_test(unmodelled_allocation_stops_discards),
		cmocka_unit_test(unmodelled_allocation_makes_discard_prefetch_a_prefetch),
		cmocka_unit_test(discarded_block_is_not_discarded_again),
		cmocka_unit_test(discard_refused_without_its_frees_marker),
		cmocka_unit_test(discard_prefetch_waits_for_the_blocks_free),
		cmocka_unit_test(discard_prefetch_without_a_marker_is_a_prefetch),
		cmocka_unit_test(skipped_position_ops),
		cmocka_unit_test(reordered_kernels_issue_each_op_once),
		cmocka_unit_test(reordered_kernels_repeat_no_eviction),
		cmocka_unit_test(prefetch_never_evicts_a_kept_prefetch),
		cmocka_unit_test(eviction_waits_for_its_op_and_the_blocks_last_use),
		cmocka_unit_test(iteration_start_issues_the_ops_before_it),
		cmocka_unit_test(resync_past_the_skipped_cap_drops_their_ops),
		cmocka_unit_test(previous_instance_resolved_in_every_iteration),
		cmocka_unit_test(no_previous_instance_after_a_drifted_iteration),
		cmocka_unit_test(previous_only_instance_charged_to_its_plan_allocation),
		cmocka_unit_test(resync_counts_allocations_on),
		cmocka_unit_test(foreign_by_allocations),
		cmocka_unit_test(foreign_by_kernels),
		cmocka_unit_test(lost_falls_back_to_correlation),
		cmocka_unit_test(lookahead_past_iteration_end_prefetches_previous_instance),
		cmocka_unit_test(lookahead_without_wrap_stays_in_the_iteration),
		cmocka_unit_test(lost_across_iteration_start_resolves_the_new_iteration),
		cmocka_unit_test(lost_across_iteration_start_found_mid_iteration_counts_it),
		cmocka_unit_test(lost_across_iteration_start_found_near_it_judged_with_it),
		cmocka_unit_test(ideal_counts_only),
		cmocka_unit_test(iteration_times_capped),
		cmocka_unit_test(faults_charged_to_plan_allocations),
		cmocka_unit_test(steady_lost_kernels_counted),
		cmocka_unit_test(ring_placed_by_its_keys),
		cmocka_unit_test(ring_restart_starts_an_iteration),
		cmocka_unit_test(ring_move_issues_its_steps_ops),
		cmocka_unit_test(ring_move_ahead_counts_allocations_on),
		cmocka_unit_test(launch_tells_of_iterations_and_the_verdict),
		cmocka_unit_test(host_allocation_placed_and_released),
		cmocka_unit_test(host_tail_placed_and_released),
		cmocka_unit_test(host_allocation_not_placed),
		cmocka_unit_test(host_placement_evicts_earlier_tenant),
		cmocka_unit_test(host_blocks_count_as_used),
		cmocka_unit_test(host_blocks_never_prefetched),
		cmocka_unit_test(refaults_counted),
		cmocka_unit_test(stale_blocks_repopulated),
		cmocka_unit_test(refault_causes),
		cmocka_unit_test(unread_evictions_counted),
		cmocka_unit_test(create_checks_config),
	};
	return cmocka_run_group_tests_name("replay_engine", tests, NULL, NULL);
}
