/*
 * Tests of the dry run (replay/dryrun.h): the recorded run's events in the
 * order it made them, and the engine driven through the fixture traces,
 * each planned in memory at half its unplanned peak: the rows per
 * iteration add up to the totals, the plan keeps the modelled residency
 * under its capacity and expects fewer blocks to fault back in than plain
 * on-demand paging under the same budget (on BERT-large, far fewer), on
 * GPT-2 small the plan's ops on the iteration's allocations save more
 * faults than they cost, a replay lost across iteration starts still
 * finds the iterations' tensors and counts the iterations, a plan
 * made for another program stops the run at the verdict, and a recording
 * that ran CUDA graphs is noted (the launches after them are fed, where a
 * real replay stops).
 */
#include "testutil.h"
#include "testplan.h"

#include "replay/dryrun.h"

#define BLK ((uint64_t)2 << 20)

/* At one time frees come first, then allocations, then the launch, then a
 * free of an allocation made at that very time; across times, time order. */
static void events_in_recorded_order(void **state)
{
	struct trace_kernel kernels[2] = { { .launch_ns = 20 }, { .launch_ns = 30 } };
	struct trace_alloc allocs[3] = {
		{ .id = 1, .alloc_ns = 10, .free_ns = 20 },
		{ .id = 2, .alloc_ns = 20, .free_ns = TRACE_NS_NEVER },
		{ .id = 3, .alloc_ns = 30, .free_ns = 30 },
	};
	struct trace t = { .n_kernels = 2, .kernels = kernels, .n_allocs = 3, .allocs = allocs };
	const struct dryrun_event want[] = {
		{ 10, DRYRUN_ALLOC, 0 }, { 20, DRYRUN_FREE, 0 },   { 20, DRYRUN_ALLOC, 1 },     { 20, DRYRUN_LAUNCH, 0 },
		{ 30, DRYRUN_ALLOC, 2 }, { 30, DRYRUN_LAUNCH, 1 }, { 30, DRYRUN_LATE_FREE, 2 },
	};
	size_t n;
	struct dryrun_event *ev = dryrun_events(&t, &n);
	assert_non_null(ev);
	assert_int_equal(n, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ev[i].ns, want[i].ns);
		assert_int_equal(ev[i].kind, want[i].kind);
		assert_int_equal(ev[i].index, want[i].index);
	}
	free(ev);
}

static void add_counts(struct dryrun_counts *sum, const struct dryrun_counts *c)
{
	sum->launches += c->launches;
	sum->matched += c->matched;
	sum->shaped += c->shaped;
	sum->resynced += c->resynced;
	sum->lost += c->lost;
	for (int k = 0; k < 4; k++) {
		sum->ops[k] += c->ops[k];
		sum->bytes[k] += c->bytes[k];
	}
	sum->budget_evictions += c->budget_evictions;
	sum->refault_blocks += c->refault_blocks;
	sum->refault_budget_blocks += c->refault_budget_blocks;
	sum->refault_shared_blocks += c->refault_shared_blocks;
	sum->unread_evicted_blocks += c->unread_evicted_blocks;
}

/* The rows and the tail add up to the total, which is the engine's. */
static void assert_rows_add_up(const struct dryrun_result *r)
{
	struct dryrun_counts sum = r->tail;
	for (size_t i = 0; i < r->n_iterations; i++)
		add_counts(&sum, &r->iterations[i]);
	assert_memory_equal(&sum, &r->total, sizeof sum);
	const struct engine_stats *st = &r->stats;
	assert_int_equal(r->total.launches, st->launches);
	assert_int_equal(r->total.matched + r->total.shaped + r->total.resynced + r->total.lost, st->launches);
	assert_int_equal(r->total.refault_blocks, st->refault_blocks);
	assert_int_equal(r->total.refault_budget_blocks, st->refault_budget_blocks);
	assert_int_equal(r->total.refault_shared_blocks, st->refault_shared_blocks);
	assert_int_equal(r->total.unread_evicted_blocks, st->unread_evicted_blocks);
	assert_int_equal(r->total.budget_evictions, st->budget_evictions);
	assert_memory_equal(r->total.bytes, st->bytes, sizeof st->bytes);
	assert_int_equal(r->n_iterations, st->iterations);
	assert_int_equal(r->n_iteration_ns, st->iterations);
}

/* The replay's budget for plan p: its capacity in whole blocks. */
static uint64_t budget_of(const struct plan *p)
{
	return p->assume.capacity_bytes / BLK * BLK;
}

/* The fixture planned at its unplanned peak over div. */
static struct planner *plan_fixture(const char *fixture, uint64_t div)
{
	char path[512];
	test_fixture(path, sizeof path, fixture);
	return test_plan(path, test_unplanned_peak(path) / div);
}

static void run(const struct trace *t, enum engine_policy policy, uint64_t budget, const struct plan *p,
		struct dryrun_result *r)
{
	struct engine_config cfg = { policy, budget, p, false, false, NULL };
	char err[256];
	if (dryrun_run(t, &cfg, r, err, sizeof err) != 0)
		fail_msg("%s", err);
	assert_rows_add_up(r);
}

/* The fixture planned at half its unplanned peak, replayed under plan and
 * under ondemand with the plan's capacity as the budget. Returns the
 * plan's refault blocks in the last steady iteration. */
static uint64_t plan_against_ondemand(const char *fixture, bool overruns_allowed)
{
	struct planner *pl = plan_fixture(fixture, 2);
	const struct plan *p = pl->plan;
	uint64_t budget = budget_of(p);
	struct dryrun_result plan, ondemand;
	run(pl->trace, ENGINE_PLAN, budget, p, &plan);
	run(pl->trace, ENGINE_ONDEMAND, budget, p, &ondemand);

	assert_int_equal(plan.stats.launches, pl->trace->n_kernels);
	assert_int_equal(plan.foreign_at, 0);
	assert_true(plan.n_iterations > 1);
	assert_true(plan.stats.matched > 0);
	for (size_t i = 0; i < plan.n_iterations; i++)
		assert_true(plan.iteration_ns[i] > 0); /* the recording's clock */
	/* A kernel whose own blocks exceed the budget is exempt from it. */
	assert_true(plan.stats.modelled_peak_bytes <= budget || (overruns_allowed && plan.stats.budget_overruns));
	/* The same iterations (the plan places the launches under either
	 * policy); in the steady ones (all but the first) plain paging
	 * evicts what comes back, the plan brings most of it itself. */
	assert_int_equal(ondemand.n_iterations, plan.n_iterations);
	for (size_t i = 1; i < plan.n_iterations; i++) {
		assert_true(ondemand.iterations[i].refault_blocks > 0);
		assert_true(plan.iterations[i].refault_blocks < ondemand.iterations[i].refault_blocks);
	}
	uint64_t last = plan.iterations[plan.n_iterations - 1].refault_blocks;
	dryrun_result_free(&plan);
	dryrun_result_free(&ondemand);
	planner_free(pl);
	return last;
}

static void mlp(void **state)
{
	plan_against_ondemand("h100_mlp.db", false);
}

/* BERT-large reuses its gradient buffers' blocks after the plan evicted
 * their previous owners: the model repopulates them (engine.c, repopulate)
 * instead of counting them as refaults: 10 blocks in the last steady
 * iteration, of ondemand's 5,101 (14 while the plan evicted tensors
 * sharing a block as their idle stretch began; the recording before this
 * one: 20 of 4,923, where the engine before repopulation counted 77). */
static void bert_large(void **state)
{
	assert_true(plan_against_ondemand("h100_bert_large.db", false) <= 32);
}

/* train_sim's fused optimizer step touches more than half the peak. */
static void train_sim(void **state)
{
	plan_against_ondemand("h100_train_sim.db", true);
}

/* The program's own managed memory (trace.managed_alloc_ids) is fed as
 * such: the MLP's plan at half its peak discard-prefetches fresh
 * activations, and none when the host may have written them. */
static void managed_memory_fed_as_written(void **state)
{
	struct planner *pl = plan_fixture("h100_mlp.db", 2);
	uint64_t budget = budget_of(pl->plan);
	struct dryrun_result device, managed;
	run(pl->trace, ENGINE_PLAN, budget, pl->plan, &device);
	struct trace *t = pl->trace;
	t->managed_alloc_ids = realloc(t->managed_alloc_ids, t->n_allocs * sizeof *t->managed_alloc_ids);
	assert_non_null(t->managed_alloc_ids);
	for (size_t i = 0; i < t->n_allocs; i++)
		t->managed_alloc_ids[i] = t->allocs[i].id;
	t->n_managed_allocs = t->n_allocs;
	run(pl->trace, ENGINE_PLAN, budget, pl->plan, &managed);
	assert_true(device.stats.ops[ENGINE_OP_DISCARD_PREFETCH] > 0);
	assert_int_equal(managed.stats.ops[ENGINE_OP_DISCARD_PREFETCH], 0);
	assert_true(managed.stats.skipped_discards > device.stats.skipped_discards);
	dryrun_result_free(&device);
	dryrun_result_free(&managed);
	planner_free(pl);
}

/* GPT-2 small at half and at a third of its unplanned peak. The capacity
 * binds at the ten kernels of the 32 MiB cuBLAS workspace, each more than
 * the capacity on its own, where every other tensor must leave: 512 B to
 * 1 MiB each, packed a few to a 2 MB block, so the engine's eviction of
 * one takes its neighbours along. The plan's ops on the iteration's
 * allocations save faults: 322 and 328 blocks fault back over the run
 * with all of the plan's ops, 361 and 367 with only those on persistent
 * allocations; 18 and 24 of them shared blocks. When each such eviction
 * was issued as the tensor's idle stretch began, it took the block from
 * neighbours still in use, and the kernels after faulted it back: 453
 * and 459 blocks (149 and 155 shared), more than the 406 and 412 without
 * those ops. Most of the rest are the workspace itself, which the kernels
 * that use it fault in (16 blocks each, more than the budget). */
static void gpt2_iteration_ops_save_faults(void **state)
{
	char path[512];
	test_fixture(path, sizeof path, "h100_gpt2_small.db");
	uint64_t peak = test_unplanned_peak(path);
	for (uint64_t div = 2; div <= 3; div++) {
		struct planner *pl = test_plan(path, peak / div);
		struct plan *p = pl->plan;
		uint64_t budget = budget_of(p);
		struct dryrun_result all, persistent;
		run(pl->trace, ENGINE_PLAN, budget, p, &all);
		uint64_t n = 0;
		for (uint64_t i = 0; i < p->n_ops; i++)
			if (p->allocs[p->ops[i].alloc].origin == PLAN_ALLOC_PERSISTENT)
				p->ops[n++] = p->ops[i];
		assert_true(n < p->n_ops);
		p->n_ops = n;
		run(pl->trace, ENGINE_PLAN, budget, p, &persistent);
		print_message("1/%llu of the peak: %llu blocks fault back (%llu shared), %llu without the ops on "
			      "iteration allocations\n", (unsigned long long)div,
			      (unsigned long long)all.total.refault_blocks,
			      (unsigned long long)all.total.refault_shared_blocks,
			      (unsigned long long)persistent.total.refault_blocks);
		assert_true(all.total.refault_blocks < persistent.total.refault_blocks);
		assert_true(all.total.refault_shared_blocks <= 40);
		dryrun_result_free(&all);
		dryrun_result_free(&persistent);
		planner_free(pl);
	}
}

/* Removes the first `drop` kernels of every iteration the planner found
 * from the trace, as a program that stopped launching them would: the
 * launches after them keep their arguments. */
static void drop_iteration_first_kernels(struct trace *t, const struct iter_result *it, size_t drop)
{
	size_t out = 0, args = 0, next_iter = 0;
	for (size_t k = 0; k < t->n_kernels; k++) {
		uint32_t from = t->arg_first[k], to = t->arg_first[k + 1];
		if (next_iter < it->n_iters && k >= it->iters[next_iter].first) {
			if (k + 1 - it->iters[next_iter].first == drop)
				next_iter++;
			continue;
		}
		t->kernels[out] = t->kernels[k];
		t->arg_first[out] = (uint32_t)args;
		for (uint32_t j = from; j < to; j++)
			t->arg_alloc[args++] = t->arg_alloc[j];
		out++;
	}
	t->arg_first[out] = (uint32_t)args;
	t->n_kernels = out;
	t->n_args = args;
}

/* BERT-large's fixture planned at half its unplanned peak, then the first
 * `drop` kernels of each of its iterations removed; *budget is the plan's
 * capacity in whole blocks. */
static struct planner *bert_lacking_first_kernels(size_t drop, uint64_t *budget)
{
	struct planner *pl = plan_fixture("h100_bert_large.db", 2);
	*budget = budget_of(pl->plan);
	size_t before = pl->trace->n_kernels;
	drop_iteration_first_kernels(pl->trace, &pl->iter, drop);
	assert_int_equal(pl->trace->n_kernels, before - drop * pl->iter.n_iters);
	return pl;
}

/* A program that no longer launches the plan's first kernel: each
 * iteration starts at the plan's second, after allocations the plan made
 * after the first kernel. The plan says how many of the iteration's
 * allocations precede each kernel, so the ordinals count on from the
 * second kernel's and the ops find their tensors: BERT-large faults back as
 * few blocks in the last iteration as with every kernel, 10 (numbered from
 * the launch that started the iteration instead: 650). */
static void first_kernel_missing(void **state)
{
	uint64_t budget;
	struct planner *pl = bert_lacking_first_kernels(1, &budget);
	const struct plan *p = pl->plan;

	struct dryrun_result r;
	run(pl->trace, ENGINE_PLAN, budget, p, &r);
	assert_int_equal(r.foreign_at, 0);
	assert_true(r.n_iterations > 1);
	uint64_t last = r.iterations[r.n_iterations - 1].refault_blocks;
	assert_true(last <= 64);
	dryrun_result_free(&r);
	planner_free(pl);
}

/* The fixture planned at half its unplanned peak, its signature's
 * allocation sizes doubled: a plan for another batch size (the same
 * kernels, other allocation sizes). */
static struct planner *plan_for_another_batch(const char *fixture)
{
	struct planner *pl = plan_fixture(fixture, 2);
	struct plan_signature *sig = &pl->plan->signature;
	for (uint32_t i = 0; i < sig->n_alloc_sizes; i++)
		sig->alloc_sizes[i] *= 2;
	return pl;
}

/* A program whose iterations lack the plan's first 12 kernels, more than
 * the matcher moves on track: its iterations start where it enters the
 * plan, their allocations are numbered from there, and the ops of the
 * positions before it are issued at the start. BERT-large then faults back
 * 10 blocks in the last iteration and 946 over the run (without those ops
 * 13 and 956; with its iterations counted from the plan's first kernel:
 * none counted, the allocations numbered from the program's start, 3,465
 * over the run). */
static void first_kernels_missing(void **state)
{
	uint64_t budget;
	struct planner *pl = bert_lacking_first_kernels(12, &budget);
	const struct plan *p = pl->plan;

	struct dryrun_result r;
	run(pl->trace, ENGINE_PLAN, budget, p, &r);
	assert_int_equal(r.foreign_at, 0);
	/* The first is joined midway, the last ends in the tail. */
	assert_true(r.n_iterations >= pl->iter.n_iters - 2);
	assert_true(r.iterations[r.n_iterations - 1].refault_blocks <= 64);
	assert_true(r.total.refault_blocks <= 2000);
	dryrun_result_free(&r);
	planner_free(pl);
}

/* Makes every other kernel unknown (ID and shape) from `before` kernels
 * before to `after` kernels after the start of every step-th iteration the
 * planner found, from the `from`-th on (before even: the start's own
 * kernel is one), as a program launching kernels the plan does not know
 * between the plan's there: the matcher loses its place before each such
 * start and finds it again after it, too far in for the matcher to start
 * an iteration (the allocations say it began). */
static void unknown_around_starts(struct trace *t, const struct iter_result *it, size_t from, size_t step,
				  size_t before, size_t after)
{
	for (size_t i = from; i < it->n_iters; i += step) {
		size_t start = it->iters[i].first;
		for (size_t k = start - before; k < start + after && k < t->n_kernels; k += 2) {
			t->kernels[k].exec_id = 0xdead00000000ULL + k;
			t->kernels[k].shape_id = 0xbeef00000000ULL + k;
		}
	}
}

/* The fixture planned at half its unplanned peak and replayed twice at
 * that budget: with every kernel known (known), then lost from 10 kernels
 * before to 20 after every step-th iteration start from the planner's
 * third (unknown_around_starts; lost). The caller frees both results and
 * the planner. */
static struct planner *replay_known_and_lost(const char *fixture, size_t step, struct dryrun_result *known,
					     struct dryrun_result *lost)
{
	struct planner *pl = plan_fixture(fixture, 2);
	uint64_t budget = budget_of(pl->plan);
	run(pl->trace, ENGINE_PLAN, budget, pl->plan, known);
	unknown_around_starts(pl->trace, &pl->iter, 2, step, 10, 20);
	run(pl->trace, ENGINE_PLAN, budget, pl->plan, lost);
	return pl;
}

/* BERT-large's fixture planned at half its unplanned peak, lost from 10
 * kernels before to 20 after the start of each iteration from the
 * planner's third on (the matcher starts its first at the second; the
 * first is longer): while lost the allocations count into the next
 * iteration, and the plan's ops and predictions find its tensors. 1,000
 * blocks fault back over the run, 946 with every kernel known; 2,868 when
 * the count ran on past the plan's while lost, and no allocation after
 * the first loss was the plan's. The place is found again 20 kernels into
 * each iteration, where the count began it: the same 3 iterations are
 * counted as with every kernel known, each timed from there (122.5, 98.1
 * and 121.9 ms against 120.3, 97.1 and 122.1); none were before. */
static void lost_across_iteration_starts(void **state)
{
	struct dryrun_result known, lost;
	struct planner *pl = replay_known_and_lost("h100_bert_large.db", 1, &known, &lost);
	assert_true(known.n_iterations >= 3);
	assert_int_equal(lost.n_iterations, known.n_iterations);
	for (size_t i = 0; i < lost.n_iterations; i++) { /* within 5 % */
		int64_t d = (int64_t)(lost.iteration_ns[i] - known.iteration_ns[i]);
		int64_t tol = (int64_t)(known.iteration_ns[i] / 20);
		assert_true(d >= -tol && d <= tol);
	}
	assert_true(lost.total.refault_blocks <= known.total.refault_blocks * 5 / 4);
	dryrun_result_free(&known);
	dryrun_result_free(&lost);
	planner_free(pl);
}

/* The MLP's fixture planned at half its unplanned peak, lost across every
 * other iteration start from the planner's third (10 kernels before to 20
 * after, as above): each such iteration is counted where the place is
 * found again, and the plan stays this program's. Before, none of them
 * was, so the foreign check compared two iterations' allocations with
 * one's, twice (from the matcher's second start to its third, and from
 * the third to the fourth); the first iteration, holding the start-up,
 * had made more than the plan's too, and the plan was judged foreign at
 * launch 352 of 578. */
static void lost_across_every_other_start(void **state)
{
	struct dryrun_result known, lost;
	struct planner *pl = replay_known_and_lost("h100_mlp.db", 2, &known, &lost);
	assert_int_equal(known.foreign_at, 0);
	assert_int_equal(lost.foreign_at, 0);
	assert_int_equal(lost.stats.launches, pl->trace->n_kernels);
	assert_int_equal(lost.n_iterations, known.n_iterations);
	dryrun_result_free(&known);
	dryrun_result_free(&lost);
	planner_free(pl);
}

/* A plan for another batch size is judged foreign by its allocations,
 * though the program never launches the plan's first 12 kernels. Counted
 * from the plan's first kernel, no iteration started, the allocations were
 * never compared, and the plan escaped the verdict. */
static void foreign_plan_without_its_first_kernels(void **state)
{
	struct planner *pl = plan_for_another_batch("h100_bert_large.db");
	drop_iteration_first_kernels(pl->trace, &pl->iter, 12);
	struct dryrun_result r;
	run(pl->trace, ENGINE_PLAN, 0, pl->plan, &r);
	assert_int_equal(r.stats.signature_mismatch, 1);
	assert_true(r.foreign_at > 0);
	dryrun_result_free(&r);
	planner_free(pl);
}

/* In the MLP's recording the second iteration starts with a resync to the
 * plan's kernel 1 (kernel 0 launched there with another ID, after the
 * matcher lost its place): its allocations count on from the plan's number
 * at kernel 1, and the start issues kernel 0's ops, so at a third of its
 * peak 25 blocks fault back in that iteration (without kernel 0's ops 36;
 * counted from that launch instead: 73). */
static void late_start_in_the_recording(void **state)
{
	struct planner *pl = plan_fixture("h100_mlp.db", 3);
	uint64_t budget = budget_of(pl->plan);
	struct dryrun_result r;
	run(pl->trace, ENGINE_PLAN, budget, pl->plan, &r);
	assert_true(r.n_iterations >= 3);
	assert_true(r.iterations[0].resynced > 0);
	assert_true(r.iterations[1].refault_blocks <= 30);
	dryrun_result_free(&r);
	planner_free(pl);
}

/* A plan made for another batch size is judged foreign, and nothing after
 * the verdict is fed. */
static void foreign_plan_stops_the_run(void **state)
{
	struct planner *pl = plan_for_another_batch("h100_mlp.db");
	struct dryrun_result r;
	run(pl->trace, ENGINE_PLAN, 0, pl->plan, &r);
	assert_int_equal(r.stats.signature_mismatch, 1);
	assert_true(r.foreign_at > 0);
	assert_int_equal(r.stats.launches, r.foreign_at);
	assert_true(r.stats.launches < pl->trace->n_kernels);
	assert_true(r.n_iterations >= 3);
	dryrun_result_free(&r);
	planner_free(pl);
}

/* The summary of the dry run of t under ondemand. */
static char *summary_of(const struct trace *t)
{
	static char text[4096];
	struct engine_config cfg = { ENGINE_ONDEMAND, 0, NULL, false, false, NULL };
	struct dryrun_result r;
	char err[256];
	if (dryrun_run(t, &cfg, &r, err, sizeof err) != 0)
		fail_msg("%s", err);
	FILE *f = tmpfile();
	assert_non_null(f);
	assert_int_equal(dryrun_print(f, t, &cfg, NULL, &r, true), 0);
	rewind(f);
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	dryrun_result_free(&r);
	return text;
}

/* A recording whose program ran CUDA graphs: a real replay stops following
 * at the first capture or graph launch, which the trace does not date, so
 * the dry run feeds the launches after it too; the summary says so (it
 * said nothing, and counted them as a real replay would not). */
static void graphs_noted(void **state)
{
	struct trace_kernel kernels[2] = { { .exec_id = 1, .launch_ns = 10 }, { .exec_id = 2, .launch_ns = 20 } };
	uint32_t arg_first[3] = { 0, 0, 0 };
	struct trace t = { .path = "graphs.db", .n_kernels = 2, .kernels = kernels, .arg_first = arg_first };
	assert_null(strstr(summary_of(&t), "CUDA graphs"));
	t.graph_kernels = 7;
	const char *text = summary_of(&t);
	assert_non_null(strstr(text, "the recorded run used CUDA graphs (7 kernels ran from them): a real replay "
				     "stops following at the program's first capture or graph launch"));
	assert_non_null(strstr(text, "2 launches"));
}

/* Without launches to follow (no kernels), nothing is counted; an
 * unusable configuration is an error, with a zeroed result. */
static void edges(void **state)
{
	struct trace_alloc allocs[1] = { { .id = 1, .address = 1ULL << 32, .size = 4096, .alloc_ns = 5,
					  .free_ns = TRACE_NS_NEVER } };
	uint32_t arg_first[1] = { 0 };
	struct trace t = { .arg_first = arg_first, .n_allocs = 1, .allocs = allocs };
	struct dryrun_result r;
	run(&t, ENGINE_ONDEMAND, 0, NULL, &r);
	assert_int_equal(r.stats.launches, 0);
	assert_int_equal(r.n_iterations, 0);
	dryrun_result_free(&r);

	struct engine_config cfg = { ENGINE_PLAN, 0, NULL, false, false, NULL };
	char err[256] = "";
	assert_int_equal(dryrun_run(&t, &cfg, &r, err, sizeof err), -1);
	assert_true(err[0] != '\0');
	assert_null(r.iterations);
	assert_int_equal(r.n_iterations, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(events_in_recorded_order),
		cmocka_unit_test(mlp),
		cmocka_unit_test(train_sim),
		cmocka_unit_test(bert_large),
		cmocka_unit_test(gpt2_iteration_ops_save_faults),
		cmocka_unit_test(first_kernel_missing),
		cmocka_unit_test(first_kernels_missing),
		cmocka_unit_test(foreign_plan_without_its_first_kernels),
		cmocka_unit_test(late_start_in_the_recording),
		cmocka_unit_test(lost_across_iteration_starts),
		cmocka_unit_test(lost_across_every_other_start),
		cmocka_unit_test(managed_memory_fed_as_written),
		cmocka_unit_test(foreign_plan_stops_the_run),
		cmocka_unit_test(edges),
		cmocka_unit_test(graphs_noted),
	};
	return cmocka_run_group_tests_name("replay_dryrun", tests, NULL, NULL);
}
