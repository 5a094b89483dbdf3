/*
 * plan_sample.h: a small but complete plan for the plan-file tests
 * (test_plan.c, test_planfile.c, test_plan_json.c): every op kind, both
 * allocation origins, a wrap-around deadline, correlation tables; and a
 * variant that keeps allocations on the host.
 */
#ifndef UMKIT_PLAN_SAMPLE_H
#define UMKIT_PLAN_SAMPLE_H

#include <stdlib.h>
#include <string.h>

#include "plan.h"

#define MIB ((uint64_t)1 << 20)

static inline char *sample_strdup(const char *s)
{
	char *d = malloc(strlen(s) + 1);
	return d ? strcpy(d, s) : NULL;
}

/* Six kernels, K0..K5; K1 appears twice (an identical layer). */
static const uint64_t sample_exec_ids[6] = {
	0x1000000000000001ULL, 0x2000000000000002ULL, 0x3000000000000003ULL,
	0x2000000000000002ULL, 0x5000000000000005ULL, 0xf00000000000000fULL,
};

/* Their shapes: K0 and K4 share one (the same kernel, other arguments). */
static const uint64_t sample_shape_ids[6] = {
	0x5a00000000000001ULL, 0x5a00000000000002ULL, 0x5a00000000000003ULL,
	0x5a00000000000002ULL, 0x5a00000000000001ULL, 0x5a0000000000000fULL,
};

/* The allocations of the iteration made before each kernel: the first
 * before K2, the second before K4. */
static const uint64_t sample_alloc_before[6] = { 0, 0, 1, 1, 2, 2 };

/* Ring keys as for a ring of two steps of three kernels whose second
 * kernels use persistent allocations 1 and 2 in turn. */
static const uint64_t sample_ring_keys[6] = { 0, 1, 0, 0, 2, 0 };

static inline struct plan *sample_plan(void)
{
	struct plan *p = plan_create();
	if (!p)
		abort();
	p->signature.n_kernels = 6;
	p->signature.exec_ids = malloc(sizeof sample_exec_ids);
	memcpy(p->signature.exec_ids, sample_exec_ids, sizeof sample_exec_ids);
	p->signature.shape_ids = malloc(sizeof sample_shape_ids);
	memcpy(p->signature.shape_ids, sample_shape_ids, sizeof sample_shape_ids);
	p->signature.alloc_before = malloc(sizeof sample_alloc_before);
	memcpy(p->signature.alloc_before, sample_alloc_before, sizeof sample_alloc_before);
	p->signature.ring_steps = 2;
	p->signature.ring_keys = malloc(sizeof sample_ring_keys);
	memcpy(p->signature.ring_keys, sample_ring_keys, sizeof sample_ring_keys);
	p->signature.n_alloc_sizes = 2;
	p->signature.alloc_sizes = malloc(2 * sizeof(uint64_t));
	p->signature.alloc_sizes[0] = 3 * MIB;
	p->signature.alloc_sizes[1] = MIB + 512;

	p->assume = (struct plan_assumptions){ 6 * MIB, 50000000000ULL, 8000000000ULL, 12000,
					       PLAN_BLOCK_SIZE };
	p->predict = (struct plan_predictions){ 6 * MIB, 9 * MIB, 4 * MIB, 3 * MIB, 1234567 };
	p->provenance.umkit_version = sample_strdup("0.1.0");
	p->provenance.trace_path = sample_strdup("/data/trace.db");
	p->provenance.trace_command = sample_strdup("python train.py --epochs 1");
	p->provenance.iteration_method = sample_strdup("nvtx");
	p->provenance.trace_iteration = 2;
	p->provenance.trace_iterations = 5;

	p->n_allocs = 4;
	p->allocs = malloc(4 * sizeof *p->allocs);
	p->allocs[0] = (struct plan_alloc){ PLAN_ALLOC_PERSISTENT, 1, 8 * MIB };
	p->allocs[1] = (struct plan_alloc){ PLAN_ALLOC_PERSISTENT, 2, 4 * MIB };
	p->allocs[2] = (struct plan_alloc){ PLAN_ALLOC_ITERATION, 1, 3 * MIB };
	p->allocs[3] = (struct plan_alloc){ PLAN_ALLOC_ITERATION, 2, MIB + 512 };

	/* Deliberately unsorted: plan_finalize sorts. */
	const struct plan_op ops[] = {
		{ 5, PLAN_OP_PREFETCH, PLAN_POS_NONE, 0, 1, 0, 4 * MIB }, /* next iteration */
		{ 0, PLAN_OP_PREFETCH, PLAN_POS_NONE, 1, 0, 0, 4 * MIB },
		{ 3, PLAN_OP_EVICT, 1, PLAN_POS_NONE, 0, 0, 4 * MIB },
		{ 4, PLAN_OP_DISCARD, 3, PLAN_POS_NONE, 2, 0, 3 * MIB },
		{ 5, PLAN_OP_DISCARD_PREFETCH, 4, 1, 3, 512, MIB },
		{ 0, PLAN_OP_EVICT, PLAN_POS_NONE, PLAN_POS_NONE, 1, 2 * MIB, 2 * MIB },
	};
	p->n_ops = sizeof ops / sizeof ops[0];
	p->ops = malloc(sizeof ops);
	memcpy(p->ops, ops, sizeof ops);

	struct corr_config cfg;
	corr_config_default(&cfg);
	cfg.rows = 8;
	static const struct corr_block b0[] = { { 0, 0 }, { 0, 1 } };
	static const struct corr_block b1[] = { { 1, 0 }, { 2, 1 } };
	static const struct corr_block b3[] = { { 1, 1 }, { 2, 1 }, { 3, 0 } };
	const struct corr_kernel_blocks kb[6] = { { b0, 2 }, { b1, 2 }, { NULL, 0 },
						  { b3, 3 }, { b0, 1 }, { NULL, 0 } };
	p->corr = corr_build(&cfg, sample_exec_ids, 6, kb, NULL, 0);
	if (!p->corr)
		abort();
	plan_finalize(p);
	return p;
}

/* The sample plan with two more persistent allocations that no op names, 4
 * and 5, both kept on the host. */
static inline struct plan *sample_host_plan(void)
{
	struct plan *p = sample_plan();
	struct plan_alloc *a = realloc(p->allocs, 6 * sizeof *a);
	p->host = malloc(2 * sizeof *p->host);
	if (!a || !p->host)
		abort();
	a[4] = (struct plan_alloc){ PLAN_ALLOC_PERSISTENT, 3, 16 * MIB };
	a[5] = (struct plan_alloc){ PLAN_ALLOC_PERSISTENT, 7, MIB };
	p->allocs = a;
	p->n_allocs = 6;
	p->host[0] = 4;
	p->host[1] = 5;
	p->n_host = 2;
	return p;
}

/* The host plan with allocation 4 (16 MiB) on the host from 4 MiB on, its
 * first two blocks resident; allocation 5 whole. */
static inline struct plan *sample_host_offset_plan(void)
{
	struct plan *p = sample_host_plan();
	p->host_offset = calloc(2, sizeof *p->host_offset);
	if (!p->host_offset)
		abort();
	p->host_offset[0] = 4 * MIB;
	return p;
}

/* The encoded plan.bin image of p (not validated), malloc'ed. */
static inline unsigned char *sample_image(const struct plan *p, size_t *len)
{
	planfile_writer *w = planfile_writer_create();
	void *data = NULL;
	if (!w || plan_encode(p, w) != 0 || planfile_writer_encode(w, &data, len) != 0)
		abort();
	planfile_writer_destroy(w);
	return data;
}

#endif
