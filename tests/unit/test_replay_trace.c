/*
 * End-to-end tests of the replay engine against the real planner: a
 * synthetic DNN-shaped trace (plan/synth.h) is planned (plan/planner.h) and
 * its own recorded run replayed through the engine under the plan policy,
 * with the plan's capacity as the budget. The replay must follow the plan
 * (positions matched, iterations counted, the plan judged this program's),
 * act on it (prefetches, evictions, and every discard applied where the
 * tensors are block-aligned), and stay safe: an independent model of the
 * ops never sees dead memory prefetched or evicted, live memory discarded,
 * a block's freed bytes destroyed before a marker that follows the free's
 * launches, or more than the budget resident at a kernel or after a
 * prefetch (save at a kernel whose own blocks exceed it, which the engine
 * counts as an overrun, and only there). The fixture traces, when present, get the same treatment, and
 * on the ViT one, whose optimizer kernels' execution IDs drift, the
 * launches the IDs lose are placed by their shapes.
 */
#include "testutil.h"
#include "testplan.h"


#include "plan/planner.h"
#include "plan/synth.h"
#include "replay/dryrun.h"
#include "replay/engine.h"
#include "replay/footprint.h"
#include "replay/oplog.h"

#define BLK ((uint64_t)2 << 20)

/* The independent model: per block of the trace's address range. */
struct model {
	uint64_t lo;         /* first block number */
	size_t n;
	uint32_t *live;
	uint8_t *resident, *kernel, *host;
	uint64_t *freed_after; /* launches made before the block's latest free */
	uint64_t launched;     /* launches made so far */
	uint64_t *follows;     /* per marker: launches made before it */
	size_t n_marks;
	size_t seen;
	uint64_t budget_blocks, prefetched, evicted, discarded, placed;
};

/* A discard or discard-and-prefetch of block b destroys what was freed
 * there: it must wait for a marker behind every launch made before. */
static void assert_after_free(const struct model *m, size_t b, uint64_t mark)
{
	if (!m->freed_after[b])
		return;
	assert_true(mark && mark <= m->n_marks);
	assert_true(m->follows[mark - 1] >= m->freed_after[b]);
}

static size_t mblk(const struct model *m, uint64_t address)
{
	size_t b = (size_t)((address / BLK) - m->lo);
	assert_true(b < m->n);
	return b;
}

static void model_live(struct model *m, const struct trace_alloc *a, int delta)
{
	for (size_t b = mblk(m, a->address); b <= mblk(m, a->address + (a->size ? a->size : 1) - 1); b++)
		m->live[b] += (uint32_t)delta;
}

static void model_check(struct model *m, oplog *log)
{
	size_t n;
	const struct oplog_entry *e = oplog_entries(log, &n);
	for (size_t i = m->seen; i < n; i++) {
		if (e[i].is_mark) {
			assert_int_equal(e[i].mark, m->n_marks + 1);
			m->follows = realloc(m->follows, (m->n_marks + 1) * sizeof *m->follows);
			m->follows[m->n_marks++] = m->launched;
			continue;
		}
		if (e[i].place) {
			/* In host memory: never resident, whatever touches it. */
			for (uint64_t a = e[i].ranges[0].address; a < e[i].ranges[0].address + e[i].ranges[0].bytes;
			     a += BLK) {
				size_t b = mblk(m, a);
				assert_int_equal(m->host[b], e[i].place < 0);
				m->host[b] = e[i].place > 0;
				m->resident[b] = 0;
				m->placed += e[i].place > 0;
			}
			continue;
		}
		for (size_t r = 0; r < e[i].n; r++)
			for (uint64_t a = e[i].ranges[r].address;
			     a < e[i].ranges[r].address + e[i].ranges[r].bytes; a += BLK) {
				size_t b = mblk(m, a);
				assert_false(m->host[b]);
				switch (e[i].op) {
				case ENGINE_OP_DISCARD:
					assert_int_equal(m->live[b], 0);
					assert_after_free(m, b, e[i].mark);
					m->resident[b] = 0;
					m->discarded++;
					break;
				case ENGINE_OP_EVICT:
					assert_true(m->live[b] > 0);
					assert_false(m->kernel[b]);
					m->resident[b] = 0;
					m->evicted++;
					break;
				case ENGINE_OP_DISCARD_PREFETCH:
					assert_int_equal(m->live[b], 1);
					assert_after_free(m, b, e[i].mark);
					m->resident[b] = 1;
					break;
				case ENGINE_OP_PREFETCH:
					assert_true(m->live[b] > 0);
					m->resident[b] = 1;
					m->prefetched++;
					break;
				}
			}
		/* Room is made before data is brought in: what a prefetch
		 * brings fits beside what is still resident. */
		if (m->budget_blocks && (e[i].op == ENGINE_OP_PREFETCH || e[i].op == ENGINE_OP_DISCARD_PREFETCH)) {
			uint64_t resident = 0;
			for (size_t b = 0; b < m->n; b++)
				resident += m->resident[b];
			assert_true(resident <= m->budget_blocks);
		}
	}
	m->seen = n;
}

/* Replays trace t through an engine running plan p; returns the stats. */
static void replay(const struct trace *t, const struct plan *p, uint64_t budget, struct model *m,
		   struct engine_stats *st)
{
	size_t k;
	struct dryrun_event *ev = dryrun_events(t, &k);
	assert_non_null(ev);
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint32_t i = 0; i < t->n_allocs; i++) {
		const struct trace_alloc *a = &t->allocs[i];
		lo = a->address / BLK < lo ? a->address / BLK : lo;
		uint64_t end = (a->address + (a->size ? a->size : 1) - 1) / BLK;
		hi = end > hi ? end : hi;
	}
	memset(m, 0, sizeof *m);
	m->lo = lo;
	m->n = (size_t)(hi - lo + 1);
	m->live = calloc(m->n, sizeof *m->live);
	m->resident = calloc(m->n, 1);
	m->kernel = calloc(m->n, 1);
	m->host = calloc(m->n, 1);
	m->freed_after = calloc(m->n, sizeof *m->freed_after);
	m->budget_blocks = budget / BLK;

	oplog *log = oplog_create();
	struct engine_executor x = oplog_executor(log);
	struct engine_config cfg = { ENGINE_PLAN, budget, p, false, false, NULL };
	char err[256];
	engine *e = engine_create(&cfg, &x, err, sizeof err);
	assert_non_null(e);
	struct engine_access *acc = malloc((t->n_args + 1) * sizeof *acc);
	uint64_t overruns = 0;
	for (size_t i = 0; i < k; i++) {
		if (ev[i].kind == DRYRUN_ALLOC) {
			const struct trace_alloc *a = &t->allocs[ev[i].index];
			engine_on_alloc(e, a->id, a->address, a->size);
			model_live(m, a, 1);
			memset(m->kernel, 0, m->n); /* no launch under way */
			model_check(m, log);
			continue;
		}
		if (ev[i].kind != DRYRUN_LAUNCH) {
			const struct trace_alloc *a = &t->allocs[ev[i].index];
			engine_on_free(e, a->id);
			model_live(m, a, -1);
			for (size_t b = mblk(m, a->address); b <= mblk(m, a->address + (a->size ? a->size : 1) - 1);
			     b++)
				m->freed_after[b] = m->launched;
			model_check(m, log);
			continue;
		}
		uint32_t kp = ev[i].index;
		size_t n_acc = 0;
		memset(m->kernel, 0, m->n);
		for (uint32_t j = t->arg_first[kp]; j < t->arg_first[kp + 1]; j++) {
			const struct trace_alloc *a = &t->allocs[t->arg_alloc[j]];
			acc[n_acc++] = (struct engine_access){ a->id };
			for (size_t b = mblk(m, a->address); b <= mblk(m, a->address + (a->size ? a->size : 1) - 1);
			     b++)
				m->kernel[b] = 1;
		}
		/* As libumreplay.so does: an idle engine is not told. */
		bool follow = engine_follows_launches(e);
		if (follow)
			engine_on_launch(e, t->kernels[kp].exec_id, t->kernels[kp].shape_id, acc, n_acc);
		model_check(m, log);
		m->launched++;
		uint64_t resident = 0, own = 0;
		for (size_t b = 0; b < m->n; b++) {
			own += m->kernel[b] && !m->host[b];
			m->resident[b] |= m->kernel[b] && !m->host[b];
			resident += m->resident[b];
		}
		/* A kernel whose own blocks exceed the budget (a fused
		 * optimizer step touches every parameter) is counted, and
		 * exempt; only such a kernel. */
		engine_get_stats(e, st);
		if (budget && st->budget_overruns == overruns)
			assert_true(resident <= m->budget_blocks);
		else if (budget)
			assert_true(own > m->budget_blocks);
		overruns = st->budget_overruns;
		if (follow)
			engine_after_launch(e);
		model_check(m, log);
	}
	engine_get_stats(e, st);
	assert_false(oplog_failed(log));
	engine_destroy(e);
	oplog_destroy(log);
	free(acc);
	free(ev);
	free(m->live);
	free(m->resident);
	free(m->kernel);
	free(m->host);
	free(m->freed_after);
	free(m->follows);
}

/* Plans path at a fraction of its unplanned peak and replays it. */
static void replay_planned(const char *path, double fraction, bool synthetic, bool aligned)
{
	uint64_t capacity = (uint64_t)(fraction * (double)test_unplanned_peak(path));
	struct planner *pl = test_plan(path, capacity);
	const struct plan *p = pl->plan;
	uint64_t budget = p->assume.capacity_bytes / BLK * BLK;
	struct model m;
	struct engine_stats st;
	replay(pl->trace, p, budget, &m, &st);

	assert_int_equal(st.signature_mismatch, 0);
	assert_int_equal(st.launches, pl->trace->n_kernels);
	/* Every kernel of the iterations after the first (which differs: the
	 * optimizer state is made there) is placed; warm-up and tail kernels
	 * are not in the plan. */
	const struct iter_span *first = &pl->iter.iters[0], *last = &pl->iter.iters[pl->iter.n_iters - 1];
	assert_true(st.matched + st.resynced >= last->first + last->n - first->first - first->n);
	assert_true(st.iterations + 2 >= pl->iter.n_iters);
	uint64_t plan_discards = 0, plan_evicts = 0, plan_fresh = 0;
	for (uint64_t i = 0; i < p->n_ops; i++) {
		plan_discards += p->ops[i].kind == PLAN_OP_DISCARD;
		plan_evicts += p->ops[i].kind == PLAN_OP_EVICT;
		plan_fresh += p->ops[i].kind == PLAN_OP_DISCARD_PREFETCH;
	}
	if (plan_discards)
		assert_true(st.ops[ENGINE_OP_DISCARD] > 0);
	if (plan_evicts)
		assert_true(m.evicted > 0);
	assert_true(m.prefetched > 0 || !p->n_ops);
	/* With block-aligned tensors, discards are refused only in the first
	 * iteration (its allocations differ, so ordinals do not resolve):
	 * at most one iteration's worth. */
	if (aligned)
		assert_true(st.skipped_discards <= plan_discards + plan_fresh);
	/* The allocations the plan keeps in host memory were placed there. */
	assert_int_equal(st.host_bytes / BLK, m.placed);
	if (p->n_host)
		assert_true(st.host_allocs > 0);
	if (synthetic) /* small kernels: every one fits */
		assert_int_equal(st.budget_overruns, 0);
	planner_free(pl);
}

static void synthetic_traces(void **state)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct synth_params sp;
		synth_defaults(&sp);
		sp.seed = seed;
		sp.layers = 3 + (uint32_t)(seed * 7 % 10);
		sp.kernels_per_layer = 1 + (uint32_t)(seed % 3);
		sp.iterations = 4 + (uint32_t)(seed % 4);
		sp.warmup_kernels = (uint32_t)(seed % 4);
		if (seed % 2)
			snprintf(sp.nvtx, sizeof sp.nvtx, "iteration");
		bool aligned = seed % 3 != 1;
		if (!aligned) {
			sp.min_bytes = 4096; /* packed small tensors share blocks */
			sp.max_bytes = 3 << 20;
		}
		char path[512], err[512];
		test_path(path, sizeof path, "replay.db");
		if (synth_write(path, &sp, err, sizeof err))
			fail_msg("%s", err);
		replay_planned(path, 0.5, true, aligned);
		replay_planned(path, 0.8, true, aligned);
	}
}

static void fixtures(void **state)
{
	glob_t g;
	test_glob_fixtures(&g);
	for (size_t i = 0; i < g.gl_pathc; i++)
		replay_planned(g.gl_pathv[i], 0.5, false, false);
	globfree(&g);
}

/* What an idle replay counts as resident at the end: every block an
 * allocation of the trace ever covered (its footprint, replay/footprint.h,
 * checked against a bitmap in test_replay_parts), or twice the unplanned
 * peak if that is more. A budget the program's memory never outgrows, even
 * where it holds memory no kernel names (the two-GPU fixture's 32 MiB
 * cuBLAS workspace, beside a 20 MiB peak). */
static uint64_t idle_footprint_room(const struct trace *t, uint64_t peak)
{
	footprint *f = footprint_create();
	assert_non_null(f);
	for (size_t i = 0; i < t->n_allocs; i++) {
		const struct trace_alloc *a = &t->allocs[i];
		uint64_t first = a->address / BLK, last = (a->address + a->reserved - 1) / BLK;
		if (a->reserved)
			assert_int_equal(footprint_add(f, first, last - first + 1), 0);
	}
	uint64_t room = footprint_blocks(f) * BLK, twice = 2 * peak / BLK * BLK;
	footprint_destroy(f);
	return room > twice ? room : twice;
}

/* A plan with nothing to do at the budget leaves the launches alone while
 * the program's memory fits, and follows them from the allocation that does
 * not fit (here: the plan's predicted peak cleared, as if it had been made
 * for a smaller run), the budget kept from then on by the independent
 * model's count, which includes what the kernels touched unseen. */
static void idle_while_the_plan_has_nothing_to_do(void **state)
{
	glob_t g;
	test_glob_fixtures(&g);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		uint64_t peak = test_unplanned_peak(g.gl_pathv[i]);
		struct planner *pl = test_plan(g.gl_pathv[i], 2 * peak);
		struct plan *p = pl->plan;
		assert_int_equal(p->n_ops, 0);
		assert_int_equal(p->n_host, 0);
		struct model m;
		struct engine_stats st;
		replay(pl->trace, p, idle_footprint_room(pl->trace, peak), &m, &st);
		assert_true(st.started_idle);
		assert_int_equal(st.woke_at_alloc, 0);
		assert_int_equal(st.launches, 0);
		assert_int_equal(m.prefetched + m.evicted + m.discarded + m.n_marks, 0);

		p->predict.peak_residency_bytes = 0;
		replay(pl->trace, p, peak / 2 / BLK * BLK, &m, &st);
		assert_true(st.started_idle);
		assert_true(st.woke_at_alloc > 0);
		/* A program that makes every allocation before its first launch
		 * (the reset probe) is followed from that launch on. */
		const struct trace *t = pl->trace;
		bool allocates_late = t->allocs[t->n_allocs - 1].alloc_ns > t->kernels[0].launch_ns;
		if (allocates_late)
			assert_true(st.launches > 0 && st.launches < t->n_kernels);
		else
			assert_int_equal(st.launches, t->n_kernels);
		assert_true(st.budget_evictions > 0);
		assert_int_equal(st.signature_mismatch, 0);
		planner_free(pl);
	}
	globfree(&g);
}

/* Every launch is placed one way or lost; with the plan's shapes the
 * drifting launches are placed by shape instead of lost, and the plan's
 * ops at their positions are issued. */
static void drifting_ids_placed_by_shape(void **state)
{
	char path[512];
	test_fixture(path, sizeof path, "h100_vit_varying_ids.db");
	uint64_t capacity = test_unplanned_peak(path) / 2;
	struct planner *pl = test_plan(path, capacity);
	struct plan *p = pl->plan;
	uint64_t budget = p->assume.capacity_bytes / BLK * BLK;
	struct model m;
	struct engine_stats with, without;
	replay(pl->trace, p, budget, &m, &with);
	uint64_t *shapes = p->signature.shape_ids;
	p->signature.shape_ids = NULL;
	replay(pl->trace, p, budget, &m, &without);
	p->signature.shape_ids = shapes;
	assert_int_equal(with.matched + with.shaped + with.resynced + with.lost, with.launches);
	assert_int_equal(without.shaped, 0);
	assert_true(with.shaped > 0);
	assert_true(with.lost < without.lost);
	assert_true(with.matched + with.shaped + with.resynced > without.matched + without.resynced);
	uint64_t ops_with = 0, ops_without = 0;
	for (int k = 0; k < 4; k++) {
		ops_with += with.ops[k];
		ops_without += without.ops[k];
	}
	assert_true(ops_with >= ops_without);
	planner_free(pl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(synthetic_traces),
		cmocka_unit_test(fixtures),
		cmocka_unit_test(drifting_ids_placed_by_shape),
		cmocka_unit_test(idle_while_the_plan_has_nothing_to_do),
	};
	return cmocka_run_group_tests_name("replay_trace", tests, NULL, NULL);
}
