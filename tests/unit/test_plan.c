/*
 * Unit tests for the in-memory plan (common/plan.c): encode/load round trip,
 * the invariants plan_validate enforces (each broken plan is written with
 * plan_encode, bypassing plan_save's validation, and must be refused on
 * load with a clear message), and decoder robustness against damaged
 * sections inside an intact container.
 */
#include "testutil.h"

#include "plan_sample.h"

static void assert_plans_equal(const struct plan *a, const struct plan *b)
{
	size_t la, lb;
	unsigned char *ia = sample_image(a, &la), *ib = sample_image(b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(ia, ib, la);
	free(ia);
	free(ib);
}

static void round_trip(void **state)
{
	struct plan *p = sample_plan();
	char path[512], err[256];
	test_path(path, sizeof path, "plan.bin");
	assert_int_equal(plan_save(p, path, err, sizeof err), 0);
	struct plan *q = plan_load(path, err, sizeof err);
	if (!q)
		fail_msg("%s", err);
	assert_int_equal(q->signature.n_kernels, 6);
	assert_memory_equal(q->signature.exec_ids, sample_exec_ids, sizeof sample_exec_ids);
	assert_memory_equal(q->signature.shape_ids, sample_shape_ids, sizeof sample_shape_ids);
	assert_memory_equal(q->signature.alloc_before, sample_alloc_before, sizeof sample_alloc_before);
	assert_memory_equal(q->signature.ring_keys, sample_ring_keys, sizeof sample_ring_keys);
	assert_int_equal(q->signature.ring_steps, 2);
	assert_int_equal(q->signature.n_alloc_sizes, 2);
	assert_true(q->signature.alloc_sizes[1] == MIB + 512);
	assert_true(q->signature.hash == p->signature.hash);
	assert_memory_equal(&q->assume, &p->assume, sizeof p->assume);
	assert_memory_equal(&q->predict, &p->predict, sizeof p->predict);
	assert_string_equal(q->provenance.trace_command, "python train.py --epochs 1");
	assert_string_equal(q->provenance.iteration_method, "nvtx");
	assert_int_equal(q->provenance.trace_iteration, 2);
	assert_int_equal(q->provenance.trace_iterations, 5);
	assert_int_equal(q->n_allocs, 4);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(q->allocs[i].origin, p->allocs[i].origin);
		assert_int_equal(q->allocs[i].ordinal, p->allocs[i].ordinal);
		assert_int_equal(q->allocs[i].size, p->allocs[i].size);
	}
	assert_int_equal(q->n_ops, p->n_ops);
	for (uint64_t i = 0; i < p->n_ops; i++) {
		const struct plan_op *x = &p->ops[i], *y = &q->ops[i];
		assert_int_equal(x->position, y->position);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->after, y->after);
		assert_int_equal(x->deadline, y->deadline);
		assert_int_equal(x->alloc, y->alloc);
		assert_int_equal(x->offset, y->offset);
		assert_int_equal(x->bytes, y->bytes);
	}
	assert_non_null(q->corr);
	uint64_t next[3];
	assert_int_equal(corr_next_execs(q->corr, sample_exec_ids[4], next, 3), 3);
	assert_true(next[0] == sample_exec_ids[5]);
	assert_true(next[1] == sample_exec_ids[0]); /* wraps to the next iteration */
	assert_int_equal(q->n_host, 0);
	assert_null(q->host);
	assert_false(q->provenance.framework_cache);
	assert_plans_equal(p, q);
	plan_destroy(p);
	plan_destroy(q);
}

static void host_round_trip(void **state)
{
	struct plan *p = sample_host_plan();
	char path[512], err[256];
	test_path(path, sizeof path, "host.bin");
	assert_int_equal(plan_save(p, path, err, sizeof err), 0);
	struct plan *q = plan_load(path, err, sizeof err);
	if (!q)
		fail_msg("%s", err);
	assert_int_equal(q->n_allocs, 6);
	assert_int_equal(q->allocs[5].ordinal, 7);
	assert_int_equal(q->n_host, 2);
	assert_int_equal(q->host[0], 4);
	assert_int_equal(q->host[1], 5);
	assert_plans_equal(p, q);
	plan_destroy(p);
	plan_destroy(q);
}

/* Host offsets survive plan.bin in section 10, written only when an entry
 * is partial: offsets that are all 0 leave it out, and the loaded plan has
 * none (every entry whole). */
static void host_offset_round_trip(void **state)
{
	struct plan *p = sample_host_offset_plan();
	char path[512], err[256];
	test_path(path, sizeof path, "host-offset.bin");
	assert_int_equal(plan_save(p, path, err, sizeof err), 0);
	struct plan *q = plan_load(path, err, sizeof err);
	if (!q)
		fail_msg("%s", err);
	assert_non_null(q->host_offset);
	assert_true(q->host_offset[0] == 4 * MIB);
	assert_true(q->host_offset[1] == 0);
	uint64_t off = 1;
	assert_true(plan_on_host(q, 4, &off) && off == 4 * MIB);
	assert_true(plan_on_host(q, 5, &off) && off == 0);
	assert_false(plan_on_host(q, 3, &off));
	assert_plans_equal(p, q);
	plan_destroy(q);

	p->host_offset[0] = 0;
	size_t len;
	unsigned char *img = sample_image(p, &len);
	planfile *pf = planfile_open_mem(img, len, "plan.bin", NULL, 0);
	assert_non_null(pf);
	assert_null(planfile_section(pf, PLAN_SEC_HOST_OFFSETS, NULL));
	planfile_close(pf);
	q = plan_load_mem(img, len, "plan.bin", err, sizeof err);
	if (!q)
		fail_msg("%s", err);
	assert_null(q->host_offset);
	assert_true(plan_on_host(q, 4, &off) && off == 0);
	free(img);
	plan_destroy(p);
	plan_destroy(q);
}

/* A plan that keeps nothing on the host has no section 8: it is what a
 * version 1 umkit wrote. One from a trace recorded with PyTorch's cache
 * off has no section 11. */
static void no_host_no_section(void **state)
{
	struct plan *p = sample_plan();
	size_t len;
	unsigned char *img = sample_image(p, &len);
	planfile *pf = planfile_open_mem(img, len, "plan.bin", NULL, 0);
	assert_non_null(pf);
	assert_null(planfile_section(pf, PLAN_SEC_HOST, NULL));
	assert_null(planfile_section(pf, PLAN_SEC_FRAMEWORK_CACHE, NULL));
	planfile_close(pf);
	free(img);
	plan_destroy(p);
}

static void ops_sorted_by_finalize(void **state)
{
	struct plan *p = sample_plan();
	/* Position 0 holds an evict and a prefetch: room is made first. */
	assert_int_equal(p->ops[0].position, 0);
	assert_int_equal(p->ops[0].kind, PLAN_OP_EVICT);
	assert_int_equal(p->ops[1].kind, PLAN_OP_PREFETCH);
	for (uint64_t i = 1; i < p->n_ops; i++)
		assert_true(p->ops[i - 1].position <= p->ops[i].position);
	/* The last position: discard_prefetch (3) before prefetch (4). */
	assert_int_equal(p->ops[p->n_ops - 2].kind, PLAN_OP_DISCARD_PREFETCH);
	assert_int_equal(p->ops[p->n_ops - 1].kind, PLAN_OP_PREFETCH);
	plan_destroy(p);
}

static bool same_op(const struct plan_op *x, const struct plan_op *y)
{
	return x->position == y->position && x->kind == y->kind && x->after == y->after &&
	       x->deadline == y->deadline && x->alloc == y->alloc && x->offset == y->offset &&
	       x->bytes == y->bytes;
}

/* Ops whose keys (position, kind, allocation) tie are ordered by offset,
 * then by the remaining fields: the same op set in any order finalizes to
 * one order, so equal plans give equal files (qsort is not stable, and
 * glibc's is stable only while it can allocate). Four ops at kernel 2, on
 * allocation 0, tying on all but one field each, in every rotation. */
static void ops_order_is_the_same_from_any_order(void **state)
{
	const struct plan_op tied[] = {
		{ 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, 0, 2 * MIB, MIB },
		{ 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, 0, 0, 2 * MIB },
		{ 2, PLAN_OP_EVICT, 1, PLAN_POS_NONE, 0, 0, MIB },
		{ 2, PLAN_OP_EVICT, 0, PLAN_POS_NONE, 0, 0, MIB },
		{ 2, PLAN_OP_DISCARD_PREFETCH, 1, 4, 0, 0, MIB },
		{ 2, PLAN_OP_DISCARD_PREFETCH, 1, 3, 0, 0, MIB },
	};
	const size_t n = sizeof tied / sizeof *tied;
	/* (position, kind, alloc, offset), then bytes, after, deadline. */
	const size_t want[] = { 3, 2, 1, 0, 5, 4 };
	for (size_t rot = 0; rot < n; rot++) {
		for (int reverse = 0; reverse < 2; reverse++) {
			struct plan *p = sample_plan();
			p->n_ops = n;
			for (size_t i = 0; i < n; i++)
				p->ops[i] = tied[reverse ? (n - 1 - i + rot) % n : (i + rot) % n];
			plan_finalize(p);
			for (size_t i = 0; i < n; i++)
				if (!same_op(&p->ops[i], &tied[want[i]]))
					fail_msg("rotation %zu%s: op %zu is not input op %zu", rot,
						 reverse ? " reversed" : "", i, want[i]);
			plan_destroy(p);
		}
	}
}

static void signature_hash_pinned(void **state)
{
	/* Pinned: plans and replayers from different builds must agree. */
	const uint64_t ids[2] = { 1, 2 }, sizes[1] = { 4096 };
	assert_true(plan_signature_hash(ids, 2, sizes, 1) == 0x9c34c4da53679315ULL);
	assert_true(plan_signature_hash(ids, 2, sizes, 0) != plan_signature_hash(ids, 2, sizes, 1));
	assert_true(plan_signature_hash(ids, 1, sizes, 1) != plan_signature_hash(ids, 2, sizes, 1));
}

static void no_correlation_tables(void **state)
{
	struct plan *p = sample_plan();
	corr_destroy(p->corr);
	p->corr = NULL;
	size_t len;
	char err[256];
	unsigned char *img = sample_image(p, &len);
	struct plan *q = plan_load_mem(img, len, "plan.bin", err, sizeof err);
	assert_non_null(q);
	assert_null(q->corr);
	plan_destroy(q);
	plan_destroy(p);
	free(img);
}

/* Encodes p as is and expects plan_load_mem to refuse it with want (the
 * whole message, or a part of it when partial). */
static void expect_refused(struct plan *p, const char *want, bool partial)
{
	size_t len;
	char err[512] = "";
	unsigned char *img = sample_image(p, &len);
	struct plan *q = plan_load_mem(img, len, "plan.bin", err, sizeof err);
	free(img);
	if (q)
		fail_msg("loaded a plan that should fail with \"%s\"", want);
	if (partial ? !strstr(err, want) : strcmp(err, want) != 0)
		fail_msg("got \"%s\", want \"%s\"", err, want);
	/* plan_save refuses it too, with the same check, and writes nothing. */
	char path[512], err2[512];
	test_path(path, sizeof path, "refused.bin");
	unlink(path);
	assert_int_equal(plan_save(p, path, err2, sizeof err2), -1);
	assert_int_equal(access(path, F_OK), -1);
	plan_destroy(p);
}

static void op_names_missing_alloc(void **state)
{
	struct plan *p = sample_plan();
	p->ops[3].alloc = 9;
	expect_refused(p, "plan.bin: op 3 names allocation 9 but the plan has 4", false);
	/* The first index past the end, as an off-by-one would let through. */
	p = sample_plan();
	p->ops[3].alloc = 4;
	expect_refused(p, "plan.bin: op 3 names allocation 4 but the plan has 4", false);
}

static void op_range_past_alloc(void **state)
{
	struct plan *p = sample_plan();
	p->ops[1].offset = 7 * MIB; /* allocation 0 is 8 MiB, the op 4 MiB long */
	expect_refused(p, "plan.bin: op 1 range [7340032, +4194304) is not inside allocation 0 "
			  "(8388608 bytes)", false);
	p = sample_plan();
	p->ops[1].offset = UINT64_MAX - 2; /* no wrap-around in the check */
	expect_refused(p, "is not inside allocation 0", true);
	p = sample_plan();
	p->ops[1].bytes = 0;
	expect_refused(p, "is not inside allocation 0", true);
}

static void op_position_past_iteration(void **state)
{
	struct plan *p = sample_plan();
	p->ops[p->n_ops - 1].position = 6;
	expect_refused(p, "plan.bin: op 5 is at kernel 6 but the iteration has 6 kernels", false);
}

static void op_fields(void **state)
{
	struct plan *p = sample_plan();
	p->ops[2].kind = 9;
	expect_refused(p, "plan.bin: op 2 has unknown kind 9", false);

	p = sample_plan();
	p->ops[1].after = 0; /* ops[1] is a prefetch */
	expect_refused(p, "plan.bin: op 1 (prefetch) waits after kernel 0, but a prefetch waits "
			  "for nothing", false);
	p = sample_plan();
	p->ops[0].after = 6; /* an evict */
	expect_refused(p, "plan.bin: op 0 (evict) waits after kernel 6, beyond the iteration",
		       false);
	p = sample_plan();
	p->ops[0].deadline = 2;
	expect_refused(p, "plan.bin: op 0 (evict) has deadline 2, but only prefetches have "
			  "deadlines", false);
	p = sample_plan();
	p->ops[1].deadline = PLAN_POS_NONE;
	expect_refused(p, "op 1 (prefetch) has deadline 4294967295, beyond the iteration", true);
	p = sample_plan();
	p->ops[1].deadline = 6; /* one past the last kernel */
	expect_refused(p, "plan.bin: op 1 (prefetch) has deadline 6, beyond the iteration", false);
	p = sample_plan();
	p->ops[1].deadline = 5; /* the last kernel: loads */
	char err[512];
	size_t len;
	unsigned char *img = sample_image(p, &len);
	struct plan *q = plan_load_mem(img, len, "plan.bin", err, sizeof err);
	if (!q)
		fail_msg("%s", err);
	plan_destroy(q);
	free(img);
	plan_destroy(p);

	p = sample_plan();
	struct plan_op t = p->ops[0];
	p->ops[0] = p->ops[1];
	p->ops[1] = t;
	expect_refused(p, "plan.bin: ops are out of order at op 1", true);
}

static void bad_signature_and_allocs(void **state)
{
	struct plan *p = sample_plan();
	p->signature.exec_ids[2] ^= 1;
	expect_refused(p, "does not match its content", true);

	p = sample_plan();
	p->signature.n_kernels = 0;
	p->signature.hash = plan_signature_hash(NULL, 0, p->signature.alloc_sizes, 2);
	expect_refused(p, "plan.bin: the plan's iteration has no kernels", false);

	p = sample_plan();
	p->allocs[3].ordinal = 3;
	expect_refused(p, "plan.bin: allocation 3 is the iteration's allocation #3 but the "
			  "iteration makes 2", false);
	p = sample_plan();
	p->allocs[2].size = 5 * MIB;
	expect_refused(p, "plan.bin: allocation 2 has size 5242880 but the signature says the "
			  "iteration's allocation #1 has 3145728", false);
	p = sample_plan();
	p->allocs[1].ordinal = 1;
	expect_refused(p, "plan.bin: allocations 0 and 1 are the same persistent allocation #1",
		       false);
	p = sample_plan();
	p->allocs[0].origin = 0;
	expect_refused(p, "plan.bin: allocation 0 has unknown origin 0", false);
	p = sample_plan();
	p->allocs[0].ordinal = 0;
	expect_refused(p, "plan.bin: allocation 0 has ordinal 0", false);
	p = sample_plan();
	p->allocs[1].size = 0;
	expect_refused(p, "plan.bin: allocation 1 has size 0", false);
	p = sample_plan();
	p->assume.block_size = 3 << 20;
	expect_refused(p, "plan.bin: block size 3145728 is not a power of two", false);
}

static void bad_block_tables(void **state)
{
	struct corr_config cfg;
	corr_config_default(&cfg);
	const struct corr_block bad_alloc[] = { { 9, 0 } }, bad_block[] = { { 3, 1 } };
	const struct corr_kernel_blocks kb1[1] = { { bad_alloc, 1 } }, kb2[1] = { { bad_block, 1 } };

	struct plan *p = sample_plan();
	corr_destroy(p->corr);
	p->corr = corr_build(&cfg, sample_exec_ids, 1, kb1, NULL, 0);
	expect_refused(p, "plan.bin: block table of exec ID 1000000000000001 names allocation 9 "
			  "but the plan has 4", false);
	p = sample_plan();
	corr_destroy(p->corr);
	p->corr = corr_build(&cfg, sample_exec_ids, 1, kb2, NULL, 0);
	/* Allocation 3 is 1 MiB + 512 bytes: one 2 MiB block. */
	expect_refused(p, "plan.bin: block table of exec ID 1000000000000001 names block 1 of "
			  "allocation 3, which has 1", false);
	/* The first allocation and block past the end. Allocation 0 is
	 * 8 MiB: blocks 0 to 3. */
	const struct corr_block past_allocs[] = { { 4, 0 } }, past_blocks[] = { { 0, 4 } };
	const struct corr_kernel_blocks kb3[1] = { { past_allocs, 1 } }, kb4[1] = { { past_blocks, 1 } };
	p = sample_plan();
	corr_destroy(p->corr);
	p->corr = corr_build(&cfg, sample_exec_ids, 1, kb3, NULL, 0);
	expect_refused(p, "plan.bin: block table of exec ID 1000000000000001 names allocation 4 "
			  "but the plan has 4", false);
	p = sample_plan();
	corr_destroy(p->corr);
	p->corr = corr_build(&cfg, sample_exec_ids, 1, kb4, NULL, 0);
	expect_refused(p, "plan.bin: block table of exec ID 1000000000000001 names block 4 of "
			  "allocation 0, which has 4", false);
}

static void bad_host_entries(void **state)
{
	struct plan *p = sample_host_plan();
	p->host[1] = 9;
	expect_refused(p, "plan.bin: host entry 1 names allocation 9 but the plan has 6", false);
	p = sample_host_plan();
	p->host[0] = 5;
	p->host[1] = 4;
	expect_refused(p, "plan.bin: host entries are not in ascending order at entry 1", false);
	p = sample_host_plan();
	p->host[1] = 4;
	expect_refused(p, "plan.bin: host entries are not in ascending order at entry 1", false);
	p = sample_host_plan();
	p->host[0] = 2;
	expect_refused(p, "plan.bin: host entry 0 names an iteration allocation (only persistent "
			  "ones may stay on the host)", false);
	/* ops[0] is the evict of allocation 1 at kernel 0. */
	p = sample_host_plan();
	p->host[0] = 1;
	expect_refused(p, "plan.bin: op 0 names allocation 1, which the plan keeps on the host",
		       false);

	/* A plan without allocations keeps none on the host. */
	p = sample_host_plan();
	free(p->allocs);
	p->allocs = NULL;
	p->n_allocs = 0;
	p->n_ops = 0;
	corr_destroy(p->corr);
	p->corr = NULL;
	p->n_host = 1;
	p->host[0] = 0;
	expect_refused(p, "plan.bin: host entry 0 names allocation 0 but the plan has 0", false);

	/* A host part starts on a block boundary inside its allocation
	 * (allocation 5 is 1 MiB). */
	p = sample_host_offset_plan();
	p->host_offset[0] = 4096;
	expect_refused(p, "plan.bin: host entry 0 starts at byte 4096, not on a block boundary",
		       false);
	p = sample_host_offset_plan();
	p->host_offset[1] = 2 * MIB;
	expect_refused(p, "plan.bin: host entry 1 starts at byte 2097152, past the end of its "
			  "allocation", false);
	p = sample_host_offset_plan();
	p->host_offset[0] = 16 * MIB;
	expect_refused(p, "plan.bin: host entry 0 starts at byte 16777216, past the end of its "
			  "allocation", false);

	char err[256];
	p = sample_host_plan();
	free(p->host);
	p->host = NULL;
	assert_int_equal(plan_validate(p, "plan.bin", err, sizeof err), -1);
	assert_string_equal(err, "plan.bin: the plan counts host entries it does not have");
	plan_destroy(p);
}

/* A plan with nothing to do (no ops, nothing on the host, a predicted
 * peak within the limit) gives the limit a run keeps to: the budget, or
 * without one the capacity it was made for; any op, any host entry or a
 * peak past the limit, 0. The sample plan predicts 6 MiB at a capacity
 * of 6 MiB. */
static void idle_limit_only_with_nothing_to_do(void **state)
{
	struct plan *p = sample_plan();
	assert_int_equal(plan_idle_limit(p, 0), 0);
	assert_int_equal(plan_idle_limit(p, 64 * MIB), 0);
	p->n_ops = 0;
	assert_int_equal(plan_idle_limit(p, 0), 6 * MIB);
	assert_int_equal(plan_idle_limit(p, 64 * MIB), 64 * MIB);
	assert_int_equal(plan_idle_limit(p, 6 * MIB), 6 * MIB);
	assert_int_equal(plan_idle_limit(p, 6 * MIB - 1), 0);
	p->predict.peak_residency_bytes = 6 * MIB + 1;
	assert_int_equal(plan_idle_limit(p, 0), 0);
	assert_int_equal(plan_idle_limit(p, 7 * MIB), 7 * MIB);
	plan_destroy(p);

	p = sample_host_plan();
	p->n_ops = 0;
	assert_int_equal(plan_idle_limit(p, 0), 0);
	assert_int_equal(plan_idle_limit(p, 64 * MIB), 0);
	p->n_host = 0;
	assert_int_equal(plan_idle_limit(p, 64 * MIB), 64 * MIB);
	plan_destroy(p);
}

/* A count without its array is refused before anything reads it (a
 * plan built in memory; a loaded one always has both). */
static void counts_without_arrays(void **state)
{
	char err[256];
	struct plan *p = sample_plan();
	struct plan_alloc *allocs = p->allocs;
	p->allocs = NULL;
	assert_int_equal(plan_validate(p, "plan.bin", err, sizeof err), -1);
	assert_string_equal(err, "plan.bin: the plan counts allocations it does not have");
	p->allocs = allocs;
	struct plan_op *ops = p->ops;
	p->ops = NULL;
	assert_int_equal(plan_validate(p, "plan.bin", err, sizeof err), -1);
	assert_string_equal(err, "plan.bin: the plan counts ops it does not have");
	p->ops = ops;
	uint64_t *sizes = p->signature.alloc_sizes;
	p->signature.alloc_sizes = NULL;
	assert_int_equal(plan_validate(p, "plan.bin", err, sizeof err), -1);
	assert_string_equal(err, "plan.bin: the signature lists 2 allocation sizes but has none");
	p->signature.alloc_sizes = sizes;
	assert_int_equal(plan_validate(p, "plan.bin", err, sizeof err), 0);
	plan_destroy(p);
}

/* ---- the byte layout docs/plan-format.md gives each section ---- */

/* Little-endian writes into a fixed buffer, independent of common/bytes.c
 * (a change to both the writer and the reader round-trips unnoticed). */
struct le {
	unsigned char b[1024];
	size_t n;
};

static void le_put(struct le *w, uint64_t v, int bytes)
{
	assert_true(w->n + (size_t)bytes <= sizeof w->b);
	for (int i = 0; i < bytes; i++)
		w->b[w->n++] = (unsigned char)(v >> (8 * i));
}

static void le_str(struct le *w, const char *s)
{
	le_put(w, strlen(s), 4);
	assert_true(w->n + strlen(s) <= sizeof w->b);
	memcpy(w->b + w->n, s, strlen(s));
	w->n += strlen(s);
}

static void assert_section_is(const planfile *pf, uint32_t id, const struct le *want)
{
	size_t n;
	const unsigned char *d = planfile_section(pf, id, &n);
	if (!d)
		fail_msg("section %u is missing", (unsigned)id);
	if (n != want->n)
		fail_msg("section %u holds %zu bytes, the format %zu", (unsigned)id, n, want->n);
	for (size_t i = 0; i < n; i++)
		if (d[i] != want->b[i])
			fail_msg("section %u differs from the format at byte %zu: %02x, not %02x",
				 (unsigned)id, i, d[i], want->b[i]);
}

/* Every section the plan's own code writes (all but the correlation
 * tables, test_corr's), byte for byte as the format document lays it out,
 * from the host-offset plan with the framework cache on: the fields in
 * their order and widths, little-endian. A round trip cannot tell a
 * writer and reader that agree on another layout (two fields swapped in
 * both passed every other test). */
static void sections_laid_out_as_documented(void **state)
{
	struct plan *p = sample_host_offset_plan();
	p->provenance.framework_cache = true;
	size_t len;
	unsigned char *img = sample_image(p, &len);
	planfile *pf = planfile_open_mem(img, len, "plan.bin", NULL, 0);
	assert_non_null(pf);
	struct le w = { .n = 0 };

	const uint64_t header[] = { 6 * MIB, 50000000000ULL, 8000000000ULL, 12000, PLAN_BLOCK_SIZE,
				    6 * MIB, 9 * MIB, 4 * MIB, 3 * MIB, 1234567 };
	for (size_t i = 0; i < sizeof header / sizeof *header; i++)
		le_put(&w, header[i], 8);
	assert_section_is(pf, PLAN_SEC_HEADER, &w);

	w.n = 0;
	le_put(&w, 6, 4);
	for (int i = 0; i < 6; i++)
		le_put(&w, sample_exec_ids[i], 8);
	le_put(&w, 2, 4);
	le_put(&w, 3 * MIB, 8);
	le_put(&w, MIB + 512, 8);
	le_put(&w, p->signature.hash, 8);
	assert_section_is(pf, PLAN_SEC_SIGNATURE, &w);

	w.n = 0;
	le_put(&w, 6, 4);
	const uint64_t allocs[6][3] = { { 1, 1, 8 * MIB }, { 1, 2, 4 * MIB }, { 2, 1, 3 * MIB },
					{ 2, 2, MIB + 512 }, { 1, 3, 16 * MIB }, { 1, 7, MIB } };
	for (int i = 0; i < 6; i++) {
		le_put(&w, allocs[i][0], 1);
		le_put(&w, allocs[i][1], 8);
		le_put(&w, allocs[i][2], 8);
	}
	assert_section_is(pf, PLAN_SEC_ALLOCS, &w);

	/* The sample's ops in plan order (ops_sorted_by_finalize). */
	const uint64_t ops[6][7] = {
		{ 0, PLAN_OP_EVICT, PLAN_POS_NONE, PLAN_POS_NONE, 1, 2 * MIB, 2 * MIB },
		{ 0, PLAN_OP_PREFETCH, PLAN_POS_NONE, 1, 0, 0, 4 * MIB },
		{ 3, PLAN_OP_EVICT, 1, PLAN_POS_NONE, 0, 0, 4 * MIB },
		{ 4, PLAN_OP_DISCARD, 3, PLAN_POS_NONE, 2, 0, 3 * MIB },
		{ 5, PLAN_OP_DISCARD_PREFETCH, 4, 1, 3, 512, MIB },
		{ 5, PLAN_OP_PREFETCH, PLAN_POS_NONE, 0, 1, 0, 4 * MIB },
	};
	static const int op_widths[7] = { 4, 1, 4, 4, 4, 8, 8 };
	w.n = 0;
	le_put(&w, 6, 8);
	for (int i = 0; i < 6; i++)
		for (int f = 0; f < 7; f++)
			le_put(&w, ops[i][f], op_widths[f]);
	assert_section_is(pf, PLAN_SEC_OPS, &w);

	w.n = 0;
	le_str(&w, "0.1.0");
	le_str(&w, "/data/trace.db");
	le_str(&w, "python train.py --epochs 1");
	le_str(&w, "nvtx");
	le_put(&w, 2, 4);
	le_put(&w, 5, 4);
	assert_section_is(pf, PLAN_SEC_PROVENANCE, &w);

	w.n = 0;
	le_put(&w, 2, 4);
	le_put(&w, 4, 4);
	le_put(&w, 5, 4);
	assert_section_is(pf, PLAN_SEC_HOST, &w);

	w.n = 0;
	le_put(&w, 2, 4);
	le_put(&w, 4 * MIB, 8);
	le_put(&w, 0, 8);
	assert_section_is(pf, PLAN_SEC_HOST_OFFSETS, &w);

	const struct {
		uint32_t id;
		const uint64_t *v;
	} per_kernel[] = { { PLAN_SEC_SHAPES, sample_shape_ids },
			   { PLAN_SEC_ALLOC_BEFORE, sample_alloc_before },
			   { PLAN_SEC_RING_KEYS, sample_ring_keys } };
	for (size_t s = 0; s < sizeof per_kernel / sizeof *per_kernel; s++) {
		w.n = 0;
		if (per_kernel[s].id == PLAN_SEC_RING_KEYS)
			le_put(&w, 2, 4); /* the ring's steps */
		le_put(&w, 6, 4);
		for (int i = 0; i < 6; i++)
			le_put(&w, per_kernel[s].v[i], 8);
		assert_section_is(pf, per_kernel[s].id, &w);
	}

	w.n = 0;
	le_put(&w, 1, 1);
	assert_section_is(pf, PLAN_SEC_FRAMEWORK_CACHE, &w);

	planfile_close(pf);
	free(img);
	plan_destroy(p);
}

/* Copies every section of pf into a new writer, replacing section `id`'s
 * content with data[0..len) (or leaving it out when data is NULL), and
 * returns the resulting image. */
static unsigned char *rebuild(const planfile *pf, uint32_t id, const void *data, size_t len,
			      size_t *out_len)
{
	planfile_writer *w = planfile_writer_create();
	for (size_t i = 0; i < planfile_section_count(pf); i++) {
		uint32_t sid = planfile_section_id(pf, i);
		size_t n;
		const void *d = planfile_section(pf, sid, &n);
		if (sid == id && !data)
			continue;
		if (sid == id)
			d = data, n = len;
		assert_int_equal(planfile_writer_add(w, sid, d, n), 0);
	}
	void *img;
	assert_int_equal(planfile_writer_encode(w, &img, out_len), 0);
	planfile_writer_destroy(w);
	return img;
}

/* The host plan's container, recorded with the framework cache on: every
 * section there is, 8 and 11 included. */
static planfile *sample_container(void)
{
	struct plan *p = sample_host_plan();
	p->provenance.framework_cache = true;
	size_t len;
	unsigned char *img = sample_image(p, &len);
	planfile *pf = planfile_open_mem(img, len, "plan.bin", NULL, 0);
	assert_non_null(pf);
	free(img);
	plan_destroy(p);
	return pf;
}

/* pf with section id replaced by data[0 .. len) (left out when data is
 * NULL) must be refused with msg. */
static void assert_rebuilt_refused(const planfile *pf, uint32_t id, const void *data, size_t len,
				   const char *msg)
{
	char err[256];
	size_t n;
	unsigned char *img = rebuild(pf, id, data, len, &n);
	assert_null(plan_load_mem(img, n, "plan.bin", err, sizeof err));
	assert_string_equal(err, msg);
	free(img);
}

/* A replacement for one section and the loader's message refusing it. */
struct damaged_section {
	const void *data;
	size_t len;
	const char *msg;
};

/* Each of cases[0 .. n), in place of section id of pf, refused with its
 * message. */
static void assert_all_refused(const planfile *pf, uint32_t id, const struct damaged_section *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_rebuilt_refused(pf, id, cases[i].data, cases[i].len, cases[i].msg);
}

/* pf with section id left out, loaded: it must load. */
static struct plan *load_without(const planfile *pf, uint32_t id)
{
	char err[256];
	size_t n;
	unsigned char *img = rebuild(pf, id, NULL, 0, &n);
	struct plan *q = plan_load_mem(img, n, "plan.bin", err, sizeof err);
	free(img);
	if (!q)
		fail_msg("%s", err);
	return q;
}

static void missing_sections(void **state)
{
	planfile *pf = sample_container();
	struct {
		uint32_t id;
		const char *msg;
	} cases[] = {
		{ PLAN_SEC_HEADER, "plan.bin: the header section is missing" },
		{ PLAN_SEC_SIGNATURE, "plan.bin: the signature section is missing" },
		{ PLAN_SEC_ALLOCS, "plan.bin: the allocations section is missing" },
		{ PLAN_SEC_OPS, "plan.bin: the ops section is missing" },
		{ PLAN_SEC_PROVENANCE, "plan.bin: the provenance section is missing" },
		{ PLAN_SEC_CORR_EXEC, "plan.bin: the correlation exec section is missing" },
		{ PLAN_SEC_CORR_BLOCKS, "plan.bin: the correlation block section is missing" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_rebuilt_refused(pf, cases[i].id, NULL, 0, cases[i].msg);
	/* Without section 8 the plan keeps nothing on the host. */
	struct plan *q = load_without(pf, PLAN_SEC_HOST);
	assert_int_equal(q->n_host, 0);
	plan_destroy(q);
	/* Without section 9 the replayer matches by ID alone. */
	q = load_without(pf, PLAN_SEC_SHAPES);
	assert_null(q->signature.shape_ids);
	plan_destroy(q);
	/* Without section 12 the replayer numbers from the iteration's start. */
	q = load_without(pf, PLAN_SEC_ALLOC_BEFORE);
	assert_null(q->signature.alloc_before);
	plan_destroy(q);
	/* Without section 13 the replayer follows a ring by IDs alone. */
	q = load_without(pf, PLAN_SEC_RING_KEYS);
	assert_null(q->signature.ring_keys);
	plan_destroy(q);

	/* An unknown section is ignored: a later umkit may add optional ones. */
	char err[256];
	void *img;
	size_t len;
	planfile_writer *w = planfile_writer_create();
	for (size_t i = 0; i < planfile_section_count(pf); i++) {
		size_t n;
		uint32_t id = planfile_section_id(pf, i);
		const void *d = planfile_section(pf, id, &n);
		planfile_writer_add(w, id, d, n);
	}
	planfile_writer_add(w, 99, "future", 6);
	assert_int_equal(planfile_writer_encode(w, &img, &len), 0);
	q = plan_load_mem(img, len, "plan.bin", err, sizeof err);
	assert_non_null(q);
	plan_destroy(q);
	free(img);
	planfile_writer_destroy(w);
	planfile_close(pf);
}

/* Section 11, one byte, says the trace was recorded with PyTorch's cache
 * on; written only then, and any other value is refused. */
static void framework_cache_section(void **state)
{
	planfile *pf = sample_container();
	size_t n;
	const unsigned char *d = planfile_section(pf, PLAN_SEC_FRAMEWORK_CACHE, &n);
	assert_int_equal(n, 1);
	assert_int_equal(d[0], 1);
	const unsigned char zero = 0, two = 2;
	assert_rebuilt_refused(pf, PLAN_SEC_FRAMEWORK_CACHE, &zero, 1,
			       "plan.bin: the framework cache section says 0 (only 1 is defined)");
	assert_rebuilt_refused(pf, PLAN_SEC_FRAMEWORK_CACHE, &two, 1,
			       "plan.bin: the framework cache section says 2 (only 1 is defined)");
	struct plan *q = load_without(pf, PLAN_SEC_FRAMEWORK_CACHE);
	assert_false(q->provenance.framework_cache);
	plan_destroy(q);
	planfile_close(pf);

	struct plan *p = sample_plan();
	p->provenance.framework_cache = true;
	char path[512], err[256];
	test_path(path, sizeof path, "cache.bin");
	assert_int_equal(plan_save(p, path, err, sizeof err), 0);
	q = plan_load(path, err, sizeof err);
	if (!q)
		fail_msg("%s", err);
	assert_true(q->provenance.framework_cache);
	assert_plans_equal(p, q);
	plan_destroy(p);
	plan_destroy(q);
}

/* Every section cut at every length, or given a trailing byte, is refused. */
static void section_truncations(void **state)
{
	planfile *pf = sample_container();
	char err[256];
	for (size_t s = 0; s < planfile_section_count(pf); s++) {
		uint32_t id = planfile_section_id(pf, s);
		size_t n;
		const unsigned char *d = planfile_section(pf, id, &n);
		for (size_t cut = 0; cut < n; cut++) {
			size_t len;
			unsigned char *img = rebuild(pf, id, d, cut, &len);
			err[0] = 0;
			if (plan_load_mem(img, len, "plan.bin", err, sizeof err))
				fail_msg("section %u cut to %zu bytes still loads", (unsigned)id, cut);
			assert_true(strncmp(err, "plan.bin: ", 10) == 0);
			free(img);
		}
		unsigned char *longer = malloc(n + 1);
		memcpy(longer, d, n);
		longer[n] = 0;
		size_t len;
		unsigned char *img = rebuild(pf, id, longer, n + 1, &len);
		assert_null(plan_load_mem(img, len, "plan.bin", err, sizeof err));
		assert_non_null(strstr(err, "longer than its"));
		free(img);
		free(longer);
	}
	planfile_close(pf);
}

/* Section 8 decoded exactly: its count is checked against the bytes present
 * before anything is allocated. */
/* A provenance string holding a NUL byte (no C string could carry it
 * whole) is refused, whichever of the four it is. */
static void provenance_string_with_a_nul(void **state)
{
	planfile *pf = sample_container();
	for (int which = 0; which < 4; which++) {
		struct le w = { .n = 0 };
		for (int i = 0; i < 4; i++) {
			if (i == which) {
				le_put(&w, 3, 4);
				le_put(&w, 'a', 1);
				le_put(&w, 0, 1);
				le_put(&w, 'b', 1);
			} else {
				le_str(&w, "x");
			}
		}
		le_put(&w, 2, 4);
		le_put(&w, 5, 4);
		assert_rebuilt_refused(pf, PLAN_SEC_PROVENANCE, w.b, w.n,
				       "plan.bin: the provenance section has a string with a NUL byte");
	}
	planfile_close(pf);
}

static void host_section_damage(void **state)
{
	planfile *pf = sample_container();
	const unsigned char good[12] = { 2, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0 };
	unsigned char longer[13] = { 2, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 0 };
	const unsigned char huge[8] = { 0xff, 0xff, 0xff, 0xff, 4, 0, 0, 0 };
	size_t n;
	const void *d = planfile_section(pf, PLAN_SEC_HOST, &n);
	assert_int_equal(n, sizeof good);
	assert_memory_equal(d, good, sizeof good);
	const struct damaged_section cases[] = {
		{ good, 10, "plan.bin: the host placement section is truncated" },
		{ good, 3, "plan.bin: the host placement section is truncated" },
		{ huge, sizeof huge, "plan.bin: the host placement section is truncated" },
		{ longer, sizeof longer, "plan.bin: the host placement section is longer than its "
					 "content" },
	};
	assert_all_refused(pf, PLAN_SEC_HOST, cases, sizeof cases / sizeof cases[0]);
	planfile_close(pf);
}

/* Section 10 holds one offset per host entry, decoded exactly; without
 * it every entry is whole. */
static void host_offset_section_damage(void **state)
{
	struct plan *p = sample_host_offset_plan();
	size_t len;
	unsigned char *img = sample_image(p, &len);
	plan_destroy(p);
	planfile *pf = planfile_open_mem(img, len, "plan.bin", NULL, 0);
	assert_non_null(pf);
	free(img);
	size_t n;
	const void *d = planfile_section(pf, PLAN_SEC_HOST_OFFSETS, &n);
	const unsigned char good[20] = { 2, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(n, sizeof good);
	assert_memory_equal(d, good, sizeof good);
	unsigned char one[12] = { 1, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0 };
	unsigned char longer[21] = { 2, 0, 0, 0, 0, 0, 0x40 };
	const unsigned char huge[12] = { 0xff, 0xff, 0xff, 0xff };
	const struct damaged_section cases[] = {
		{ one, sizeof one, "plan.bin: the host offset section lists 1 entries, the host "
				   "placement section 2" },
		{ good, 19, "plan.bin: the host offset section is truncated" },
		{ huge, sizeof huge, "plan.bin: the host offset section is truncated" },
		{ longer, sizeof longer, "plan.bin: the host offset section is longer than its content" },
	};
	assert_all_refused(pf, PLAN_SEC_HOST_OFFSETS, cases, sizeof cases / sizeof cases[0]);
	struct plan *q = load_without(pf, PLAN_SEC_HOST_OFFSETS);
	assert_null(q->host_offset);
	assert_int_equal(q->n_host, 2);
	plan_destroy(q);
	planfile_close(pf);
}

/* A section of one u64 per kernel of the signature after head bytes (9,
 * shapes; 13, ring keys, after the ring's steps) holds no more and no
 * fewer. */
static void per_kernel_section_damage(uint32_t id, size_t head, const char *what)
{
	planfile *pf = sample_container();
	size_t n;
	const unsigned char *d = planfile_section(pf, id, &n);
	assert_int_equal(n, head + 4 + 6 * 8);
	unsigned char fewer[8 + 5 * 8], claims_more[8 + 6 * 8];
	memcpy(fewer, d, head + 4 + 5 * 8);
	fewer[head] = 5;
	memcpy(claims_more, d, n);
	claims_more[head] = 7;
	char lists[128], truncated[128];
	snprintf(lists, sizeof lists, "plan.bin: the %s section lists 5 kernels, the signature 6", what);
	snprintf(truncated, sizeof truncated, "plan.bin: the %s section is truncated", what);
	const struct damaged_section cases[] = {
		{ fewer, head + 4 + 5 * 8, lists },
		{ claims_more, n, truncated },
		{ d, n - 1, truncated },
	};
	assert_all_refused(pf, id, cases, sizeof cases / sizeof cases[0]);
	planfile_close(pf);
}

static void shape_section_damage(void **state)
{
	per_kernel_section_damage(PLAN_SEC_SHAPES, 0, "shape");
}

/* Section 13 also says how many steps the ring has: 2 .. 64, and as many
 * kernels in each. */
static void ring_keys_section_damage(void **state)
{
	per_kernel_section_damage(PLAN_SEC_RING_KEYS, 4, "ring key");
	planfile *pf = sample_container();
	size_t n;
	const unsigned char *d = planfile_section(pf, PLAN_SEC_RING_KEYS, &n);
	unsigned char one[4 + 4 + 6 * 8], four[4 + 4 + 6 * 8];
	memcpy(one, d, n);
	one[0] = 1;
	memcpy(four, d, n);
	four[0] = 4;
	const struct damaged_section cases[] = {
		{ one, n, "plan.bin: the ring key section says 1 steps for 6 kernels" },
		{ four, n, "plan.bin: the ring key section says 4 steps for 6 kernels" },
		{ d, 3, "plan.bin: the ring key section is truncated" }, /* in the steps */
	};
	assert_all_refused(pf, PLAN_SEC_RING_KEYS, cases, sizeof cases / sizeof cases[0]);
	planfile_close(pf);

	/* More steps than a replayer looks through, though they divide; 64
	 * is the most. */
	struct plan *p = plan_create();
	char err[256];
	p->signature.n_kernels = 64 * 65;
	p->signature.exec_ids = calloc(64 * 65, sizeof(uint64_t));
	p->signature.ring_steps = 65;
	p->signature.ring_keys = calloc(64 * 65, sizeof(uint64_t));
	plan_finalize(p);
	assert_int_equal(plan_validate(p, "plan.bin", err, sizeof err), -1);
	assert_string_equal(err, "plan.bin: the ring key section says 65 steps for 4160 kernels");
	p->signature.ring_steps = 64;
	assert_int_equal(plan_validate(p, "plan.bin", err, sizeof err), 0);
	plan_destroy(p);
}

/* Section 12 holds one count per kernel of the signature, in order, none
 * above the iteration's allocations. */
static void alloc_before_section_damage(void **state)
{
	planfile *pf = sample_container();
	size_t n;
	const unsigned char *d = planfile_section(pf, PLAN_SEC_ALLOC_BEFORE, &n);
	assert_int_equal(n, 4 + 6 * 8);
	unsigned char fewer[4 + 5 * 8], decreasing[4 + 6 * 8], too_many[4 + 6 * 8];
	memcpy(fewer, d, sizeof fewer);
	fewer[0] = 5;
	memcpy(decreasing, d, sizeof decreasing);
	decreasing[4 + 3 * 8] = 0; /* kernel 3: 0 after kernel 2's 1 */
	memcpy(too_many, d, sizeof too_many);
	too_many[4 + 5 * 8] = 3; /* kernel 5: 3 of 2 */
	const struct damaged_section cases[] = {
		{ fewer, sizeof fewer, "plan.bin: the allocations-before section lists 5 kernels, the signature 6" },
		{ d, n - 1, "plan.bin: the allocations-before section is truncated" },
		{ decreasing, sizeof decreasing, "plan.bin: the allocations-before section says kernel 3 "
						 "follows 0 allocations (kernel before it: 1)" },
		{ too_many, sizeof too_many, "plan.bin: the allocations-before section says kernel 5 "
					     "follows 3 allocations (the iteration has 2)" },
	};
	assert_all_refused(pf, PLAN_SEC_ALLOC_BEFORE, cases, sizeof cases / sizeof cases[0]);
	planfile_close(pf);
}

/* Flipping bytes inside each section (container intact) must give an error
 * or a plan that passes every check: never a crash (run under ASan). */
static void section_flips(void **state)
{
	planfile *pf = sample_container();
	char err[256];
	const unsigned char patterns[] = { 0x01, 0x80, 0xff };
	size_t loaded = 0, refused = 0;
	for (size_t s = 0; s < planfile_section_count(pf); s++) {
		uint32_t id = planfile_section_id(pf, s);
		size_t n;
		const unsigned char *d = planfile_section(pf, id, &n);
		unsigned char *m = malloc(n);
		memcpy(m, d, n);
		for (size_t i = 0; i < n; i++) {
			for (size_t k = 0; k < sizeof patterns; k++) {
				m[i] ^= patterns[k];
				size_t len;
				unsigned char *img = rebuild(pf, id, m, n, &len);
				struct plan *q = plan_load_mem(img, len, "plan.bin", err, sizeof err);
				if (q) {
					assert_int_equal(plan_validate(q, "x", err, sizeof err), 0);
					loaded++;
				} else {
					assert_true(strncmp(err, "plan.bin: ", 10) == 0);
					refused++;
				}
				plan_destroy(q);
				free(img);
				m[i] ^= patterns[k];
			}
		}
		free(m);
	}
	/* Predictions, strings and clocks may legitimately change; structure
	 * may not, so most flips are refused. */
	assert_true(refused > loaded);
	planfile_close(pf);
}

static void load_errors(void **state)
{
	char path[512], err[1024], want[1100];
	test_path(path, sizeof path, "nonexistent.bin");
	assert_null(plan_load(path, err, sizeof err));
	snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
	assert_string_equal(err, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(host_round_trip),
		cmocka_unit_test(host_offset_round_trip),
		cmocka_unit_test(no_host_no_section),
		cmocka_unit_test(ops_sorted_by_finalize),
		cmocka_unit_test(ops_order_is_the_same_from_any_order),
		cmocka_unit_test(signature_hash_pinned),
		cmocka_unit_test(no_correlation_tables),
		cmocka_unit_test(op_names_missing_alloc),
		cmocka_unit_test(op_range_past_alloc),
		cmocka_unit_test(op_position_past_iteration),
		cmocka_unit_test(op_fields),
		cmocka_unit_test(bad_signature_and_allocs),
		cmocka_unit_test(bad_block_tables),
		cmocka_unit_test(bad_host_entries),
		cmocka_unit_test(idle_limit_only_with_nothing_to_do),
		cmocka_unit_test(counts_without_arrays),
		cmocka_unit_test(sections_laid_out_as_documented),
		cmocka_unit_test(missing_sections),
		cmocka_unit_test(section_truncations),
		cmocka_unit_test(provenance_string_with_a_nul),
		cmocka_unit_test(host_section_damage),
		cmocka_unit_test(host_offset_section_damage),
		cmocka_unit_test(shape_section_damage),
		cmocka_unit_test(alloc_before_section_damage),
		cmocka_unit_test(ring_keys_section_damage),
		cmocka_unit_test(framework_cache_section),
		cmocka_unit_test(section_flips),
		cmocka_unit_test(load_errors),
	};
	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
