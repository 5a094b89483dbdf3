/*
 * Unit tests for the replay engine's budget and residency model, and for
 * the ondemand and deepum policies (replay/engine.c, act.c, residency.c,
 * policy_corr.c), judged by the recording executor (replay/oplog.c):
 *  - a property test over random programs (small allocations sharing
 *    blocks, ranges freed and reused, kernels inserted at random) and
 *    random plans, under ondemand, deepum and plan, and under plan and
 *    deepum without a budget, with evictions reported still on their way
 *    out at random (dead blocks discarded beside them): an independent model built from the ops
 *    alone never holds more than the budget at a kernel, no op touches dead
 *    memory except a discard, no discard touches live memory or waits for
 *    a marker older than the free (one recorded before a launch that came
 *    before it), a discard-and-prefetch only a block whose one live
 *    allocation no kernel has used yet, and no eviction takes a block of
 *    the kernel being launched;
 *  - LRU order, a kernel's own blocks never evicted, dead blocks dropped
 *    first (by discard), a marker behind every launch under a budget;
 *  - deepum prefetching the blocks of predicted kernels once learnt, and
 *    discarding at free; ondemand never prefetching.
 */
#include "testutil.h"

#include <pthread.h>

#include "plan.h"
#include "replay/engine.h"
#include "replay/oplog.h"

#define MB ((uint64_t)1 << 20)
#define BLK (2 * MB)
#define BASE ((uint64_t)0x7f0000000000)
#define NBLK 512 /* blocks of the test's address space */

/* ---- an independent model of what the ops do ---- */

struct check {
	uint64_t budget_blocks;
	bool budgeted;            /* budget_blocks is the engine's budget */
	uint32_t live[NBLK];      /* live allocations per block */
	uint32_t fresh[NBLK];     /* of those, the ones no kernel has used */
	uint8_t resident[NBLK];
	uint64_t dead_mark[NBLK]; /* marker logged by the free that killed it */
	uint64_t floor[NBLK];     /* the oldest marker that covers the work
				     queued before the latest free in it */
	uint8_t kernel[NBLK];     /* blocks of the launch being checked */
	size_t seen;              /* log entries checked */
	uint64_t last_mark;
	bool launched;            /* a launch since last_mark was logged */
	uint64_t discards, evicts, prefetches, fresh_prefetches;
	bool plain_um;            /* ondemand: dead blocks are evicted, never
				     discarded */
};

static uint32_t blk(uint64_t address)
{
	uint64_t b = (address - BASE) / BLK;
	assert_true(b < NBLK);
	return (uint32_t)b;
}

static void check_alloc(struct check *c, uint64_t address, uint64_t size)
{
	for (uint32_t b = blk(address); b <= blk(address + size - 1); b++) {
		c->live[b]++;
		c->fresh[b]++;
	}
}

/* An allocation's first kernel has been launched (and checked): it is no
 * longer fresh. */
static void check_first_use(struct check *c, uint64_t address, uint64_t size)
{
	for (uint32_t b = blk(address); b <= blk(address + size - 1); b++)
		c->fresh[b]--;
}

/* Checks the entries logged since the last call. in_free: they come from a
 * free (its marker, if any, is the dead marker of the blocks it kills). */
static void check_log(struct check *c, oplog *log)
{
	size_t n;
	const struct oplog_entry *e = oplog_entries(log, &n);
	for (size_t i = c->seen; i < n; i++) {
		if (e[i].is_mark) {
			c->last_mark = e[i].mark;
			c->launched = false;
			continue;
		}
		for (size_t r = 0; r < e[i].n; r++) {
			assert_true(e[i].ranges[r].address % BLK == 0 && e[i].ranges[r].bytes % BLK == 0);
			if (r)
				assert_true(e[i].ranges[r].address > e[i].ranges[r - 1].address +
								  e[i].ranges[r - 1].bytes);
			for (uint64_t a = e[i].ranges[r].address;
			     a < e[i].ranges[r].address + e[i].ranges[r].bytes; a += BLK) {
				uint32_t b = blk(a);
				switch (e[i].op) {
				case ENGINE_OP_DISCARD:
					assert_false(c->plain_um);
					assert_int_equal(c->live[b], 0);
					assert_true(e[i].mark >= c->dead_mark[b]);
					assert_true(e[i].mark >= c->floor[b]);
					c->resident[b] = 0;
					c->discards++;
					break;
				case ENGINE_OP_EVICT:
					if (c->plain_um && !c->live[b])
						assert_true(e[i].mark >= c->dead_mark[b]);
					else
						assert_true(c->live[b] > 0);
					assert_false(c->kernel[b]);
					c->resident[b] = 0;
					c->evicts++;
					break;
				case ENGINE_OP_DISCARD_PREFETCH:
					assert_int_equal(c->live[b], 1);
					assert_int_equal(c->fresh[b], 1);
					assert_true(e[i].mark >= c->floor[b]);
					c->resident[b] = 1;
					c->fresh_prefetches++;
					break;
				case ENGINE_OP_PREFETCH:
					assert_true(c->live[b] > 0);
					c->resident[b] = 1;
					c->prefetches++;
					break;
				}
			}
		}
		/* The room a discard-and-prefetch is given is what the budget
		 * leaves once it is in (the flush's prefetches come after it
		 * and only take more): evictions that fit it may be still on
		 * the GPU meanwhile without passing the budget. */
		if (e[i].op == ENGINE_OP_DISCARD_PREFETCH && c->budgeted) {
			uint64_t held = 0;
			for (uint32_t b = 0; b < NBLK; b++)
				held += c->resident[b];
			assert_true(held <= c->budget_blocks);
			assert_true(e[i].room <= (c->budget_blocks - held) * BLK);
		}
	}
	c->seen = n;
}

/* fresh: no kernel has used the allocation. */
static void check_free(struct check *c, oplog *log, engine *e, uint64_t id, uint64_t address,
		       uint64_t size, bool fresh)
{
	/* A marker logged before a launch that came before the free covers
	 * not all the work that may use the memory. */
	uint64_t floor = c->last_mark + c->launched;
	size_t before;
	oplog_entries(log, &before);
	engine_on_free(e, id);
	size_t after;
	const struct oplog_entry *en = oplog_entries(log, &after);
	uint64_t mark = 0;
	for (size_t i = before; i < after; i++)
		if (en[i].is_mark)
			mark = en[i].mark;
	for (uint32_t b = blk(address); b <= blk(address + size - 1); b++) {
		c->fresh[b] -= fresh;
		c->floor[b] = floor;
		if (--c->live[b] == 0)
			c->dead_mark[b] = mark;
	}
	check_log(c, log);
}

/* ---- random programs ---- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return rnd(r) % n;
}

/* A deterministic first-fit arena over the test's blocks: large sizes get
 * whole blocks, small ones (<= 256 KiB) one of 8 slots of a small block. */
struct arena_sim {
	uint8_t used[NBLK];     /* 0 free, 1 large, 2 small */
	uint8_t slots[NBLK];    /* small blocks: bitmap of used slots */
};

static uint64_t sim_alloc(struct arena_sim *a, uint64_t size)
{
	if (size <= 256 * 1024) {
		for (uint32_t b = 0; b < NBLK; b++) {
			if (a->used[b] == 2 && a->slots[b] != 0xff) {
				for (int s = 0; s < 8; s++)
					if (!(a->slots[b] & (1u << s))) {
						a->slots[b] |= (uint8_t)(1u << s);
						return BASE + b * BLK + (uint64_t)s * 256 * 1024;
					}
			}
		}
		for (uint32_t b = 0; b < NBLK; b++)
			if (!a->used[b]) {
				a->used[b] = 2;
				a->slots[b] = 1;
				return BASE + b * BLK;
			}
		fail_msg("test arena full");
	}
	uint32_t n = (uint32_t)((size + BLK - 1) / BLK);
	for (uint32_t b = 0; b + n <= NBLK; b++) {
		uint32_t k = 0;
		while (k < n && !a->used[b + k])
			k++;
		if (k == n) {
			memset(&a->used[b], 1, n);
			return BASE + b * BLK;
		}
	}
	fail_msg("test arena full");
	return 0;
}

static void sim_free(struct arena_sim *a, uint64_t address, uint64_t size)
{
	uint32_t b = blk(address);
	if (size <= 256 * 1024) {
		a->slots[b] &= (uint8_t)~(1u << ((address - BASE) % BLK / (256 * 1024)));
		if (!a->slots[b])
			a->used[b] = 0;
		return;
	}
	memset(&a->used[b], 0, (size + BLK - 1) / BLK);
}

/* One event of the iteration's script. */
enum ev_kind { EV_LAUNCH, EV_ALLOC, EV_FREE };
struct ev {
	enum ev_kind kind;
	uint64_t exec_id;
	uint32_t acc[3], n_acc; /* EV_LAUNCH: script allocation slots */
	uint32_t slot;          /* EV_ALLOC / EV_FREE */
};

#define PERSIST 10
#define ITER_SLOTS 12
#define MAX_EV 160

struct script {
	uint64_t size[PERSIST + ITER_SLOTS]; /* slots 0..PERSIST-1 persistent */
	struct ev ev[MAX_EV];
	uint32_t n_ev, n_kernels;
	uint64_t ids[MAX_EV];        /* exec IDs of the iteration's kernels */
	uint64_t alloc_sizes[ITER_SLOTS];
};

static uint64_t rand_size(struct rng *r)
{
	return below(r, 3) == 0 ? 512 * (1 + below(r, 400)) : MB * (1 + below(r, 12));
}

/* Kernels touch at most 3 allocations of at most 12 MiB: 18 blocks, plus
 * the blocks a small allocation's neighbours share. */
static void make_script(struct script *s, struct rng *r)
{
	memset(s, 0, sizeof *s);
	for (int i = 0; i < PERSIST + ITER_SLOTS; i++)
		s->size[i] = rand_size(r);
	bool live[ITER_SLOTS] = { false };
	uint32_t next_slot = 0;
	for (uint32_t k = 0; k < 40; k++) {
		if (next_slot < ITER_SLOTS && below(r, 3) == 0) {
			s->ev[s->n_ev++] = (struct ev){ .kind = EV_ALLOC, .slot = next_slot };
			s->alloc_sizes[next_slot] = s->size[PERSIST + next_slot];
			live[next_slot++] = true;
		}
		struct ev l = { .kind = EV_LAUNCH, .exec_id = 0x500 + below(r, 9) };
		for (uint32_t a = 0; a < 1 + below(r, 3); a++) {
			uint32_t slot = (uint32_t)below(r, PERSIST + next_slot);
			if (slot < PERSIST || live[slot - PERSIST])
				l.acc[l.n_acc++] = slot;
		}
		s->ids[s->n_kernels++] = l.exec_id;
		s->ev[s->n_ev++] = l;
		if (below(r, 4) == 0) {
			uint32_t f = (uint32_t)below(r, ITER_SLOTS);
			if (f < next_slot && live[f]) {
				s->ev[s->n_ev++] = (struct ev){ .kind = EV_FREE, .slot = f };
				live[f] = false;
			}
		}
	}
	for (uint32_t f = 0; f < next_slot; f++)
		if (live[f])
			s->ev[s->n_ev++] = (struct ev){ .kind = EV_FREE, .slot = f };
	/* alloc_sizes covers the slots made (the plan's signature). */
	for (uint32_t f = next_slot; f < ITER_SLOTS; f++)
		s->alloc_sizes[f] = 0;
}

static uint32_t slots_made(const struct script *s)
{
	uint32_t n = 0;
	while (n < ITER_SLOTS && s->alloc_sizes[n])
		n++;
	return n;
}

/* A random but valid plan for the script: ops of every kind on random
 * allocations, positions and ranges (the engine must stay safe whatever
 * the plan says). */
static struct plan *random_plan(const struct script *s, struct rng *r)
{
	struct plan *p = plan_create();
	uint32_t n = s->n_kernels, na = slots_made(s);
	p->signature.n_kernels = n;
	p->signature.exec_ids = malloc(n * sizeof(uint64_t));
	memcpy(p->signature.exec_ids, s->ids, n * sizeof(uint64_t));
	p->signature.n_alloc_sizes = na;
	p->signature.alloc_sizes = malloc((na ? na : 1) * sizeof(uint64_t));
	memcpy(p->signature.alloc_sizes, s->alloc_sizes, na * sizeof(uint64_t));
	p->n_allocs = PERSIST + na;
	p->allocs = malloc(p->n_allocs * sizeof *p->allocs);
	for (uint32_t i = 0; i < p->n_allocs; i++)
		p->allocs[i] = i < PERSIST ? (struct plan_alloc){ PLAN_ALLOC_PERSISTENT, i + 1, s->size[i] }
					   : (struct plan_alloc){ PLAN_ALLOC_ITERATION, i - PERSIST + 1,
								  s->size[i] };
	p->n_ops = 60;
	p->ops = malloc(p->n_ops * sizeof *p->ops);
	for (uint64_t i = 0; i < p->n_ops; i++) {
		struct plan_op *op = &p->ops[i];
		op->position = (uint32_t)below(r, n);
		op->kind = (uint8_t)(PLAN_OP_KIND_MIN + below(r, 4));
		op->alloc = (uint32_t)below(r, p->n_allocs);
		uint64_t size = p->allocs[op->alloc].size;
		op->offset = below(r, size);
		op->bytes = 1 + below(r, size - op->offset);
		bool in = op->kind == PLAN_OP_PREFETCH || op->kind == PLAN_OP_DISCARD_PREFETCH;
		op->after = op->kind == PLAN_OP_PREFETCH ? PLAN_POS_NONE : (uint32_t)below(r, n);
		op->deadline = in ? (uint32_t)below(r, n) : PLAN_POS_NONE;
	}
	char err[256];
	plan_finalize(p);
	if (plan_validate(p, "random", err, sizeof err) != 0)
		fail_msg("%s", err);
	return p;
}

/* What the property runs did, summed: proof that they exercised the
 * budget, prefetches and discards at all. */
static uint64_t total_evictions, total_prefetches, total_discards, total_fresh_prefetches, total_beside;

/* Runs iterations of the script (with a random extra kernel now and then)
 * under policy, and a budget where budgeted, checking every op. */
static void run_script(const struct script *s, struct rng *r, enum engine_policy policy,
		       const struct plan *plan, bool budgeted)
{
	oplog *log = oplog_create();
	struct engine_executor x = oplog_executor(log);
	static struct check c;
	memset(&c, 0, sizeof c);
	c.budget_blocks = budgeted ? 24 + below(r, 8) : NBLK;
	c.budgeted = budgeted;
	c.plain_um = policy == ENGINE_ONDEMAND;
	char err[256];
	struct engine_config cfg = { policy, budgeted ? c.budget_blocks * BLK : 0, plan, false, false, NULL };
	engine *e = engine_create(&cfg, &x, err, sizeof err);
	assert_non_null(e);

	struct arena_sim arena;
	memset(&arena, 0, sizeof arena);
	uint64_t id_of[PERSIST + ITER_SLOTS] = { 0 }, addr_of[PERSIST + ITER_SLOTS] = { 0 };
	bool used[PERSIST + ITER_SLOTS] = { 0 };
	uint64_t next_id = 1;
	for (uint32_t i = 0; i < PERSIST; i++) {
		addr_of[i] = sim_alloc(&arena, s->size[i]);
		id_of[i] = next_id++;
		engine_on_alloc(e, id_of[i], addr_of[i], s->size[i]);
		check_alloc(&c, addr_of[i], s->size[i]);
	}
	for (int it = 0; it < 8; it++) {
		for (uint32_t i = 0; i < s->n_ev; i++) {
			const struct ev *v = &s->ev[i];
			uint32_t slot = PERSIST + v->slot;
			if (v->kind == EV_ALLOC) {
				addr_of[slot] = sim_alloc(&arena, s->size[slot]);
				id_of[slot] = next_id++;
				used[slot] = false;
				engine_on_alloc(e, id_of[slot], addr_of[slot], s->size[slot]);
				check_alloc(&c, addr_of[slot], s->size[slot]);
				continue;
			}
			if (v->kind == EV_FREE) {
				check_free(&c, log, e, id_of[slot], addr_of[slot], s->size[slot], !used[slot]);
				sim_free(&arena, addr_of[slot], s->size[slot]);
				continue;
			}
			/* Now and then the program runs a kernel the plan does
			 * not know, touching nothing. */
			memset(c.kernel, 0, sizeof c.kernel);
			if (below(r, 20) == 0) {
				engine_on_launch(e, 0x999, 0, NULL, 0);
				c.launched = true;
				engine_after_launch(e);
				check_log(&c, log);
			}
			struct engine_access acc[4];
			size_t n_acc = 0;
			for (uint32_t a = 0; a < v->n_acc; a++) {
				uint32_t sl = v->acc[a];
				acc[n_acc++] = (struct engine_access){ id_of[sl] };
				for (uint32_t b = blk(addr_of[sl]); b <= blk(addr_of[sl] + s->size[sl] - 1); b++)
					c.kernel[b] = 1;
			}
			/* Up to two blocks' evictions still on their way out,
			 * which dead blocks' discards make room beside. */
			oplog_set_evicting(log, below(r, 3) * BLK);
			engine_on_launch(e, v->exec_id, 0, acc, n_acc);
			check_log(&c, log);
			c.launched = true;
			for (uint32_t a = 0; a < v->n_acc; a++) {
				uint32_t sl = v->acc[a];
				if (!used[sl])
					check_first_use(&c, addr_of[sl], s->size[sl]);
				used[sl] = true;
			}
			uint64_t resident = 0;
			for (uint32_t b = 0; b < NBLK; b++) {
				c.resident[b] |= c.kernel[b];
				resident += c.resident[b];
			}
			assert_true(resident <= c.budget_blocks);
			engine_after_launch(e);
			check_log(&c, log);
		}
	}
	struct engine_stats st;
	engine_get_stats(e, &st);
	assert_true(st.modelled_peak_bytes <= c.budget_blocks * BLK);
	assert_int_equal(st.budget_overruns, 0);
	total_evictions += c.evicts;
	total_prefetches += c.prefetches;
	total_discards += c.discards;
	total_fresh_prefetches += c.fresh_prefetches;
	total_beside += st.discards_beside_evictions;
	if (policy == ENGINE_ONDEMAND)
		assert_int_equal(c.prefetches, 0);
	if (plan)
		assert_true(st.matched > st.launches / 2);
	assert_false(oplog_failed(log));
	engine_destroy(e);
	oplog_destroy(log);
}

static void budget_property(void **state)
{
	for (uint64_t seed = 1; seed <= 12; seed++) {
		struct rng r = { seed };
		static struct script s;
		make_script(&s, &r);
		run_script(&s, &r, ENGINE_ONDEMAND, NULL, true);
		run_script(&s, &r, ENGINE_DEEPUM, NULL, true);
		struct plan *p = random_plan(&s, &r);
		run_script(&s, &r, ENGINE_PLAN, p, true);
		run_script(&s, &r, ENGINE_DEEPUM, p, true);
		/* Without a budget the plan's own discards go at their
		 * positions, as nothing else does. */
		run_script(&s, &r, ENGINE_PLAN, p, false);
		run_script(&s, &r, ENGINE_DEEPUM, p, false);
		plan_destroy(p);
	}
	assert_true(total_evictions > 100 && total_prefetches > 100 && total_discards > 100 &&
		    total_fresh_prefetches > 10 && total_beside > 10);
}

/* ---- fixed scenarios: one block per allocation, id i at block i ---- */

struct rig {
	oplog *log;
	struct engine_executor x;
	engine *e;
	size_t seen;
};

static void rig_start(struct rig *r, enum engine_policy policy, uint64_t budget_blocks,
		      int n_allocs)
{
	char err[256];
	r->log = oplog_create();
	r->x = oplog_executor(r->log);
	struct engine_config cfg = { policy, budget_blocks * BLK, NULL, false, false, NULL };
	r->e = engine_create(&cfg, &r->x, err, sizeof err);
	assert_non_null(r->e);
	r->seen = 0;
	for (int i = 1; i <= n_allocs; i++)
		engine_on_alloc(r->e, (uint64_t)i, BASE + (uint64_t)i * BLK, BLK);
}

static void rig_stop(struct rig *r)
{
	engine_destroy(r->e);
	oplog_destroy(r->log);
}

static void run(struct rig *r, uint64_t exec_id, const uint64_t *ids, size_t n)
{
	struct engine_access acc[8];
	for (size_t i = 0; i < n; i++)
		acc[i] = (struct engine_access){ ids[i] };
	engine_on_launch(r->e, exec_id, 0, acc, n);
	engine_after_launch(r->e);
}

/* The batches logged since the last call, as "op:block,block;" text, e.g.
 * "E2;P5,6;" (blocks relative to BASE; markers left out). */
static const char *ops_text(struct rig *r, char *buf, size_t len)
{
	size_t n, k = 0;
	const struct oplog_entry *e = oplog_entries(r->log, &n);
	buf[0] = 0;
	for (size_t i = r->seen; i < n; i++) {
		if (e[i].is_mark)
			continue;
		k += (size_t)snprintf(buf + k, len - k, "%c", "PEDF"[e[i].op]);
		const char *sep = "";
		for (size_t j = 0; j < e[i].n; j++)
			for (uint64_t a = e[i].ranges[j].address; a < e[i].ranges[j].address + e[i].ranges[j].bytes;
			     a += BLK, sep = ",")
				k += (size_t)snprintf(buf + k, len - k, "%s%llu", sep,
						      (unsigned long long)((a - BASE) / BLK));
		k += (size_t)snprintf(buf + k, len - k, ";");
	}
	r->seen = n;
	return buf;
}

static void lru_order(void **state)
{
	struct rig r;
	char t[256];
	rig_start(&r, ENGINE_ONDEMAND, 3, 5);
	run(&r, 1, (const uint64_t[]){ 1 }, 1);
	run(&r, 2, (const uint64_t[]){ 2 }, 1);
	run(&r, 3, (const uint64_t[]){ 3 }, 1);
	run(&r, 1, (const uint64_t[]){ 1 }, 1); /* 1 is used again: 2 is the oldest */
	assert_string_equal(ops_text(&r, t, sizeof t), "");
	run(&r, 4, (const uint64_t[]){ 4 }, 1);
	assert_string_equal(ops_text(&r, t, sizeof t), "E2;");
	run(&r, 2, (const uint64_t[]){ 2 }, 1);
	assert_string_equal(ops_text(&r, t, sizeof t), "E3;");
	run(&r, 5, (const uint64_t[]){ 5, 1 }, 2); /* needs 5: evicts 4, not its own 1 */
	assert_string_equal(ops_text(&r, t, sizeof t), "E4;");
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.budget_evictions, 3);
	assert_true(st.modelled_peak_bytes == 3 * BLK);
	assert_int_equal(st.ops[ENGINE_OP_PREFETCH], 0);
	rig_stop(&r);
}

/* Evictions wait for the marker behind the block's last use. Markers start
 * the first time the budget needs room; the one recorded then stands in for
 * the launches before it. */
static void eviction_waits_for_last_use(void **state)
{
	struct rig r;
	rig_start(&r, ENGINE_ONDEMAND, 2, 5);
	run(&r, 1, (const uint64_t[]){ 1 }, 1);
	run(&r, 2, (const uint64_t[]){ 2 }, 1);
	size_t n;
	oplog_entries(r.log, &n);
	assert_int_equal(n, 0); /* no room needed yet: no markers */
	run(&r, 3, (const uint64_t[]){ 3 }, 1); /* marker 1 now, 1 evicted behind it; 2 behind 3 */
	run(&r, 4, (const uint64_t[]){ 4 }, 1); /* 2 evicted behind marker 1; 3 behind 4 */
	run(&r, 5, (const uint64_t[]){ 5 }, 1); /* 3 evicted behind its own marker, 2 */
	const struct oplog_entry *e = oplog_entries(r.log, &n);
	assert_int_equal(n, 7);
	const uint64_t want_mark[] = { 1, 0, 2, 0, 3, 0, 4 }, want_wait[] = { 0, 1, 0, 1, 0, 2, 0 };
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(e[i].is_mark, want_mark[i] != 0);
		if (e[i].is_mark) {
			assert_int_equal(e[i].mark, want_mark[i]);
		} else {
			assert_int_equal(e[i].op, ENGINE_OP_EVICT);
			assert_int_equal(e[i].mark, want_wait[i]);
		}
	}
	rig_stop(&r);
}

static void own_blocks_never_evicted(void **state)
{
	struct rig r;
	char t[256];
	rig_start(&r, ENGINE_ONDEMAND, 2, 4);
	run(&r, 1, (const uint64_t[]){ 1, 2 }, 2);
	run(&r, 2, (const uint64_t[]){ 1, 2, 3 }, 3); /* cannot fit: nothing of its own goes */
	assert_string_equal(ops_text(&r, t, sizeof t), "");
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.budget_overruns, 1);
	run(&r, 3, (const uint64_t[]){ 4 }, 1); /* back under: the two oldest go */
	assert_string_equal(ops_text(&r, t, sizeof t), "E1,2;");
	rig_stop(&r);
}

/* A freed block is given up first, behind the marker of its free (or the
 * first marker, for a free before markers started): under ondemand (plain
 * UM, which cannot know the data is dead) by an eviction that copies it. */
static void dead_blocks_go_first(void **state)
{
	struct rig r;
	char t[256];
	rig_start(&r, ENGINE_ONDEMAND, 3, 6);
	run(&r, 1, (const uint64_t[]){ 1 }, 1);
	run(&r, 2, (const uint64_t[]){ 2 }, 1);
	run(&r, 3, (const uint64_t[]){ 3 }, 1);
	engine_on_free(r.e, 3);                   /* no room needed yet: no marker */
	run(&r, 4, (const uint64_t[]){ 4 }, 1);   /* marker 1 now; marker 2 behind 4 */
	size_t n;
	const struct oplog_entry *e = oplog_entries(r.log, &n);
	assert_int_equal(n, 3);
	assert_true(e[0].is_mark && e[0].mark == 1);
	assert_int_equal(e[1].op, ENGINE_OP_EVICT);
	assert_int_equal(e[1].mark, 1);
	assert_string_equal(ops_text(&r, t, sizeof t), "E3;");
	/* A new allocation in 3's range needs room again: the least recently
	 * used live block goes. */
	engine_on_alloc(r.e, 7, BASE + 3 * BLK, BLK);
	run(&r, 5, (const uint64_t[]){ 7 }, 1);   /* marker 3 behind it */
	assert_string_equal(ops_text(&r, t, sizeof t), "E1;");
	/* Markers have started: a free records its own, and the dead block
	 * waits for it. */
	engine_on_free(r.e, 4);                   /* marker 4 */
	run(&r, 6, (const uint64_t[]){ 5 }, 1);
	e = oplog_entries(r.log, &n);
	assert_true(e[n - 3].is_mark && e[n - 3].mark == 4);
	assert_int_equal(e[n - 2].op, ENGINE_OP_EVICT);
	assert_int_equal(e[n - 2].mark, 4);
	assert_string_equal(ops_text(&r, t, sizeof t), "E4;");
	rig_stop(&r);
}

/*
 * deepum, no plan: kernels 1..6 each use their own block, 6 blocks of data
 * under a 4-block budget. The first pass teaches the tables (and evicts 1
 * and 2 for 5 and 6). From the second on, each launch keeps the resident
 * blocks of the three kernels predicted next, prefetches the absent ones
 * and evicts what is not predicted: in a steady state, the block of the
 * kernel three ahead comes in and the block just used goes out.
 */
static void deepum_prefetches_after_learning(void **state)
{
	struct rig r;
	char t[256];
	rig_start(&r, ENGINE_DEEPUM, 4, 6);
	for (uint64_t k = 1; k <= 6; k++)
		run(&r, k, (const uint64_t[]){ k }, 1);
	assert_string_equal(ops_text(&r, t, sizeof t), "E1;E2;");
	/* Kernel 1 (absent) predicts 2 3 4: 3 and 4 are kept, 5 and 6 make
	 * room for 2 and for 1 itself. */
	run(&r, 1, (const uint64_t[]){ 1 }, 1);
	assert_string_equal(ops_text(&r, t, sizeof t), "E5,6;P2;");
	run(&r, 2, (const uint64_t[]){ 2 }, 1); /* 5 comes, 1 (just used) goes */
	assert_string_equal(ops_text(&r, t, sizeof t), "E1;P5;");
	run(&r, 3, (const uint64_t[]){ 3 }, 1);
	assert_string_equal(ops_text(&r, t, sizeof t), "E2;P6;");
	for (uint64_t k = 4; k <= 6 + 3 * 6; k++)
		run(&r, (k - 1) % 6 + 1, (const uint64_t[]){ (k - 1) % 6 + 1 }, 1);
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.ops[ENGINE_OP_PREFETCH], 3 + 3 + 18); /* one per launch */
	assert_true(st.modelled_peak_bytes <= 4 * BLK);
	assert_int_equal(st.corr_launches, st.launches);
	assert_int_equal(st.budget_overruns, 0);
	/* deepum discards at free, behind the free's marker. */
	ops_text(&r, t, sizeof t);
	engine_on_free(r.e, 6);
	assert_string_equal(ops_text(&r, t, sizeof t), "D6;");
	rig_stop(&r);
}

/* Under a budget deepum's frees record no marker until the budget first
 * needs room, so their dead blocks wait for it (engine.h): nothing is
 * refused for safety, and skipped_discards stays 0. The budget then
 * discards the dead block first, behind the marker it records. */
static void deepum_frees_wait_for_the_budget(void **state)
{
	struct rig r;
	char t[256];
	rig_start(&r, ENGINE_DEEPUM, 3, 4);
	run(&r, 1, (const uint64_t[]){ 1 }, 1);
	run(&r, 2, (const uint64_t[]){ 2 }, 1);
	engine_on_free(r.e, 2); /* no room needed yet: no marker, no discard */
	assert_string_equal(ops_text(&r, t, sizeof t), "");
	struct engine_stats st;
	engine_get_stats(r.e, &st);
	assert_int_equal(st.skipped_discards, 0);
	run(&r, 3, (const uint64_t[]){ 3 }, 1);
	run(&r, 4, (const uint64_t[]){ 4 }, 1); /* room for 4: the dead 2 goes */
	assert_string_equal(ops_text(&r, t, sizeof t), "D2;");
	engine_get_stats(r.e, &st);
	assert_int_equal(st.skipped_discards, 0);
	assert_int_equal(st.budget_evictions, 1);
	rig_stop(&r);
}

/* Launches, allocations and frees from several threads (the forward and
 * autograd threads of a framework): the engine's lock keeps the counts and
 * the budget whole. */
struct worker {
	engine *e;
	uint64_t first_id; /* this thread's allocation ids: first_id .. + 7 */
};

/* A plan of one kernel, 0x500, for a capacity of 8 blocks, with a predicted
 * peak of 3 and no ops. */
static struct plan *idle_plan(void)
{
	struct plan *p = plan_create();
	p->signature.n_kernels = 1;
	p->signature.exec_ids = malloc(sizeof(uint64_t));
	p->signature.exec_ids[0] = 0x500;
	p->assume.capacity_bytes = 8 * BLK;
	p->predict.peak_residency_bytes = 3 * BLK;
	plan_finalize(p);
	return p;
}

/* An engine on idle_plan's plan under a budget of 4 blocks: it starts
 * idle; may_wake as engine_config has it. */
static engine *idle_engine(const struct plan *p, struct engine_executor *x, bool (*may_wake)(void))
{
	char err[256];
	struct engine_config cfg = { ENGINE_PLAN, 4 * BLK, p, false, false, may_wake };
	engine *e = engine_create(&cfg, x, err, sizeof err);
	assert_non_null(e);
	assert_false(engine_follows_launches(e));
	return e;
}

/* Idle (engine_follows_launches false) only under the plan policy with a
 * plan that has nothing to do within the budget, or without one within the
 * plan's capacity; the allocation that takes the footprint past it ends
 * idleness, and its blocks are not counted until a kernel uses them. */
static void idle_only_when_the_plan_has_nothing_to_do(void **state)
{
	struct plan *p = idle_plan();
	p->ops = calloc(1, sizeof *p->ops); /* counted in by the cases that have ops */
	oplog *log = oplog_create();
	struct engine_executor x = oplog_executor(log);
	char err[256];
	const struct {
		enum engine_policy policy;
		uint64_t budget_blocks, ops;
		bool idle;
	} cases[] = {
		{ ENGINE_PLAN, 4, 0, true },   { ENGINE_PLAN, 0, 0, true },   { ENGINE_PLAN, 2, 0, false },
		{ ENGINE_PLAN, 4, 1, false },  { ENGINE_IDEAL, 0, 0, false }, { ENGINE_ONDEMAND, 4, 0, false },
		{ ENGINE_DEEPUM, 4, 0, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		p->n_ops = cases[i].ops;
		struct engine_config cfg = { cases[i].policy, cases[i].budget_blocks * BLK, p, false, false, NULL };
		engine *e = engine_create(&cfg, &x, err, sizeof err);
		assert_non_null(e);
		assert_int_equal(engine_follows_launches(e), !cases[i].idle);
		engine_destroy(e);
	}
	p->n_ops = 0;

	engine *e = idle_engine(p, &x, NULL);
	for (uint64_t id = 1; id <= 4; id++) {
		engine_on_alloc(e, id, BASE + id * BLK, BLK);
		assert_false(engine_follows_launches(e));
	}
	engine_on_free(e, 2);
	engine_on_alloc(e, 5, BASE + 2 * BLK, BLK); /* the same block again */
	assert_false(engine_follows_launches(e));
	engine_on_alloc(e, 6, BASE + 6 * BLK, BLK); /* a fifth block */
	assert_true(engine_follows_launches(e));
	struct engine_stats st;
	engine_get_stats(e, &st);
	assert_true(st.started_idle);
	assert_int_equal(st.woke_at_alloc, 6);
	assert_int_equal(st.modelled_peak_bytes, 4 * BLK);
	size_t n;
	oplog_entries(log, &n);
	assert_int_equal(n, 0); /* no marker at the free while idle */
	/* The first launch needs room for 6: a marker behind everything so
	 * far, and the least recently counted block goes. */
	engine_on_launch(e, 0x500, 0, (const struct engine_access[]){ { 6 } }, 1);
	const struct oplog_entry *en = oplog_entries(log, &n);
	assert_int_equal(n, 2);
	assert_true(en[0].is_mark);
	assert_int_equal(en[1].op, ENGINE_OP_EVICT);
	assert_int_equal(en[1].mark, en[0].mark);
	assert_int_equal(en[1].ranges[0].address, BASE + BLK);
	engine_destroy(e);
	oplog_destroy(log);
	plan_destroy(p);
}

/* Whether the engine may wake now (engine_config.may_wake), and how often
 * it was asked. */
static bool wake_allowed;
static int wake_asked;

static bool may_wake_now(void)
{
	wake_asked++;
	return wake_allowed;
}

/* An allocation past the idle limit that may not wake the engine (made
 * inside what may be a graph capture) counts in the footprint and leaves
 * it idle; the next one that may wakes it, even one adding no block, and
 * the deferred allocation's block is counted resident. The caller is
 * asked only when an allocation would wake the engine. */
static void idle_wake_deferred(void **state)
{
	struct plan *p = idle_plan();
	oplog *log = oplog_create();
	struct engine_executor x = oplog_executor(log);
	engine *e = idle_engine(p, &x, may_wake_now);
	wake_allowed = false;
	wake_asked = 0;
	for (uint64_t id = 1; id <= 4; id++)
		assert_false(engine_on_alloc(e, id, BASE + id * BLK, BLK));
	assert_int_equal(wake_asked, 0);
	assert_false(engine_on_alloc(e, 5, BASE + 5 * BLK, BLK)); /* a fifth block */
	assert_false(engine_on_alloc(e, 6, BASE + 5 * BLK + MB, MB));
	assert_int_equal(wake_asked, 2);
	struct engine_stats st;
	engine_get_stats(e, &st);
	assert_int_equal(st.wake_deferrals, 2); /* both past the limit */
	assert_int_equal(st.woke_at_alloc, 0);
	size_t n;
	oplog_entries(log, &n);
	assert_int_equal(n, 0);
	wake_allowed = true;
	assert_true(engine_on_alloc(e, 7, BASE + 5 * BLK + MB / 2, 4096)); /* no new block */
	engine_get_stats(e, &st);
	assert_int_equal(st.woke_at_alloc, 7);
	assert_int_equal(st.modelled_peak_bytes, 5 * BLK);
	engine_destroy(e);
	oplog_destroy(log);
	plan_destroy(p);
}

/* After engine_stop no call queues an op or records a marker, and none
 * changes what the engine counts. */
static void stopped_engine_does_nothing(void **state)
{
	struct plan *p = idle_plan();
	oplog *log = oplog_create();
	struct engine_executor x = oplog_executor(log);
	char err[256];
	struct engine_config cfg = { ENGINE_DEEPUM, 2 * BLK, p, false, false, NULL };
	engine *e = engine_create(&cfg, &x, err, sizeof err);
	assert_non_null(e);
	for (uint64_t id = 1; id <= 3; id++)
		engine_on_alloc(e, id, BASE + id * BLK, BLK);
	engine_on_launch(e, 0x500, 0, (const struct engine_access[]){ { 1 }, { 2 } }, 2);
	engine_after_launch(e);
	size_t before;
	oplog_entries(log, &before);
	struct engine_stats st0, st1;
	engine_get_stats(e, &st0);

	engine_stop(e);
	assert_false(engine_on_alloc(e, 4, BASE + 4 * BLK, BLK));
	engine_on_write(e, 3);
	engine_on_unknown_write(e);
	engine_on_launch(e, 0x500, 0, (const struct engine_access[]){ { 3 }, { 4 } }, 2);
	engine_after_launch(e);
	engine_on_free(e, 1);
	engine_on_free(e, 2);
	size_t after;
	oplog_entries(log, &after);
	assert_int_equal(after, before);
	engine_get_stats(e, &st1);
	assert_int_equal(st1.launches, st0.launches);
	engine_destroy(e);
	oplog_destroy(log);
	plan_destroy(p);
}

/* Idle, the engine keeps only the footprint; the model it builds when it
 * wakes is the one it would have kept: blocks freed while idle are dead
 * and the first to go, live ones leave oldest allocation first, a block
 * shared by small allocations lives while one does, and the waking
 * allocation's new block is absent. A launch passed to an idle engine
 * wakes it too. */
static void idle_wake_builds_the_model(void **state)
{
	struct plan *p = idle_plan();
	oplog *log = oplog_create();
	struct engine_executor x = oplog_executor(log);
	engine *e = idle_engine(p, &x, NULL);
	assert_false(engine_on_alloc(e, 1, BASE + 1 * BLK, BLK));
	assert_false(engine_on_alloc(e, 2, BASE + 2 * BLK, 512 * 1024));
	assert_false(engine_on_alloc(e, 3, BASE + 2 * BLK + MB, 512 * 1024));
	assert_false(engine_on_alloc(e, 4, BASE + 3 * BLK, BLK));
	engine_on_free(e, 1); /* block 1 dead */
	engine_on_free(e, 2); /* block 2 lives on in 3 */
	assert_false(engine_on_alloc(e, 5, BASE + 4 * BLK, BLK));
	assert_false(engine_on_alloc(e, 6, BASE + 1 * BLK, BLK)); /* block 1 again */
	engine_on_free(e, 6);
	assert_true(engine_on_alloc(e, 7, BASE + 5 * BLK, BLK)); /* a fifth block */
	struct engine_stats st;
	engine_get_stats(e, &st);
	assert_int_equal(st.woke_at_alloc, 7);
	assert_int_equal(st.modelled_peak_bytes, 4 * BLK);

	/* Each launch needs one more block: the dead one, then blocks 2, 3, 4
	 * (newest live allocations 3, 4, 5), never the kernel's own. */
	const uint64_t gone[] = { 1, 2, 3, 4 };
	const enum engine_op how[] = { ENGINE_OP_DISCARD, ENGINE_OP_EVICT, ENGINE_OP_EVICT, ENGINE_OP_EVICT };
	size_t seen = 0, n;
	for (uint64_t k = 0; k < 4; k++) {
		if (k)
			engine_on_alloc(e, 7 + k, BASE + (5 + k) * BLK, BLK);
		engine_on_launch(e, 0x500, 0, (const struct engine_access[]){ { 7 + k } }, 1);
		engine_after_launch(e);
		const struct oplog_entry *en = oplog_entries(log, &n);
		size_t ops = 0;
		for (; seen < n; seen++) {
			if (en[seen].is_mark)
				continue;
			assert_int_equal(en[seen].op, how[k]);
			assert_int_equal(en[seen].n, 1);
			assert_int_equal(en[seen].ranges[0].address, BASE + gone[k] * BLK);
			assert_int_equal(en[seen].ranges[0].bytes, BLK);
			ops++;
		}
		assert_int_equal(ops, 1);
	}
	engine_destroy(e);

	e = idle_engine(p, &x, NULL);
	engine_on_alloc(e, 1, BASE, BLK);
	assert_false(engine_follows_launches(e));
	engine_on_launch(e, 0x500, 0, (const struct engine_access[]){ { 1 } }, 1);
	assert_true(engine_follows_launches(e));
	engine_get_stats(e, &st);
	assert_int_equal(st.launches, 1);
	assert_int_equal(st.woke_at_alloc, 0);
	engine_destroy(e);
	oplog_destroy(log);
	plan_destroy(p);
}

/* Blocks the program held while the engine was idle may have been used by
 * kernels it did not follow. Once the budget has evicted one, a kernel
 * needing it counts a refault, and a fresh allocation handed its block gets
 * a discard-and-prefetch rather than faulting the dead bytes back in: as
 * when the engine follows from the start. */
static void idle_blocks_count_as_used(void **state)
{
	struct plan *p = idle_plan();
	oplog *log = oplog_create();
	struct engine_executor x = oplog_executor(log);
	engine *e = idle_engine(p, &x, NULL);
	for (uint64_t id = 1; id <= 5; id++)
		engine_on_alloc(e, id, BASE + id * BLK, BLK); /* the fifth wakes it */
	const uint64_t used[] = { 5, 1 };
	for (int i = 0; i < 2; i++) {
		engine_on_launch(e, 0x500, 0, (const struct engine_access[]){ { used[i] } }, 1);
		engine_after_launch(e);
	}
	struct engine_stats st;
	engine_get_stats(e, &st);
	assert_int_equal(st.refault_blocks, 1); /* block 1, evicted for 5 */
	engine_on_free(e, 2);                   /* block 2, evicted for 1 */
	engine_on_alloc(e, 6, BASE + 2 * BLK, BLK);
	oplog_clear(log);
	engine_on_launch(e, 0x500, 0, (const struct engine_access[]){ { 6 } }, 1);
	size_t n, repopulated = 0;
	const struct oplog_entry *en = oplog_entries(log, &n);
	for (size_t i = 0; i < n; i++)
		if (!en[i].is_mark && en[i].op == ENGINE_OP_DISCARD_PREFETCH &&
		    en[i].ranges[0].address == BASE + 2 * BLK)
			repopulated++;
	assert_int_equal(repopulated, 1);
	engine_destroy(e);
	oplog_destroy(log);
	plan_destroy(p);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < 3000; i++) {
		uint64_t id = w->first_id + (uint64_t)(i % 8);
		uint64_t slot = w->first_id / 8 * 8 + (uint64_t)(i % 8);
		if (i % 8 == 0 && i) {
			engine_on_free(w->e, id);
			engine_on_alloc(w->e, id, BASE + slot * BLK, BLK);
		}
		struct engine_access acc = { id };
		engine_on_launch(w->e, 0x100 + (uint64_t)(i % 8), 0, &acc, 1);
		engine_after_launch(w->e);
	}
	return NULL;
}

static void concurrent_threads(void **state)
{
	for (int policy = ENGINE_ONDEMAND; policy <= ENGINE_DEEPUM; policy++) {
		oplog *log = oplog_create();
		struct engine_executor x = oplog_executor(log);
		char err[128];
		struct engine_config cfg = { (enum engine_policy)policy, 6 * BLK, NULL, false, false, NULL };
		engine *e = engine_create(&cfg, &x, err, sizeof err);
		struct worker w[4];
		pthread_t t[4];
		for (int i = 0; i < 4; i++) {
			w[i] = (struct worker){ e, 1 + 8 * (uint64_t)i };
			for (uint64_t k = 0; k < 8; k++)
				engine_on_alloc(e, w[i].first_id + k, BASE + (8 * (uint64_t)i + k) * BLK, BLK);
		}
		for (int i = 0; i < 4; i++)
			assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		struct engine_stats st;
		engine_get_stats(e, &st);
		assert_int_equal(st.launches, 4 * 3000);
		assert_true(st.modelled_peak_bytes <= 6 * BLK);
		assert_true(st.budget_evictions > 0);
		assert_false(oplog_failed(log));
		engine_destroy(e);
		oplog_destroy(log);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(budget_property),
		cmocka_unit_test(lru_order),
		cmocka_unit_test(eviction_waits_for_last_use),
		cmocka_unit_test(own_blocks_never_evicted),
		cmocka_unit_test(dead_blocks_go_first),
		cmocka_unit_test(deepum_prefetches_after_learning),
		cmocka_unit_test(deepum_frees_wait_for_the_budget),
		cmocka_unit_test(concurrent_threads),
		cmocka_unit_test(idle_only_when_the_plan_has_nothing_to_do),
		cmocka_unit_test(idle_wake_builds_the_model),
		cmocka_unit_test(idle_wake_deferred),
		cmocka_unit_test(stopped_engine_does_nothing),
		cmocka_unit_test(idle_blocks_count_as_used),
	};
	return cmocka_run_group_tests_name("replay_budget", tests, NULL, NULL);
}
