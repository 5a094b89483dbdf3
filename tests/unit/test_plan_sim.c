/*
 * Unit tests for the --simulate model (plan/sim.h): ideal is a lower bound
 * and time = ideal + stall for every policy; more capacity never makes
 * ondemand slower; blocks are conserved; with room for every block,
 * ondemand faults only in the warm-up; perturbed kernel durations (the
 * sensitivity study); the ratio parser and the constants file. On synthetic
 * traces over several seeds and on every committed fixture trace. A plan's
 * eviction leaves the blocks the kernel at its position uses, as the
 * replayer's does. A trace whose kernels use more blocks in all than the
 * model keeps is refused.
 */
#include "testutil.h"
#include "testplan.h"
#include "packed_trace.h"

#include "plan/planner.h"
#include "plan/sim.h"
#include "plan/synth.h"

static const double ratios[] = { 1, 1.5, 2, 3, 4 };
#define N_RATIOS (sizeof ratios / sizeof ratios[0])

static void assert_result(const struct sim_result *s, enum sim_policy pol, const char *what)
{
	if (s->time_ns < s->ideal_ns)
		fail_msg("%s %s: %llu ns below ideal %llu", what, sim_policy_name(pol),
			 (unsigned long long)s->time_ns, (unsigned long long)s->ideal_ns);
	assert_true(s->time_ns == s->ideal_ns + s->stall_ns);
	if (s->brought != s->resident_end + s->evicted + s->discarded)
		fail_msg("%s %s: %llu blocks brought, %llu resident + %llu evicted + %llu discarded",
			 what, sim_policy_name(pol), (unsigned long long)s->brought,
			 (unsigned long long)s->resident_end, (unsigned long long)s->evicted,
			 (unsigned long long)s->discarded);
	if (pol == SIM_IDEAL)
		assert_true(!s->faults && !s->htod_bytes && !s->dtoh_bytes && !s->stall_ns && !s->link_busy_ns);
	/* The kernels' time is part of ideal's (with the gaps between them). */
	if (s->link_idle_kernel_ns > s->ideal_ns)
		fail_msg("%s %s: the link idle for %llu ns of kernels in an ideal of %llu", what,
			 sim_policy_name(pol), (unsigned long long)s->link_idle_kernel_ns,
			 (unsigned long long)s->ideal_ns);
}

/* Perturbed durations (the sensitivity study): every invariant still holds
 * under them, the same seed gives the same run, and fraction 0 restores the
 * recorded run exactly. */
static void check_perturbation(struct sim_ctx *c, const struct sim_options *o,
			       const struct sim_row *rows, const char *path)
{
	char err[512];
	struct sim_result a, b;
	uint64_t cap = rows[2].res[SIM_PLAN].capacity;
	for (int p = 0; p < SIM_N_POLICIES; p++) {
		sim_ctx_perturb(c, 0.2, 7);
		if (sim_run(c, (enum sim_policy)p, cap, o, &a, err, sizeof err))
			fail_msg("%s", err);
		assert_result(&a, (enum sim_policy)p, path);
		if (p == SIM_IDEAL && a.ideal_ns == rows[2].res[SIM_IDEAL].ideal_ns)
			fail_msg("%s: perturbing the durations left ideal unchanged", path);
		sim_ctx_perturb(c, 0.2, 7);
		if (sim_run(c, (enum sim_policy)p, cap, o, &b, err, sizeof err))
			fail_msg("%s", err);
		assert_true(a.time_ns == b.time_ns && a.htod_bytes == b.htod_bytes);
	}
	sim_ctx_perturb(c, 0, 0);
	if (sim_run(c, SIM_PLAN, cap, o, &a, err, sizeof err))
		fail_msg("%s", err);
	assert_true(a.time_ns == rows[2].res[SIM_PLAN].time_ns);
	assert_true(a.ideal_ns == rows[2].res[SIM_PLAN].ideal_ns);

	/* The study itself: min <= median <= max, durations restored after. */
	struct sim_sensitivity sens[N_RATIOS];
	if (sim_sensitivity(c, ratios, N_RATIOS, 0, o, 0.2, sens, err, sizeof err))
		fail_msg("%s", err);
	for (size_t i = 0; i < N_RATIOS; i++) {
		assert_true(sens[i].ratio == ratios[i]);
		assert_true(sens[i].min_pct <= sens[i].median_pct && sens[i].median_pct <= sens[i].max_pct);
		assert_true(sens[i].max_pct <= 100.0 && sens[i].min_pct > 0);
		assert_true(sens[i].recorded_pct == sim_pct_ideal(&rows[i].res[SIM_PLAN]));
	}
	if (sim_run(c, SIM_IDEAL, cap, o, &a, err, sizeof err))
		fail_msg("%s", err);
	assert_true(a.ideal_ns == rows[2].res[SIM_IDEAL].ideal_ns);
}

/* Every invariant on the trace at path. */
static void check_trace(const char *path)
{
	struct planner *pl = test_plan(path, 0);
	char err[512];
	struct sim_ctx *c = sim_ctx_new(pl, err, sizeof err);
	if (!c)
		fail_msg("%s", err);
	struct sim_options o;
	sim_options_default(&pl->opt, &o);
	struct sim_row *rows;
	if (sim_sweep(c, ratios, N_RATIOS, 0, &o, &rows, err, sizeof err))
		fail_msg("%s", err);
	for (size_t i = 0; i < N_RATIOS; i++) {
		assert_true(rows[i].res[SIM_ONDEMAND].capacity <= sim_live_peak(c));
		for (int p = 0; p < SIM_N_POLICIES; p++)
			assert_result(&rows[i].res[p], (enum sim_policy)p, path);
		/* LRU with a kernel's blocks pinned, every cost serial: a
		 * larger capacity only removes faults and evictions. */
		if (i && rows[i].res[SIM_ONDEMAND].time_ns < rows[i - 1].res[SIM_ONDEMAND].time_ns)
			fail_msg("%s: ondemand faster at W/%.1f than at W/%.1f", path, ratios[i],
				 ratios[i - 1]);
	}
	/* Room for every block: after the warm-up nothing faults. */
	struct sim_result all;
	if (sim_run(c, SIM_ONDEMAND, sim_blocks(c) * SIM_BLOCK_BYTES, &o, &all, err, sizeof err))
		fail_msg("%s", err);
	assert_result(&all, SIM_ONDEMAND, path);
	assert_int_equal(all.faults, 0);
	assert_int_equal(all.dtoh_bytes, 0);
	assert_int_equal(all.evicted, 0);
	/* Nor does deepum move a byte: what it discards comes back with
	 * nothing to copy (session 61: a block discarded and used again was
	 * charged a copy to the GPU). (The plan keeps its headroom free, so
	 * it may move some.) */
	if (sim_run(c, SIM_DEEPUM, sim_blocks(c) * SIM_BLOCK_BYTES, &o, &all, err, sizeof err))
		fail_msg("%s", err);
	assert_result(&all, SIM_DEEPUM, path);
	if (all.htod_bytes || all.dtoh_bytes)
		fail_msg("%s: deepum moved %llu bytes in, %llu out with room for every block", path,
			 (unsigned long long)all.htod_bytes, (unsigned long long)all.dtoh_bytes);
	check_perturbation(c, &o, rows, path);
	free(rows);
	sim_ctx_free(c);
	planner_free(pl);
}

static void synthetic_traces(void **state)
{
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct synth_params sp;
		synth_defaults(&sp);
		sp.seed = seed;
		sp.layers = 4 + (uint32_t)seed * 2;
		sp.kernels_per_layer = 1 + (uint32_t)(seed % 2);
		if (seed == 2) {
			sp.min_bytes = 4096; /* small tensors share blocks */
			sp.max_bytes = 3 << 20;
		}
		char path[512], name[64], err[512];
		snprintf(name, sizeof name, "sim%llu.db", (unsigned long long)seed);
		test_path(path, sizeof path, name);
		if (synth_write(path, &sp, err, sizeof err))
			fail_msg("%s", err);
		check_trace(path);
	}
}

/* The plan policy runs the scheduler's ops: on a trace of long kernels
 * (20..40 ms; the scheduler hides every transfer behind them:
 * test_plan_sched) at W/1.5 and W/2 the plan's prefetches land before
 * their kernels and its evictions make the room, so the measured
 * iteration faults on nothing and stalls a tenth of ondemand's stall at
 * most (the model's blocks and serial link are not the scheduler's). Every other check held with the plan's ops never
 * issued (plan run as ondemand). */
static void plan_prefetches_what_ondemand_faults(void **state)
{
	static const double sweep[] = { 1.5, 2 };
	struct synth_params sp;
	char path[512], err[512];
	synth_defaults(&sp);
	sp.seed = 3;
	sp.layers = 6;
	sp.min_kernel_ns = 20000000;
	sp.max_kernel_ns = 40000000;
	sp.input_copy = false;
	test_path(path, sizeof path, "sim_long_kernels.db");
	if (synth_write(path, &sp, err, sizeof err))
		fail_msg("%s", err);
	struct planner *pl = test_plan(path, 0);
	struct sim_ctx *c = sim_ctx_new(pl, err, sizeof err);
	if (!c)
		fail_msg("%s", err);
	struct sim_options o;
	sim_options_default(&pl->opt, &o);
	struct sim_row *rows;
	if (sim_sweep(c, sweep, 2, 0, &o, &rows, err, sizeof err))
		fail_msg("%s", err);
	for (size_t i = 0; i < 2; i++) {
		const struct sim_result *od = &rows[i].res[SIM_ONDEMAND], *plan = &rows[i].res[SIM_PLAN];
		print_message("W/%.1f: ondemand %llu faults, %llu ns stall; plan %llu faults, %llu ns stall, "
			      "%llu bytes in, %llu out\n", sweep[i], (unsigned long long)od->faults,
			      (unsigned long long)od->stall_ns, (unsigned long long)plan->faults,
			      (unsigned long long)plan->stall_ns, (unsigned long long)plan->htod_bytes,
			      (unsigned long long)plan->dtoh_bytes);
		assert_result(plan, SIM_PLAN, path);
		assert_true(od->faults > 0 && od->stall_ns > 0);
		assert_int_equal(plan->faults, 0);
		assert_true(plan->stall_ns * 10 < od->stall_ns);
		assert_true(plan->htod_bytes > 0 && plan->dtoh_bytes > 0);
	}
	free(rows);
	sim_ctx_free(c);
	planner_free(pl);
}

static void every_fixture(void **state)
{
	glob_t g;
	test_glob_fixtures(&g);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		print_message("fixture %s\n", g.gl_pathv[i]);
		check_trace(g.gl_pathv[i]);
	}
	globfree(&g);
}

/* No schedule beats the capacity floor (plan/floor.h): on every fixture
 * at half and a third of its unplanned peak, without host placement (as
 * the simulator plans), the simulated plan takes at least the floor that
 * the same capacity and eviction rate give, and the floor is at least the
 * kernels' time. */
static void the_plan_never_beats_the_floor(void **state)
{
	glob_t g;
	char err[512];
	test_glob_fixtures(&g);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		uint64_t peak = test_unplanned_peak(path);
		struct planner *pl = test_plan_host(path, peak / 2, 0);
		struct sim_ctx *c = sim_ctx_new(pl, err, sizeof err);
		if (!c)
			fail_msg("%s: %s", path, err);
		struct sim_options o;
		sim_options_default(&pl->opt, &o);
		for (uint64_t div = 2; div <= 3; div++) {
			struct sim_result r;
			struct capacity_floor f;
			if (sim_run(c, SIM_PLAN, peak / div, &o, &r, err, sizeof err))
				fail_msg("%s: %s", path, err);
			if (sim_floor(c, peak / div, &o, &f, err, sizeof err))
				fail_msg("%s: %s", path, err);
			print_message("%s at 1/%llu of its peak: plan %.3f ms, floor %.3f ms (kernels %.3f ms)\n", path,
				      (unsigned long long)div, r.time_ns / 1e6, f.ns / 1e6, f.kernel_ns / 1e6);
			assert_true(f.ns >= f.kernel_ns);
			assert_true(r.time_ns >= f.ns);
		}
		sim_ctx_free(c);
		planner_free(pl);
	}
	globfree(&g);
}

/* The plan evicts allocation 1 over kernel 4 (packed_trace.h); the
 * block it shares with allocation 2 is used by every kernel, so the
 * replayer never evicts it (replay/act.c, act_evict: not a block of the
 * launch being prepared), and the simulator leaves it as well. With room
 * for the two blocks kernel 4 uses nothing faults; when the eviction took
 * the block, the kernel at its position faulted it straight back, every
 * iteration. */
static void evictions_spare_the_kernels_blocks(void **state)
{
	char path[512], err[512];
	write_packed_trace(test_path(path, sizeof path, "packed_sim.db"), true);
	const uint64_t budget = 4 << 20;
	struct planner *pl = test_plan_host(path, budget, 0);
	bool evicted = false;
	for (uint64_t i = 0; i < pl->plan->n_ops; i++)
		evicted |= pl->plan->ops[i].kind == PLAN_OP_EVICT &&
			   pl->plan->allocs[pl->plan->ops[i].alloc].ordinal == 1;
	assert_true(evicted);
	struct sim_ctx *c = sim_ctx_new(pl, err, sizeof err);
	if (!c)
		fail_msg("%s", err);
	struct sim_options o;
	sim_options_default(&pl->opt, &o);
	struct sim_result r;
	if (sim_run(c, SIM_PLAN, budget, &o, &r, err, sizeof err))
		fail_msg("%s", err);
	assert_result(&r, SIM_PLAN, path);
	assert_int_equal(r.faults, 0);
	assert_int_equal(r.dtoh_bytes, 0);
	sim_ctx_free(c);
	planner_free(pl);
}

/* The simulation of a trace of two 4 MiB tensors, 1 and 2 (4 blocks),
 * each used alone by its kernel, k0 or k1: kernels launched 1 ms apart,
 * 0.1 ms each, k1 where turn (an SQL expression of the launch's number n)
 * is 1. Its planner in *pl, the default options in *o. */
static struct sim_ctx *two_tensors(const char *path, int kernels, const char *turn, struct planner **pl,
				   struct sim_options *o)
{
	char err[512];
	char rows[2048];
	snprintf(rows, sizeof rows,
		 "INSERT OR REPLACE INTO meta VALUES ('status', 'complete'), ('device_name', 'test device'),"
		 "  ('device_memory', '1073741824'), ('command', 'python train.py');"
		 "INSERT INTO string VALUES (1, 'k0'), (2, 'k1');"
		 "INSERT INTO alloc(id, address, size, reserved, api, alloc_ns)"
		 "  VALUES (1, 4294967296, 4194304, 4194304, 'cudaMalloc', 1000),"
		 "  (2, 8589934592, 4194304, 4194304, 'cudaMalloc', 1000);"
		 "WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < %d)"
		 "INSERT INTO kernel(correlation_id, seq, exec_id, name_id, grid_x, grid_y, grid_z, block_x, block_y,"
		 "  block_z, shared_mem, launch_ns, start_ns, end_ns)"
		 "  SELECT 100 + n, n, 11 + %s, 1 + %s, 1, 1, 1, 32, 1, 1, 0, (n + 1) * 1000000 - 10000,"
		 "  (n + 1) * 1000000, (n + 1) * 1000000 + 100000 FROM g;"
		 "INSERT INTO kernel_arg SELECT correlation_id, 0, exec_id - 10, 0 FROM kernel;",
		 kernels - 1, turn, turn);
	write_sql_trace(path, rows);
	*pl = test_plan(path, 0);
	struct sim_ctx *c = sim_ctx_new(*pl, err, sizeof err);
	if (!c)
		fail_msg("%s", err);
	assert_int_equal(sim_blocks(c), 4);
	sim_options_default(&(*pl)->opt, o);
	return c;
}

/* Two kernels in turn, each on a 4 MiB tensor of its own: at a capacity
 * of one tensor, DeepUM's prefetch of the next kernel finds only the two
 * kernels' pinned blocks. It used to take its room anyway and, the next
 * kernel's blocks still pinned while the kernel ran, keep them: all four
 * blocks stayed resident in room for two, and deepum was predicted at
 * ideal's time with nothing moved. Now its residency keeps to the
 * capacity, and the prefetch that finds no room is not issued. */
static void deepum_keeps_to_the_capacity(void **state)
{
	char path[512], err[512];
	struct planner *pl;
	struct sim_options o;
	struct sim_ctx *c = two_tensors(test_path(path, sizeof path, "two_kernels.db"), 12, "n % 2", &pl, &o);
	const uint64_t cap = 2 * SIM_BLOCK_BYTES;
	struct sim_result dm;
	if (sim_run(c, SIM_DEEPUM, cap, &o, &dm, err, sizeof err))
		fail_msg("%s", err);
	assert_result(&dm, SIM_DEEPUM, path);
	if (dm.resident_end > 2)
		fail_msg("deepum ended with %llu blocks resident in room for 2",
			 (unsigned long long)dm.resident_end);
	assert_true(dm.time_ns > dm.ideal_ns);
	assert_true(dm.htod_bytes > 0);
	sim_ctx_free(c);
	planner_free(pl);
}

/* A block's time on the link at bps, as the model counts it. */
static uint64_t xfer(uint64_t bytes, uint64_t bps)
{
	return (uint64_t)((double)bytes * 1e9 / (double)bps);
}

/* The call cost of the two runs of run_free_and_dear_calls. */
#define DEAR_CALL_NS 5000000ull

/* policy at capacity cap on c (trace path), its calls free, then costing
 * DEAR_CALL_NS each. */
static void run_free_and_dear_calls(struct sim_ctx *c, enum sim_policy policy, uint64_t cap,
				    struct sim_options *o, const char *path, struct sim_result *free_calls,
				    struct sim_result *dear_calls)
{
	char err[512];
	o->call_cost_ns = 0;
	if (sim_run(c, policy, cap, o, free_calls, err, sizeof err))
		fail_msg("%s", err);
	o->call_cost_ns = DEAR_CALL_NS;
	if (sim_run(c, policy, cap, o, dear_calls, err, sizeof err))
		fail_msg("%s", err);
	assert_result(dear_calls, policy, path);
}

/* The dear calls' iteration exactly `calls` calls longer than the free. */
static void expect_calls_more(enum sim_policy policy, const struct sim_result *free_calls,
			      const struct sim_result *dear_calls, uint64_t calls)
{
	if (dear_calls->time_ns != free_calls->time_ns + calls * DEAR_CALL_NS)
		fail_msg("%s took %llu ns with calls of %llu ns, %llu without: not %llu calls more",
			 sim_policy_name(policy), (unsigned long long)dear_calls->time_ns, DEAR_CALL_NS,
			 (unsigned long long)free_calls->time_ns, (unsigned long long)calls);
}

/* Kernels A, A, B, B in turn, each on a 4 MiB tensor of its own, at a
 * capacity of one tensor: before the second A, DeepUM's prefetch of B finds
 * only A's pinned blocks and is not issued (as before the second B, of A);
 * before each first A and B it is. Only those two batches per iteration
 * cost a call: each delays its kernel by the call cost, the link being
 * idle. The prefetch that was not issued was charged its call on the link
 * all the same, pushing the next batch's call, evictions and copies later. */
static void deepum_charges_only_issued_prefetches(void **state)
{
	char path[512];
	struct planner *pl;
	struct sim_options o;
	struct sim_ctx *c = two_tensors(test_path(path, sizeof path, "aabb.db"), 16, "n / 2 % 2", &pl, &o);
	struct sim_result free_calls, dear_calls;
	run_free_and_dear_calls(c, SIM_DEEPUM, 2 * SIM_BLOCK_BYTES, &o, path, &free_calls, &dear_calls);
	assert_int_equal(dear_calls.faults, 0);
	expect_calls_more(SIM_DEEPUM, &free_calls, &dear_calls, 2);
	sim_ctx_free(c);
	planner_free(pl);
}

/* Two kernels in turn, each on a 4 MiB tensor of its own, at a capacity of
 * one tensor with no headroom: before each kernel the plan evicts the
 * other's tensor and prefetches its own, four calls per iteration, every
 * one on the link the kernel waits for; nothing faults. Calls of 5 ms
 * make the iteration four calls longer than free ones (the scheduler
 * makes the same ops for both). The plan's calls were once free in the
 * model with every check passing. Migration and compute in series: the
 * iteration is ideal plus the link's busy time, and both kernels (0.1 ms
 * each) run with the link idle. */
static void plan_charges_each_call(void **state)
{
	char path[512];
	struct planner *pl;
	struct sim_options o;
	struct sim_ctx *c = two_tensors(test_path(path, sizeof path, "abab.db"), 12, "n % 2", &pl, &o);
	struct sim_result free_calls, dear_calls;
	o.headroom_pct = 0;
	run_free_and_dear_calls(c, SIM_PLAN, 2 * SIM_BLOCK_BYTES, &o, path, &free_calls, &dear_calls);
	assert_int_equal(dear_calls.faults, 0);
	assert_int_equal(free_calls.faults, 0);
	assert_int_equal(dear_calls.htod_bytes, 2 * 4 << 20);
	assert_int_equal(dear_calls.dtoh_bytes, 2 * 4 << 20);
	expect_calls_more(SIM_PLAN, &free_calls, &dear_calls, 4);
	assert_int_equal(dear_calls.link_busy_ns, free_calls.link_busy_ns + 4 * DEAR_CALL_NS);
	assert_int_equal(free_calls.link_busy_ns,
			 4 * xfer(SIM_BLOCK_BYTES, o.dtoh_bytes_per_s) + 4 * xfer(SIM_BLOCK_BYTES, o.htod_bytes_per_s));
	assert_int_equal(free_calls.time_ns, free_calls.ideal_ns + free_calls.link_busy_ns);
	assert_int_equal(dear_calls.time_ns, dear_calls.ideal_ns + dear_calls.link_busy_ns);
	assert_int_equal(free_calls.link_idle_kernel_ns, 200000);
	assert_int_equal(dear_calls.link_idle_kernel_ns, 200000);
	sim_ctx_free(c);
	planner_free(pl);
}

/* The model keeps a word for each block each kernel uses (sim.c's k_blk):
 * 2^24 blocks are allowed (SIM_MAX_BLOCKS), but each kernel that uses a
 * tensor counts all its blocks again, so 17 kernels of an iteration on
 * one tensor of 16 TiB (2^23 blocks) had the model take 1.1 GB (and 2
 * GiB at once as its array grew) where the blocks take 128 MiB; every
 * kernel more another 64 MiB, and as much work per iteration simulated.
 * Refused, naming the file, before it takes any. */
static void block_uses_past_the_limit_are_refused(void **state)
{
	char path[512], err[512];
	test_path(path, sizeof path, "block_uses.db");
	write_sql_trace(path, SQL_TRACE_META
			"INSERT INTO string VALUES (1, 'k');"
			"INSERT INTO alloc(id, address, size, reserved, api, alloc_ns)"
			"  VALUES (1, 70368744177664, 17592186044416, 17592186044416, 'cudaMalloc', 1000);"
			"WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 67)"
			"INSERT INTO kernel(correlation_id, seq, exec_id, name_id, grid_x, grid_y, grid_z, block_x,"
			"  block_y, block_z, shared_mem, launch_ns, start_ns, end_ns)"
			"  SELECT 100 + n, n, 11 + n % 17, 1, 1, 1, 1, 32, 1, 1, 0, (n + 1) * 1000000 - 10000,"
			"  (n + 1) * 1000000, (n + 1) * 1000000 + 100000 FROM g;"
			"INSERT INTO kernel_arg SELECT correlation_id, 0, 1, 0 FROM kernel;");
	struct planner *pl = test_plan(path, 0);
	assert_int_equal(pl->tensors.n_pos, 17);
	struct sim_ctx *c = sim_ctx_new(pl, err, sizeof err);
	if (c)
		fail_msg("a simulation of %llu blocks used 17 times each was made",
			 (unsigned long long)sim_blocks(c));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "the iteration's kernels' tensors span 142606336 blocks of 2 MiB in all (a "
				    "tensor's once for each kernel using it), more than --simulate models "
				    "(134217728)"));
	planner_free(pl);
}

/* --simulate --json's counts, bytes and times keep every digit: cJSON
 * prints a number in 15 significant digits wherever they read back within
 * a relative DBL_EPSILON, so a capacity of 2^53 - 1 bytes printed as
 * 9.00719925474099e+15, and a double rounds past 2^53 (they go as decimal
 * strings there, as in --json's report). */
static void json_counts_stay_exact(void **state)
{
	char path[512];
	struct planner *pl;
	struct sim_options o;
	struct sim_ctx *c = two_tensors(test_path(path, sizeof path, "json_counts.db"), 4, "n % 2", &pl, &o);
	struct sim_row row = { .ratio = 2,
			       .floor = { .ns = 1000000000000009, .kernel_ns = 1000000000000011, .from = 3, .to = 1,
					  .evict_bytes = ((uint64_t)1 << 60) + 3, .window_kernel_ns = 1000000000000013,
					  .n_windows = 1,
					  .windows = { { 5, 7, ((uint64_t)1 << 60) + 5, 1000000000000015 } } } };
	for (int p = 0; p < SIM_N_POLICIES; p++)
		row.res[p] = (struct sim_result){ .capacity = ((uint64_t)1 << 53) - 1, .time_ns = 1000000000000001,
						  .ideal_ns = 1000000000000000, .stall_ns = 8999999999999999,
						  .htod_bytes = ((uint64_t)1 << 60) + 1, .dtoh_bytes = 1234567890123456,
						  .faults = 1000000000000003, .link_busy_ns = 1000000000000005,
						  .link_idle_kernel_ns = 1000000000000007 };
	cJSON *j = sim_json(c, &row, 1, &o);
	assert_non_null(j);
	char *text = cJSON_PrintUnformatted(j);
	assert_non_null(text);
	const char *want[] = { "\"live_peak\":8388608", "\"blocks\":4", "\"capacity\":9007199254740991",
			       "\"time_ns\":1000000000000001", "\"stall_ns\":8999999999999999",
			       "\"htod_bytes\":\"1152921504606846977\"", "\"dtoh_bytes\":1234567890123456",
			       "\"faults\":1000000000000003", "\"link_busy_ns\":1000000000000005",
			       "\"link_idle_kernel_ns\":1000000000000007",
			       "\"floors\":[{\"ratio\":2,\"capacity\":9007199254740991,\"ns\":1000000000000009,"
			       "\"kernel_ns\":1000000000000011,\"from\":3,\"to\":1,\"evict_bytes\":\"1152921504606846979\","
			       "\"window_kernel_ns\":1000000000000013,\"windows\":[{\"from\":5,\"to\":7,"
			       "\"evict_bytes\":\"1152921504606846981\",\"kernel_ns\":1000000000000015}]}]" };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(text, want[i]))
			fail_msg("%s lacks %s", text, want[i]);
	cJSON_free(text);
	cJSON_Delete(j);
	sim_ctx_free(c);
	planner_free(pl);
}

static void ratio_lists(void **state)
{
	double *r;
	size_t n;
	char bad[64];
	assert_int_equal(sim_parse_ratios("1,1.5,2", &r, &n, bad, sizeof bad), 0);
	assert_int_equal(n, 3);
	assert_true(r[0] == 1 && r[1] == 1.5 && r[2] == 2);
	free(r);
	const char *wrong[] = { "", "1,", "0.5", "2,x", "1,,2", "nan", "3e9" };
	const char *item[] = { "", "", "0.5", "x", "", "nan", "3e9" };
	for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
		assert_int_equal(sim_parse_ratios(wrong[i], &r, &n, bad, sizeof bad), -1);
		assert_string_equal(bad, item[i]);
	}
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void constants_file(void **state)
{
	struct planner_options po;
	planner_options_default(&po);
	struct sim_options o, def;
	sim_options_default(&po, &def);
	char path[512], err[512];
	test_path(path, sizeof path, "constants.json");
	write_text(path, "{\"htod_gbps\": 39.92, \"dtoh_gbps\": 7.76, \"other\": 0}");
	o = def;
	assert_int_equal(sim_constants_load(path, &o, err, sizeof err), 0);
	assert_true(o.htod_bytes_per_s == 39920000000ULL && o.dtoh_bytes_per_s == 7760000000ULL);
	assert_true(o.fault_bytes_per_s == def.fault_bytes_per_s && o.call_cost_ns == def.call_cost_ns);
	/* Rounded, as --call-cost and --htod-bw take them: 1.005 us times
	 * 1e3 is 1004.99..., 8.2 GB/s times 1e9 8199999999.99..., which
	 * were cut to 1004 ns and 8199999999 B/s. */
	write_text(path, "{\"htod_gbps\": 8.2, \"call_cost_us\": 1.005, \"fault_batch_us\": 1.005}");
	o = def;
	assert_int_equal(sim_constants_load(path, &o, err, sizeof err), 0);
	assert_int_equal(o.htod_bytes_per_s, 8200000000ULL);
	assert_int_equal(o.call_cost_ns, 1005);
	assert_int_equal(o.fault_batch_ns, 1005);
	const char *bad[] = { "[1]", "{\"htod_gbps\": -2}", "{\"dtoh_gbps\": \"x\"}",
			      "{\"fault_gbps\": 3}", "not json" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		write_text(path, bad[i]);
		o = def;
		assert_int_equal(sim_constants_load(path, &o, err, sizeof err), -1);
		assert_non_null(strstr(err, path));
		assert_true(o.htod_bytes_per_s == def.htod_bytes_per_s); /* left as it was */
	}
	test_path(path, sizeof path, "absent.json");
	assert_int_equal(sim_constants_load(path, &o, err, sizeof err), -1);
}

/* The whole file is the object: what follows a NUL byte is after the
 * object too (a string parser stops at the NUL, and took what it saw before
 * it for the whole file). */
static void constants_after_a_nul_refused(void **state)
{
	(void)state;
	struct planner_options po;
	planner_options_default(&po);
	struct sim_options o, def;
	sim_options_default(&po, &def);
	char path[512], err[512];
	test_path(path, sizeof path, "constants_nul.json");
	static const char text[] = "{\"htod_gbps\": 20}\0{\"dtoh_gbps\": 3}";
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
	assert_int_equal(fclose(f), 0);
	o = def;
	assert_int_equal(sim_constants_load(path, &o, err, sizeof err), -1);
	assert_non_null(strstr(err, path));
	assert_true(o.htod_bytes_per_s == def.htod_bytes_per_s); /* left as it was */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(synthetic_traces),
		cmocka_unit_test(plan_prefetches_what_ondemand_faults),
		cmocka_unit_test(every_fixture),
		cmocka_unit_test(the_plan_never_beats_the_floor),
		cmocka_unit_test(evictions_spare_the_kernels_blocks),
		cmocka_unit_test(deepum_keeps_to_the_capacity),
		cmocka_unit_test(deepum_charges_only_issued_prefetches),
		cmocka_unit_test(plan_charges_each_call),
		cmocka_unit_test(block_uses_past_the_limit_are_refused),
		cmocka_unit_test(json_counts_stay_exact),
		cmocka_unit_test(ratio_lists),
		cmocka_unit_test(constants_file),
		cmocka_unit_test(constants_after_a_nul_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
