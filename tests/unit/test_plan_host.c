/*
 * Unit tests for host placement (plan/host.c and its use by the planner):
 * host_choose on hand-built tensors (which ones qualify, one test per
 * reason to leave a tensor out; the cost rule; the order and where it
 * stops; nothing chosen without an excess or a bandwidth), host_pass_ns,
 * and plans of a real trace at half its unplanned peak: host entries that
 * only name persistent allocations no op names, every property kept, the
 * list surviving plan.bin, and fewer evictions than without host placement.
 */
#include "testutil.h"
#include "testplan.h"

#include "plan/host.h"
#include "plan/plan_check.h"
#include "plan/planner.h"

#define BLK PLAN_BLOCK_SIZE
#define BASE ((uint64_t)0x7f0000000000)
#define GBPS 1000000000ULL

/* The planner's bandwidths: a pass per use costs less than an eviction and
 * a prefetch up to HOST_MAX_USES uses. */
static const struct host_options defaults = { .remote_bytes_per_s = PLANNER_REMOTE_BPS,
					       .htod_bytes_per_s = PLANNER_HTOD_BPS,
					       .dtoh_bytes_per_s = PLANNER_DTOH_BPS };

/* ---- host_choose on hand-built tensors ---- */

#define MAXT 8

/* The fields of a tensor set and its vitality that host_choose reads. */
struct fix {
	struct tensor t[MAXT];
	struct vital_tensor tv[MAXT];
	uint32_t uses[MAXT * 10];
	uint64_t start_ns[11], end_ns[11];
	struct tensor_set ts;
	struct vital v;
};

/* n persistent tensors, each eligible (live the whole cycle of 10 kernels,
 * never freed, on whole blocks of its own) with blocks[i] blocks and uses[i]
 * uses (kernels 0, 1, ...); then one iteration tensor, eligible in every
 * other way, that is never chosen. Each kernel runs a second, time enough
 * to touch all of every operand. */
static void fix_init(struct fix *f, size_t n, const uint64_t *blocks, const uint32_t *uses)
{
	assert_true(n < MAXT);
	memset(f, 0, sizeof *f);
	for (size_t i = 0; i <= n; i++) {
		uint64_t bytes = (i < n ? blocks[i] : 1) * BLK;
		f->t[i] = (struct tensor){ .origin = PLAN_ALLOC_PERSISTENT, .ordinal = i + 1,
					   .size = bytes, .bytes = bytes,
					   .address = BASE + i * 64 * BLK, .live_len = 10 };
		f->tv[i] = (struct vital_tensor){ .n_uses = i < n ? uses[i] : 1, .use_first = 10 * i };
		for (uint32_t k = 0; k < f->tv[i].n_uses; k++)
			f->uses[10 * i + k] = k;
	}
	for (int k = 0; k <= 10; k++) {
		f->start_ns[k] = (uint64_t)k * 1000000000;
		f->end_ns[k] = f->start_ns[k] + (k < 10 ? 1000000000 : 0);
	}
	f->t[n].origin = PLAN_ALLOC_ITERATION;
	f->t[n].ordinal = 1;
	f->ts = (struct tensor_set){ .n_pos = 10, .n = n + 1, .t = f->t, .n_persistent = n,
				     .n_iteration = 1 };
	f->v = (struct vital){ .n_pos = 10, .tv = f->tv, .uses = f->uses, .n_uses = 10 * (n + 1),
			       .start_ns = f->start_ns, .end_ns = f->end_ns,
			       .cycle_ns = f->start_ns[10] };
}

static uint64_t choose(struct fix *f, uint64_t excess)
{
	struct host_options o = defaults;
	o.excess = excess;
	return host_choose(&f->ts, &f->v, &o);
}

/* The host flags as a bit set (bit i: tensor i). */
static unsigned chosen(const struct fix *f)
{
	unsigned bits = 0;
	for (size_t i = 0; i < f->ts.n; i++)
		bits |= (unsigned)f->t[i].host << i;
	return bits;
}

/* Tensor 0 (the larger, so the one taken first) spoiled by spoil; tensor 1
 * eligible. Under an excess that takes everything eligible, only tensor 1
 * is chosen. */
static void expect_left_out(void (*spoil)(struct fix *f))
{
	struct fix f;
	fix_init(&f, 2, (const uint64_t[]){ 4, 1 }, (const uint32_t[]){ 1, 1 });
	assert_int_equal(choose(&f, 100 * BLK), 5 * BLK);
	assert_int_equal(chosen(&f), 0x3);
	spoil(&f);
	assert_int_equal(choose(&f, 100 * BLK), BLK);
	assert_int_equal(chosen(&f), 0x2);
}

static void spoil_origin(struct fix *f)
{
	f->t[0].origin = PLAN_ALLOC_ITERATION;
}

static void spoil_live_len(struct fix *f)
{
	f->t[0].live_len = f->ts.n_pos - 1;
}

static void spoil_freed(struct fix *f)
{
	f->t[0].freed = true;
}

static void spoil_address(struct fix *f)
{
	f->t[0].address += 4096;
}

static void spoil_bytes(struct fix *f)
{
	f->t[0].bytes -= 4096;
}

static void spoil_empty(struct fix *f)
{
	f->t[0].bytes = 0;
	f->t[0].size = 0;
}

static void spoil_uses(struct fix *f)
{
	f->tv[0].n_uses = HOST_MAX_USES + 1;
}

static void spoil_unused(struct fix *f)
{
	f->tv[0].n_uses = 0;
}

/* An iteration allocation comes and goes within the iteration: nothing to
 * keep on the host (the trailing iteration tensor is never chosen either). */
static void host_leaves_out_iteration_tensors(void **state)
{
	expect_left_out(spoil_origin);
}

/* A persistent tensor live only part of the cycle. */
static void host_leaves_out_short_lived(void **state)
{
	expect_left_out(spoil_live_len);
}

/* A persistent tensor the program frees during the iteration. */
static void host_leaves_out_freed(void **state)
{
	expect_left_out(spoil_freed);
}

/* A tensor that does not start on a block boundary shares its first
 * block. */
static void host_leaves_out_unaligned(void **state)
{
	expect_left_out(spoil_address);
}

/* A footprint that is not whole blocks shares its last block; an empty one
 * owns none. */
static void host_leaves_out_partial_blocks(void **state)
{
	expect_left_out(spoil_bytes);
	expect_left_out(spoil_empty);
}

/* Used more than HOST_MAX_USES times: left to the migration schedule, however
 * fast the link. */
static void host_leaves_out_many_uses(void **state)
{
	expect_left_out(spoil_uses);
	struct fix f;
	fix_init(&f, 2, (const uint64_t[]){ 1, 1 },
		 (const uint32_t[]){ HOST_MAX_USES, HOST_MAX_USES + 1 });
	struct host_options o = { .excess = 100 * BLK, .remote_bytes_per_s = 1000 * GBPS,
				  .htod_bytes_per_s = GBPS, .dtoh_bytes_per_s = GBPS };
	assert_int_equal(host_choose(&f.ts, &f.v, &o), BLK);
	assert_int_equal(chosen(&f), 0x1);
}

/* Unused in the iteration and not resident when it starts: never resident
 * in the schedule, so the host would take nothing off the GPU. Resident at
 * the start, it holds its blocks the whole iteration, and qualifies. */
static void host_leaves_out_unused(void **state)
{
	expect_left_out(spoil_unused);
	struct fix f;
	fix_init(&f, 2, (const uint64_t[]){ 4, 1 }, (const uint32_t[]){ 0, 1 });
	f.t[0].resident_at_start = true;
	assert_int_equal(choose(&f, 100 * BLK), 5 * BLK);
	assert_int_equal(chosen(&f), 0x3);
}

/* Used by a kernel that ran longer than HOST_MAX_REUSE passes over its
 * operands at the device's peak would take (it re-reads them: a GEMM): left
 * to the migration schedule. Each kernel here runs a second, time for
 * 3.35e12 bytes at the peak: operands of a quarter of that are at the
 * limit, a few bytes fewer beyond it. Operands unknown: none re-reads. */
static void host_leaves_out_rereads(void **state)
{
	struct fix f;
	fix_init(&f, 2, (const uint64_t[]){ 4, 1 }, (const uint32_t[]){ 2, 1 });
	uint64_t operands[10];
	for (int k = 0; k < 10; k++)
		operands[k] = 837500000000ULL;
	struct host_options o = defaults;
	o.excess = 100 * BLK;
	o.operand_bytes = operands;
	assert_int_equal(host_choose(&f.ts, &f.v, &o), 5 * BLK);
	assert_int_equal(chosen(&f), 0x3);
	operands[1] -= 1000; /* t0's second use, not t1's */
	assert_int_equal(host_choose(&f.ts, &f.v, &o), BLK);
	assert_int_equal(chosen(&f), 0x2);
	o.operand_bytes = NULL;
	assert_int_equal(host_choose(&f.ts, &f.v, &o), 5 * BLK);
}

/* uses / remote < 1 / dtoh + 1 / htod: at 12.5 GB/s against 10 and 10, two
 * passes (0.16 ns/B) cost less than a round trip (0.2 ns/B), three (0.24)
 * do not; at 10 GB/s two passes cost the same as the round trip, which is no
 * gain; with evictions at 4 GB/s (0.35 ns/B) three passes (0.3) gain. */
static void host_cost_rule(void **state)
{
	struct fix f;
	fix_init(&f, 3, (const uint64_t[]){ 1, 1, 1 }, (const uint32_t[]){ 1, 2, 3 });
	struct host_options o = { .excess = 100 * BLK, .remote_bytes_per_s = 12500000000ULL,
				  .htod_bytes_per_s = 10 * GBPS, .dtoh_bytes_per_s = 10 * GBPS };
	assert_int_equal(host_choose(&f.ts, &f.v, &o), 2 * BLK);
	assert_int_equal(chosen(&f), 0x3);
	o.remote_bytes_per_s = 10 * GBPS;
	assert_int_equal(host_choose(&f.ts, &f.v, &o), BLK);
	assert_int_equal(chosen(&f), 0x1);
	o.dtoh_bytes_per_s = 4 * GBPS;
	assert_int_equal(host_choose(&f.ts, &f.v, &o), 3 * BLK);
	assert_int_equal(chosen(&f), 0x7);
}

/* Fewest uses first (an unused tensor, resident from the start, before
 * all), a group of equal uses at a time, taken whole while the excess is
 * not covered; the group where it ends keeps the rest spread over its
 * members: each the same share of its blocks, at its end, rounded down,
 * then a block more for the first ones in order (the largest first, then
 * tensor order) until the blocks cover the rest. Groups: t4 (0 uses, 1
 * block); t2, t3, t1 (1 use; 4, 4 and 2 blocks); t0 (2 uses, 8 blocks). */
static void host_order_and_stop(void **state)
{
	struct fix f;
	fix_init(&f, 5, (const uint64_t[]){ 8, 2, 4, 4, 1 }, (const uint32_t[]){ 2, 1, 1, 1, 0 });
	f.t[4].resident_at_start = true;
	static const struct {
		uint64_t excess;
		uint64_t host_blocks[5]; /* of t0..t4, at the end of each */
	} steps[] = {
		{ 1, { 0, 0, 0, 0, 1 } },
		{ BLK, { 0, 0, 0, 0, 1 } },
		{ BLK + 1, { 0, 0, 1, 0, 1 } },           /* 1 of 10: 0, 0, 0, then t2 */
		{ 4 * BLK, { 0, 0, 2, 1, 1 } },           /* 3 of 10: 1, 1, 0, then t2 */
		{ 5 * BLK, { 0, 0, 2, 2, 1 } },           /* 4 of 10: 1, 1, 0, then t2, t3 */
		{ 5 * BLK + 1, { 0, 1, 2, 2, 1 } },       /* 5 of 10: 2, 2, 1 */
		{ 10 * BLK, { 0, 1, 4, 4, 1 } },          /* 9 of 10: 3, 3, 1, then t2, t3 */
		{ 11 * BLK, { 0, 2, 4, 4, 1 } },
		{ 11 * BLK + 1, { 1, 2, 4, 4, 1 } },
		{ 19 * BLK, { 8, 2, 4, 4, 1 } },
		{ 1000 * BLK, { 8, 2, 4, 4, 1 } },
	};
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		print_message("excess %llu\n", (unsigned long long)steps[i].excess);
		uint64_t want = 0;
		for (int t = 0; t < 5; t++)
			want += steps[i].host_blocks[t] * BLK;
		assert_int_equal(choose(&f, steps[i].excess), want);
		for (int t = 0; t < 5; t++) {
			uint64_t blocks = steps[i].host_blocks[t];
			assert_int_equal(f.t[t].host, blocks != 0);
			assert_int_equal(f.t[t].host_offset, blocks ? f.t[t].bytes - blocks * BLK : 0);
		}
	}
}

/* Two tensors of 2^54 bytes, half the group's bytes in excess: each keeps
 * half its blocks on the host (their product, 2^66, once wrapped to 0). */
static void host_spreads_huge_tensors(void **state)
{
	struct fix f;
	uint64_t blocks = (uint64_t)1 << 33;
	fix_init(&f, 2, (const uint64_t[]){ blocks, blocks }, (const uint32_t[]){ 1, 1 });
	assert_true(choose(&f, blocks * BLK) == blocks * BLK);
	for (int t = 0; t < 2; t++)
		assert_true(f.t[t].host_offset == f.t[t].bytes / 2);
}

/* No excess, or no bandwidth for one of the three: nothing chosen, and the
 * flags of an earlier choice (and stray ones) cleared. */
static void host_nothing_without_excess_or_bandwidth(void **state)
{
	struct fix f;
	fix_init(&f, 2, (const uint64_t[]){ 2, 1 }, (const uint32_t[]){ 1, 1 });
	for (int c = 0; c < 4; c++) {
		struct host_options o = defaults;
		o.excess = c == 0 ? 0 : 100 * BLK;
		if (c == 1)
			o.remote_bytes_per_s = 0;
		if (c == 2)
			o.htod_bytes_per_s = 0;
		if (c == 3)
			o.dtoh_bytes_per_s = 0;
		for (size_t i = 0; i < f.ts.n; i++) {
			f.t[i].host = true;
			f.t[i].host_offset = BLK;
		}
		assert_int_equal(host_choose(&f.ts, &f.v, &o), 0);
		assert_int_equal(chosen(&f), 0);
		for (size_t i = 0; i < f.ts.n; i++)
			assert_int_equal(f.t[i].host_offset, 0);
	}
	/* A real choice clears the flag of what it leaves out too (here the
	 * iteration tensor). */
	for (size_t i = 0; i < f.ts.n; i++)
		f.t[i].host = true;
	assert_int_equal(choose(&f, 100 * BLK), 3 * BLK);
	assert_int_equal(chosen(&f), 0x3);
}

/* One pass per use over each chosen tensor: uses * bytes / remote, summed;
 * tensors not chosen add nothing. */
static void host_pass_time(void **state)
{
	struct fix f;
	fix_init(&f, 4, (const uint64_t[]){ 8, 2, 4, 1 }, (const uint32_t[]){ 2, 1, 3, 0 });
	assert_int_equal(host_pass_ns(&f.ts, &f.v, GBPS), 0);
	f.t[0].host = true;
	f.t[1].host = true;
	f.t[3].host = true;
	/* At 1 GB/s a byte takes a nanosecond: (2 * 8 + 1 * 2 + 0 * 1) blocks. */
	assert_int_equal(host_pass_ns(&f.ts, &f.v, GBPS), 18 * BLK);
	assert_int_equal(host_pass_ns(&f.ts, &f.v, 2 * GBPS), 9 * BLK);
	/* What host_choose picked, at the planner's bandwidth (not the unused
	 * t3, which was never resident). */
	assert_int_equal(choose(&f, 100 * BLK), 14 * BLK);
	double want = (2.0 * 8 + 2 + 3 * 4) * (double)BLK * 1e9 / (double)PLANNER_REMOTE_BPS;
	double got = (double)host_pass_ns(&f.ts, &f.v, PLANNER_REMOTE_BPS);
	assert_true(got > want - 2 && got < want + 1); /* whole nanoseconds */
	/* Of a tensor kept there in part, the host part's share: t1 whole (one
	 * use of 2 blocks), then the last of t0's 8 blocks (two uses). */
	assert_int_equal(choose(&f, 3 * BLK), 3 * BLK);
	assert_int_equal(chosen(&f), 0x3);
	assert_int_equal(f.t[0].host_offset, 7 * BLK);
	assert_int_equal(host_pass_ns(&f.ts, &f.v, GBPS), 2 * BLK + 2 * BLK);
}

/* A use by a kernel too brief to read the whole tensor counts only what
 * the kernel could have read at the device's peak bandwidth; a kernel with
 * no recorded duration counts whole. */
static void host_pass_time_of_brief_kernels(void **state)
{
	struct fix f;
	fix_init(&f, 1, (const uint64_t[]){ 8 }, (const uint32_t[]){ 3 });
	f.t[0].host = true;
	f.end_ns[0] = f.start_ns[0] + 100;   /* 100 ns: 335,000 bytes at most */
	f.end_ns[2] = f.start_ns[2];         /* not timed */
	/* At 1 GB/s a byte takes a nanosecond. */
	assert_int_equal(host_pass_ns(&f.ts, &f.v, GBPS), 335000 + 2 * 8 * BLK);
	/* The choice does not change: it assumes whole passes. */
	assert_int_equal(choose(&f, 100 * BLK), 8 * BLK);
}

/* Passes whose time does not fit 64 bits of nanoseconds (32 PiB on the
 * host, read whole thrice at the slowest --host-bw, 0.001 GB/s: some 10^20
 * ns) take forever, as a transfer too slow to time does in the schedule;
 * converted from a double past 2^64 they read as 0 on x86-64 (undefined
 * behaviour), and the plan predicted no time for them. */
static void host_pass_time_past_64_bits(void **state)
{
	struct fix f;
	fix_init(&f, 1, (const uint64_t[]){ 1ULL << 34 }, (const uint32_t[]){ 3 });
	f.t[0].host = true;
	for (int k = 0; k < 3; k++)
		f.end_ns[k] = f.start_ns[k]; /* not timed: whole passes */
	assert_int_equal(host_pass_ns(&f.ts, &f.v, 1000000), UINT64_MAX);
	/* Just below 2^64 ns: one use of 2^45 bytes at 2 B/ns is 2^44 s. */
	fix_init(&f, 1, (const uint64_t[]){ 1ULL << 24 }, (const uint32_t[]){ 1 });
	f.t[0].host = true;
	f.end_ns[0] = f.start_ns[0];
	assert_int_equal(host_pass_ns(&f.ts, &f.v, 2 * GBPS), 1ULL << 44);
}

/* ---- plans of a real trace ---- */

static uint32_t tensor_of_alloc(const struct tensor_set *ts, const struct plan_alloc *a)
{
	for (size_t i = 0; i < ts->n; i++)
		if (ts->t[i].origin == a->origin && ts->t[i].ordinal == a->ordinal)
			return (uint32_t)i;
	return TENSOR_NONE;
}

/* pl written to plan.bin file in the test directory and read back. */
static struct plan *saved_and_loaded(const struct plan *pl, const char *file)
{
	char path[512], err[512];
	test_path(path, sizeof path, file);
	assert_int_equal(plan_save(pl, path, err, sizeof err), 0);
	struct plan *back = plan_load(path, err, sizeof err);
	if (!back)
		fail_msg("%s", err);
	return back;
}

/* The plan of fixture name (its path in path) at half the peak residency it
 * has without a plan, that capacity in *cap. */
static struct planner *plan_at_half_peak(const char *name, char *path, size_t len, uint64_t *cap)
{
	test_fixture(path, len, name);
	*cap = test_unplanned_peak(path) / 2;
	return test_plan(path, *cap);
}

/* The ViT fixture at half its unplanned peak: the plan keeps tensors on the
 * host, each a persistent allocation that no op names and the planner
 * marked, their footprint host_bytes, their passes in the predicted
 * iteration; every property holds; the list survives plan.bin; and the
 * schedule evicts fewer bytes than the plan made with host placement off,
 * which keeps nothing on the host and reports the same residency without a
 * plan. */
static void vit_at_half_keeps_tensors_on_host(void **state)
{
	char path[512];
	uint64_t cap;
	struct planner *p = plan_at_half_peak("h100_vit_varying_ids.db", path, sizeof path, &cap);
	const struct plan *pl = p->plan;
	print_message("%u host allocations, %llu bytes\n", (unsigned)pl->n_host,
		      (unsigned long long)p->host_bytes);
	assert_true(pl->n_host > 0);
	uint64_t bytes = 0;
	size_t marked = 0;
	for (size_t i = 0; i < p->tensors.n; i++)
		marked += p->tensors.t[i].host;
	assert_int_equal(marked, pl->n_host);
	for (uint32_t i = 0; i < pl->n_host; i++) {
		assert_true(pl->host[i] < pl->n_allocs);
		const struct plan_alloc *a = &pl->allocs[pl->host[i]];
		assert_int_equal(a->origin, PLAN_ALLOC_PERSISTENT);
		uint32_t t = tensor_of_alloc(&p->tensors, a);
		assert_true(t != TENSOR_NONE);
		assert_true(p->tensors.t[t].host);
		assert_true(p->tensors.t[t].address % BLK == 0 && p->tensors.t[t].bytes % BLK == 0);
		assert_true(p->vital.tv[t].n_uses <= HOST_MAX_USES);
		bytes += p->tensors.t[t].bytes;
		for (uint64_t k = 0; k < pl->n_ops; k++)
			assert_int_not_equal(pl->ops[k].alloc, pl->host[i]);
	}
	assert_int_equal(bytes, p->host_bytes);
	/* The passes over host memory lengthen the predicted iteration. */
	assert_int_equal(p->host_ns, host_pass_ns(&p->tensors, &p->vital, PLANNER_REMOTE_BPS));
	assert_int_equal(pl->predict.iteration_ns, p->vital.cycle_ns + p->sched.stall_ns + p->host_ns);
	struct plan_check_result r;
	plan_check(&p->tensors, &p->access, &p->vital, pl, &r);
	if (r.violations)
		fail_msg("%zu violations, first: %s", r.violations, r.first);

	struct plan *back = saved_and_loaded(pl, "vit-host.bin");
	assert_int_equal(back->n_host, pl->n_host);
	assert_memory_equal(back->host, pl->host, pl->n_host * sizeof *pl->host);
	plan_check(&p->tensors, &p->access, &p->vital, back, &r);
	assert_int_equal(r.violations, 0);
	plan_destroy(back);

	struct planner *off = test_plan_host(path, cap, 0);
	print_message("evicted %llu bytes with host placement, %llu without\n",
		      (unsigned long long)p->sched.evict_bytes,
		      (unsigned long long)off->sched.evict_bytes);
	assert_int_equal(off->plan->n_host, 0);
	assert_int_equal(off->host_bytes, 0);
	assert_true(p->sched.evict_bytes < off->sched.evict_bytes);
	/* The residency without a plan is the program's either way. */
	assert_int_equal(p->sched.baseline_peak, off->sched.baseline_peak);
	assert_memory_equal(p->sched.baseline, off->sched.baseline, p->tensors.n_pos * sizeof *p->sched.baseline);
	planner_free(off);
	planner_free(p);
}

/* The DLRM fixture (8 embedding tables of 512 MB under SGD with sparse
 * gradients: a gather and a sparse update per step, each touching a few
 * rows) at half its unplanned peak: the tables, equal in uses, share the
 * excess: each keeps the same number of its last blocks on the host, give
 * or take one, within a block of the excess in all, its head resident (7
 * tables: in this recording the eighth counts 4 uses, two of them reduce
 * kernels with a parameter word that points into it, so it stays in the
 * migration schedule, HOST_MAX_USES); and
 * then nothing is left to migrate. The passes are priced by what the brief
 * kernels could touch, far below a whole pass per use (on the H100 the
 * plan's median step was about 1 ms above ideal's 8.4: docs/benchmarks.md).
 * The partial entries survive plan.bin and --check. */
static void dlrm_at_half_keeps_tables_on_host(void **state)
{
	char path[512];
	uint64_t cap;
	struct planner *p = plan_at_half_peak("h100_dlrm.db", path, sizeof path, &cap);
	const struct plan *pl = p->plan;
	double whole = 0;
	unsigned tables = 0, partial = 0;
	uint64_t on_host = 0, least = UINT64_MAX, most = 0;
	for (size_t i = 0; i < p->tensors.n; i++) {
		const struct tensor *t = &p->tensors.t[i];
		if (!t->host)
			continue;
		print_message("tensor %zu: %llu bytes, %u uses, on the host from byte %llu\n", i,
			      (unsigned long long)t->size, p->vital.tv[i].n_uses,
			      (unsigned long long)t->host_offset);
		assert_int_equal(t->size, 512000000);
		assert_int_equal(t->host_offset % BLK, 0);
		assert_true(t->host_offset < t->bytes);
		tables++;
		partial += t->host_offset != 0;
		uint64_t here = tensor_host_bytes(t);
		on_host += here;
		least = here < least ? here : least;
		most = here > most ? here : most;
		whole += (double)p->vital.tv[i].n_uses * (double)t->bytes * 1e9 / PLANNER_REMOTE_BPS;
	}
	uint64_t excess = p->sched.baseline_peak - p->sched_opt.capacity;
	assert_int_equal(tables, 7);
	assert_true(most - least <= BLK);
	assert_int_equal(on_host, p->host_bytes);
	assert_true(on_host >= excess && on_host < excess + BLK);
	assert_int_equal(pl->n_ops, 0);
	assert_int_equal(p->sched.evict_bytes, 0);
	assert_true(p->sched.peak <= cap);
	assert_int_equal(p->host_ns, host_pass_ns(&p->tensors, &p->vital, PLANNER_REMOTE_BPS));
	print_message("passes %.1f ms, %.1f ms as whole passes\n", (double)p->host_ns / 1e6, whole / 1e6);
	assert_true((double)p->host_ns < whole / 4);
	struct plan_check_result r;
	plan_check(&p->tensors, &p->access, &p->vital, pl, &r);
	assert_int_equal(r.violations, 0);

	assert_int_equal(partial, 7); /* half the peak is not whole tables */
	struct plan *back = saved_and_loaded(pl, "dlrm-host.bin");
	assert_int_equal(back->n_host, pl->n_host);
	assert_non_null(back->host_offset);
	assert_memory_equal(back->host_offset, pl->host_offset, pl->n_host * sizeof *pl->host_offset);
	plan_check(&p->tensors, &p->access, &p->vital, back, &r);
	assert_int_equal(r.violations, 0);
	/* Read as whole allocations (a reader without the offsets): fewer
	 * bytes resident, still within the capacity. */
	free(back->host_offset);
	back->host_offset = NULL;
	plan_check(&p->tensors, &p->access, &p->vital, back, &r);
	assert_int_equal(r.violations, 0);
	plan_destroy(back);
	planner_free(p);
}

/* The MLP fixture (SGD with momentum) at half its unplanned peak: only the
 * momentum buffers stay on the host; the weights, which the forward and
 * backward GEMMs re-read, migrate, though their 3 uses would have let them
 * (the choice without operand footprints takes them too). */
static void mlp_at_half_keeps_gemm_operands_resident(void **state)
{
	char path[512];
	uint64_t cap;
	struct planner *p = plan_at_half_peak("h100_mlp.db", path, sizeof path, &cap);
	const struct vital *v = &p->vital;
	size_t host = 0;
	for (size_t i = 0; i < p->tensors.n; i++) {
		if (!p->tensors.t[i].host)
			continue;
		host++;
		for (uint32_t k = 0; k < v->tv[i].n_uses; k++) {
			uint32_t pos = v->uses[v->tv[i].use_first + k];
			double passes = (double)(v->end_ns[pos] - v->start_ns[pos]) * HOST_DEVICE_PEAK_BPS / 1e9 /
					(double)p->access.ws_bytes[pos];
			assert_true(passes <= HOST_MAX_REUSE);
		}
	}
	struct host_options o = defaults;
	o.excess = p->sched.baseline_peak - p->sched_opt.capacity;
	uint64_t without = host_choose(&p->tensors, &p->vital, &o);
	size_t more = 0;
	for (size_t i = 0; i < p->tensors.n; i++)
		more += p->tensors.t[i].host;
	print_message("%zu tensors on the host, %zu (%llu bytes) taking GEMM operands too\n", host, more,
		      (unsigned long long)without);
	assert_true(host > 0);
	assert_true(more > host);
	planner_free(p);
}

/* Where the capacity does not bind there is no excess: nothing on the
 * host. */
static void nothing_on_host_without_pressure(void **state)
{
	char path[512];
	test_fixture(path, sizeof path, "h100_vit_varying_ids.db");
	struct planner *p = test_plan(path, 1ULL << 50);
	assert_int_equal(p->plan->n_host, 0);
	assert_int_equal(p->host_bytes, 0);
	for (size_t i = 0; i < p->tensors.n; i++)
		assert_false(p->tensors.t[i].host);
	planner_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_leaves_out_iteration_tensors),
		cmocka_unit_test(host_leaves_out_short_lived),
		cmocka_unit_test(host_leaves_out_freed),
		cmocka_unit_test(host_leaves_out_unaligned),
		cmocka_unit_test(host_leaves_out_partial_blocks),
		cmocka_unit_test(host_leaves_out_many_uses),
		cmocka_unit_test(host_leaves_out_unused),
		cmocka_unit_test(host_leaves_out_rereads),
		cmocka_unit_test(host_cost_rule),
		cmocka_unit_test(host_order_and_stop),
		cmocka_unit_test(host_spreads_huge_tensors),
		cmocka_unit_test(host_nothing_without_excess_or_bandwidth),
		cmocka_unit_test(host_pass_time),
		cmocka_unit_test(host_pass_time_of_brief_kernels),
		cmocka_unit_test(host_pass_time_past_64_bits),
		cmocka_unit_test(vit_at_half_keeps_tensors_on_host),
		cmocka_unit_test(dlrm_at_half_keeps_tables_on_host),
		cmocka_unit_test(mlp_at_half_keeps_gemm_operands_resident),
		cmocka_unit_test(nothing_on_host_without_pressure),
	};
	return cmocka_run_group_tests_name("plan_host", tests, NULL, NULL);
}
