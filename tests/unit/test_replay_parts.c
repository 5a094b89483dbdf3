/*
 * Unit tests for the replay engine's small modules: the allocation map
 * (churn against a reference; persistent and iteration resolution with the
 * previous iteration standing in; sizes that disagree, and no instance
 * from before an iteration that drifted so; previous instances
 * as of the next iteration; iterations begun by the count while the
 * matcher is lost, and the next one's allocations made before a start
 * found past its first kernel), an idle engine's
 * footprint (against a bitmap), the block table,
 * the residency model's victim order, batch coalescing and kind order (a
 * block at the top of the address space added twice too; memory running
 * out while blocks are added, not at the flush), the
 * marker indexes, the cutting of ranges into driver calls, the GPU's
 * busy time per window, and the count of lost execution IDs (most first,
 * bounded).
 */
#include "testutil.h"
#include "failing_alloc.h"

#include "plan.h"
#include "replay/allocmap.h"
#include "replay/batch.h"
#include "replay/calls.h"
#include "replay/blocktab.h"
#include "replay/busy.h"
#include "replay/footprint.h"
#include "replay/lostids.h"
#include "replay/marks.h"
#include "replay/oplog.h"
#include "replay/residency.h"

#define BLK ((uint64_t)2 << 20)
#define MB ((uint64_t)1 << 20)
#define BASE ((uint64_t)0x7f0000000000)

static void allocmap_churn(void **state)
{
	enum { N = 5000 };
	static uint8_t live[N + 1];
	allocmap *m = allocmap_create(NULL);
	uint64_t s = 12345;
	for (int step = 0; step < 200000; step++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t id = 1 + (s >> 33) % N;
		struct alloc_rec r;
		if (live[id]) {
			assert_true(allocmap_remove(m, id, &r));
			assert_true(r.id == id && r.address == id * 4096);
			live[id] = 0;
		} else {
			struct alloc_rec *a = allocmap_add(m, id, id * 4096, 100);
			assert_non_null(a);
			live[id] = 1;
		}
		if (step % 997 == 0) {
			size_t n_live = 0, listed = 0, cursor = 0;
			for (uint64_t k = 1; k <= N; k++) {
				assert_int_equal(allocmap_live(m, k) != NULL, live[k]);
				n_live += live[k];
			}
			for (struct alloc_rec *a; (a = allocmap_next_live(m, &cursor)); listed++)
				assert_true(live[a->id]);
			assert_int_equal(listed, n_live);
		}
	}
	assert_null(allocmap_add(m, 0, 0, 1));
	struct alloc_rec r;
	assert_false(allocmap_remove(m, 0, &r));
	allocmap_destroy(m);
}

/* The footprint against a bitmap: random ranges added, the missing count,
 * the block count and the intervals (sorted, disjoint, not touching)
 * checked after each. */
static void footprint_against_a_bitmap(void **state)
{
	enum { N = 600 };
	static uint8_t in[N + 64];
	footprint *f = footprint_create();
	assert_int_equal(footprint_missing(f, 5, 3), 3);
	assert_int_equal(footprint_add(f, 5, 0), 0);
	assert_int_equal(footprint_blocks(f), 0);
	uint64_t s = 777, total = 0, first, n;
	for (int step = 0; step < 3000; step++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t lo = (s >> 33) % N, len = 1 + (s >> 20) % (step % 3 ? 4 : 40);
		uint64_t missing = 0;
		for (uint64_t b = lo; b < lo + len; b++)
			missing += !in[b];
		assert_int_equal(footprint_missing(f, lo, len), missing);
		if (step % 2)
			continue;
		assert_int_equal(footprint_add(f, lo, len), 0);
		for (uint64_t b = lo; b < lo + len; b++)
			in[b] = 1;
		total += missing;
		assert_int_equal(footprint_blocks(f), total);
		uint64_t counted = 0, prev_end = 0;
		for (size_t i = 0; footprint_interval(f, i, &first, &n); i++) {
			assert_true(n > 0);
			assert_true(i == 0 || first > prev_end); /* a gap between intervals */
			for (uint64_t b = first; b < first + n; b++)
				assert_true(in[b]);
			assert_true(first == 0 || !in[first - 1]);
			assert_false(in[first + n]);
			prev_end = first + n;
			counted += n;
		}
		assert_int_equal(counted, total);
	}
	assert_true(total > N / 2); /* merges of many intervals happened */
	footprint_destroy(f);
}

static void allocmap_blocks(void **state)
{
	allocmap *m = allocmap_create(NULL);
	struct alloc_rec *a = allocmap_add(m, 1, BASE + BLK - 512, 1024); /* straddles */
	assert_true(a->first_block == (BASE >> 21) && a->n_blocks == 2);
	a = allocmap_add(m, 2, BASE, 0); /* size 0 holds one byte */
	assert_int_equal(a->n_blocks, 1);
	a = allocmap_add(m, 3, BASE + 4 * BLK, 3 * BLK);
	assert_int_equal(a->n_blocks, 3);
	assert_false(a->touched);
	/* A corrupt trace's: more blocks than a record counts (its count
	 * once wrapped to 1), or past the end of the address space. */
	assert_null(allocmap_add(m, 4, 0, (1ULL << 53) + BLK));
	assert_null(allocmap_add(m, 5, UINT64_MAX - BLK, 2 * BLK));
	a = allocmap_add(m, 6, 1ULL << 50, 1ULL << 40);
	assert_int_equal(a->n_blocks, 1u << 19);
	allocmap_destroy(m);
}

/* A plan for the allocation map: the signature's iteration allocation
 * sizes, how many of them precede each of n_kernels kernels (before: NULL
 * when the plan does not say), and the plan's allocations. */
static struct plan *allocmap_plan(const uint64_t *sizes, uint32_t n_sizes, const uint64_t *before,
				  uint32_t n_kernels, const struct plan_alloc *allocs, uint32_t n_allocs)
{
	struct plan *p = plan_create();
	assert_non_null(p);
	p->signature.n_kernels = n_kernels;
	p->signature.n_alloc_sizes = n_sizes;
	p->signature.alloc_sizes = malloc(n_sizes * sizeof *sizes);
	p->n_allocs = n_allocs;
	p->allocs = malloc(n_allocs * sizeof *allocs);
	assert_true(p->signature.alloc_sizes && p->allocs);
	memcpy(p->signature.alloc_sizes, sizes, n_sizes * sizeof *sizes);
	memcpy(p->allocs, allocs, n_allocs * sizeof *allocs);
	if (before) {
		p->signature.alloc_before = malloc(n_kernels * sizeof *before);
		assert_non_null(p->signature.alloc_before);
		memcpy(p->signature.alloc_before, before, n_kernels * sizeof *before);
	}
	return p;
}

/* Plan: persistent ordinal 2 (100 B); iteration ordinals 1 (10 B) and 2
 * (20 B). */
static void allocmap_resolution(void **state)
{
	const uint64_t sizes[2] = { 10, 20 };
	const struct plan_alloc allocs[3] = { { PLAN_ALLOC_ITERATION, 2, 20 },
					      { PLAN_ALLOC_PERSISTENT, 2, 100 },
					      { PLAN_ALLOC_ITERATION, 1, 10 } };
	struct plan *p = allocmap_plan(sizes, 2, NULL, 0, allocs, 3);
	allocmap *m = allocmap_create(p);
	struct allocmap_where w;
	struct alloc_rec r;

	allocmap_add(m, 1, 0x1000, 5);
	allocmap_add(m, 2, 0x2000, 100);       /* persistent #2 */
	allocmap_add(m, 3, 0x3000, 10);        /* before any iteration: not counted */
	allocmap_resolve(m, 1, &w);
	assert_int_equal(w.state, ALLOCMAP_LIVE);
	assert_true(w.address == 0x2000 && w.rec && w.rec->id == 2);
	allocmap_resolve(m, 2, &w);
	assert_int_equal(w.state, ALLOCMAP_UNSEEN);

	allocmap_iteration_start(m, 0);
	allocmap_add(m, 4, 0x4000, 10);        /* iteration #1 */
	allocmap_add(m, 5, 0x5000, 21);        /* iteration #2, wrong size */
	allocmap_resolve(m, 2, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.address == 0x4000);
	allocmap_resolve(m, 0, &w);
	assert_int_equal(w.state, ALLOCMAP_UNSEEN);
	assert_true(allocmap_remove(m, 4, &r));
	allocmap_resolve(m, 2, &w);
	assert_true(w.state == ALLOCMAP_FREED && w.address == 0x4000 && !w.rec);

	/* Next iteration: until #1 is made again, the previous one stands in. */
	allocmap_iteration_start(m, 0);
	allocmap_resolve(m, 2, &w);
	assert_true(w.state == ALLOCMAP_FREED && w.address == 0x4000);
	allocmap_add(m, 6, 0x4000, 10);
	allocmap_resolve(m, 2, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.rec->id == 6);
	allocmap_add(m, 7, 0x7000, 20);
	allocmap_resolve(m, 0, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.address == 0x7000);

	/* A previous instance still live when the next iteration starts, freed
	 * during it: the previous instance's state follows. */
	allocmap_iteration_start(m, 0);
	allocmap_resolve(m, 0, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.rec->id == 7);
	assert_true(allocmap_remove(m, 7, &r));
	allocmap_resolve(m, 0, &w);
	assert_int_equal(w.state, ALLOCMAP_FREED);
	assert_true(allocmap_remove(m, 2, &r));
	allocmap_resolve(m, 1, &w);
	assert_int_equal(w.state, ALLOCMAP_FREED);
	allocmap_destroy(m);
	plan_destroy(p);
}

/* The state of plan allocation index now, and its live id where live. */
static void expect_resolved(allocmap *m, uint32_t index, enum allocmap_state state, uint64_t id)
{
	struct allocmap_where w;
	allocmap_resolve(m, index, &w);
	assert_int_equal(w.state, state);
	if (state == ALLOCMAP_LIVE)
		assert_int_equal(w.rec->id, id);
}

/* Plan: iteration ordinal 1 (10 B), also as the previous iteration's
 * instance (PREVIOUS), and persistent ordinal 1 (5 B). */
static struct plan *previous_plan(void)
{
	const uint64_t sizes[1] = { 10 };
	const struct plan_alloc allocs[3] = { { PLAN_ALLOC_PREVIOUS, 1, 10 },
					      { PLAN_ALLOC_ITERATION, 1, 10 },
					      { PLAN_ALLOC_PERSISTENT, 1, 5 } };
	return allocmap_plan(sizes, 1, NULL, 0, allocs, 3);
}

/* previous_plan. Within an iteration the PREVIOUS one is the instance of
 * the iteration before;
 * as of the next iteration's start (allocmap_resolve_next) it is this
 * iteration's, and the others resolve as now. */
static void allocmap_previous_as_of_next_iteration(void **state)
{
	struct plan *p = previous_plan();
	allocmap *m = allocmap_create(p);
	struct allocmap_where w;
	struct alloc_rec r;

	allocmap_add(m, 1, 0x1000, 5);
	allocmap_iteration_start(m, 0);
	allocmap_add(m, 2, 0x2000, 10);
	/* The first iteration's instance: none before it, but the next
	 * iteration's previous one. */
	allocmap_resolve(m, 0, &w);
	assert_int_equal(w.state, ALLOCMAP_UNSEEN);
	allocmap_resolve_next(m, 0, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.rec->id == 2);

	/* Until this iteration makes its own, the next has no previous one. */
	allocmap_iteration_start(m, 0);
	allocmap_resolve_next(m, 0, &w);
	assert_int_equal(w.state, ALLOCMAP_UNSEEN);
	allocmap_add(m, 3, 0x3000, 10);
	assert_true(allocmap_remove(m, 2, &r));
	allocmap_resolve(m, 0, &w);
	assert_true(w.state == ALLOCMAP_FREED && w.address == 0x2000);
	allocmap_resolve_next(m, 0, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.rec->id == 3);
	for (uint32_t i = 1; i < 3; i++) {
		struct allocmap_where now;
		allocmap_resolve(m, i, &now);
		allocmap_resolve_next(m, i, &w);
		assert_true(w.state == ALLOCMAP_LIVE && w.rec == now.rec);
	}
	assert_true(allocmap_remove(m, 3, &r));
	allocmap_resolve_next(m, 0, &w);
	assert_int_equal(w.state, ALLOCMAP_FREED);
	allocmap_destroy(m);
	plan_destroy(p);
}

/* previous_plan. A program whose
 * first allocation of an iteration is not the plan's size (it drifted)
 * maps it to neither plan allocation of that ordinal: not as this
 * iteration's instance, nor as the previous one of the next iteration
 * (a wrong size is never mapped, allocmap.h). The previous iteration's
 * instance, of the plan's size, is still the PREVIOUS one; in the
 * iteration after the drifted one there is none, nor a stand-in for this
 * iteration's, until an iteration makes the plan's size again. */
static void allocmap_previous_of_another_size(void **state)
{
	struct plan *p = previous_plan();
	allocmap *m = allocmap_create(p);
	struct allocmap_where w;
	struct alloc_rec r;

	allocmap_iteration_start(m, 0);
	struct alloc_rec *a = allocmap_add(m, 2, 0x2000, 10);
	assert_true(a->plan_iter == 1 && a->plan_prev == 0);

	allocmap_iteration_start(m, 0);
	a = allocmap_add(m, 3, 0x3000, 11);
	assert_true(a->plan_iter == -1 && a->plan_prev == -1);
	allocmap_resolve_next(m, 0, &w);
	assert_int_equal(w.state, ALLOCMAP_UNSEEN);
	allocmap_resolve(m, 0, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.rec->id == 2);
	/* Freeing the drifted one leaves the PREVIOUS one alone; freeing
	 * that one is seen. */
	assert_true(allocmap_remove(m, 3, &r));
	allocmap_resolve(m, 0, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.rec->id == 2);
	assert_true(allocmap_remove(m, 2, &r));
	allocmap_resolve(m, 0, &w);
	assert_true(w.state == ALLOCMAP_FREED && w.address == 0x2000 && w.size == 10);

	/* Instance 2 is two iterations old now, and its range is 4's. */
	allocmap_iteration_start(m, 0);
	expect_resolved(m, 0, ALLOCMAP_UNSEEN, 0);
	expect_resolved(m, 1, ALLOCMAP_UNSEEN, 0);
	allocmap_add(m, 4, 0x2000, 10);
	expect_resolved(m, 0, ALLOCMAP_UNSEEN, 0);
	expect_resolved(m, 1, ALLOCMAP_LIVE, 4);
	allocmap_iteration_start(m, 0);
	expect_resolved(m, 0, ALLOCMAP_LIVE, 4);
	expect_resolved(m, 1, ALLOCMAP_LIVE, 4);
	allocmap_destroy(m);
	plan_destroy(p);
}

/* Plan of 3 kernels: iteration ordinals 1 (10 B) before kernel 1, 2 (20 B)
 * and 3 (30 B) before kernel 2. */
static void allocmap_start_counts_from_the_plan(void **state)
{
	const uint64_t sizes[3] = { 10, 20, 30 }, before[3] = { 0, 1, 3 };
	const struct plan_alloc allocs[3] = { { PLAN_ALLOC_ITERATION, 1, 10 },
					      { PLAN_ALLOC_ITERATION, 2, 20 },
					      { PLAN_ALLOC_ITERATION, 3, 30 } };
	struct plan *p = allocmap_plan(sizes, 3, before, 3, allocs, 3);
	allocmap *m = allocmap_create(p);
	struct allocmap_where w;

	/* An iteration that starts at kernel 1 (kernel 0 missing): what
	 * follows is ordinal 2, whatever was made before. */
	allocmap_add(m, 1, 0x1000, 10);
	allocmap_iteration_start(m, 1);
	assert_int_equal(allocmap_add(m, 2, 0x2000, 20)->iter_ordinal, 2);
	allocmap_resolve(m, 1, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.rec->id == 2);

	/* Within the iteration the count runs on. */
	allocmap_add(m, 3, 0x3000, 5);
	assert_int_equal(allocmap_add(m, 4, 0x4000, 30)->iter_ordinal, 4);
	allocmap_resolve(m, 2, &w);
	assert_int_equal(w.state, ALLOCMAP_UNSEEN);

	/* A start at kernel 0 counts from 0, as without the plan's counts. */
	allocmap_iteration_start(m, 0);
	assert_int_equal(allocmap_add(m, 6, 0x6000, 10)->iter_ordinal, 1);
	allocmap_resolve(m, 0, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.rec->id == 6);
	allocmap_resolve(m, 1, &w); /* the previous iteration's stands in */
	assert_true(w.state == ALLOCMAP_LIVE && w.rec->id == 2);

	/* A launch placed at kernel 0 of a pass and found to be at kernel 1
	 * instead (a ring's step, replay/engine.c ring_step): what follows
	 * counts on as from kernel 1. */
	allocmap_iteration_start(m, 0);
	allocmap_position_moved(m, 0, 1);
	assert_int_equal(allocmap_add(m, 7, 0x7000, 20)->iter_ordinal, 2);
	allocmap_destroy(m);
	plan_destroy(p);
}

/* Plan of 3 kernels: iteration ordinal 1 (10 B) before kernel 1, also as
 * the previous iteration's instance (PREVIOUS), and 2 (20 B) before kernel
 * 2. While the matcher is lost, the allocation after the plan's two is the
 * next iteration's first; a start found again for that iteration keeps its
 * instances, one for the iteration after it (the count went a whole
 * iteration past the plan's at the start) does not, nor one after the
 * place was found again without a start. */
static void allocmap_lost_count_starts_the_next_iteration(void **state)
{
	const uint64_t sizes[2] = { 10, 20 }, before[3] = { 0, 1, 2 };
	const struct plan_alloc allocs[3] = { { PLAN_ALLOC_ITERATION, 1, 10 },
					      { PLAN_ALLOC_PREVIOUS, 1, 10 },
					      { PLAN_ALLOC_ITERATION, 2, 20 } };
	struct plan *p = allocmap_plan(sizes, 2, before, 3, allocs, 3);
	allocmap *m = allocmap_create(p);
	struct allocmap_where w;

	allocmap_iteration_start(m, 0);
	allocmap_add(m, 1, 0x1000, 10);
	allocmap_add(m, 2, 0x2000, 20);
	/* Lost: the third allocation begins the next iteration. */
	allocmap_place_lost(m, true);
	assert_int_equal(allocmap_add(m, 3, 0x3000, 10)->iter_ordinal, 1);
	expect_resolved(m, 0, ALLOCMAP_LIVE, 3);
	expect_resolved(m, 1, ALLOCMAP_LIVE, 1);
	expect_resolved(m, 2, ALLOCMAP_LIVE, 2); /* the previous stands in */
	allocmap_resolve_next(m, 1, &w);
	assert_true(w.state == ALLOCMAP_LIVE && w.rec->id == 3);
	/* Its start found again at kernel 1: the instances stay, the count
	 * runs on, and the allocation made before is said to be this
	 * iteration's. */
	assert_int_equal(allocmap_iteration_start(m, 1), 1);
	allocmap_place_lost(m, false);
	expect_resolved(m, 0, ALLOCMAP_LIVE, 3);
	expect_resolved(m, 1, ALLOCMAP_LIVE, 1);
	assert_int_equal(allocmap_add(m, 4, 0x4000, 20)->iter_ordinal, 2);
	expect_resolved(m, 2, ALLOCMAP_LIVE, 4);

	/* Lost again through a whole iteration, found at the next one's
	 * start before it allocates: that start is a new iteration. */
	allocmap_place_lost(m, true);
	allocmap_add(m, 5, 0x5000, 10);
	allocmap_add(m, 6, 0x6000, 20);
	expect_resolved(m, 1, ALLOCMAP_LIVE, 3);
	expect_resolved(m, 2, ALLOCMAP_LIVE, 6);
	assert_int_equal(allocmap_iteration_start(m, 0), 0);
	allocmap_place_lost(m, false);
	expect_resolved(m, 1, ALLOCMAP_LIVE, 5);
	expect_resolved(m, 0, ALLOCMAP_LIVE, 5);
	assert_int_equal(allocmap_add(m, 7, 0x7000, 10)->iter_ordinal, 1);
	expect_resolved(m, 0, ALLOCMAP_LIVE, 7);

	/* Lost, the count begins an iteration, and the place is found again
	 * with no start: the next start is the matcher's own. */
	allocmap_place_lost(m, true);
	allocmap_add(m, 8, 0x8000, 20);
	allocmap_add(m, 9, 0x9000, 10);
	expect_resolved(m, 1, ALLOCMAP_LIVE, 7);
	allocmap_place_lost(m, false);
	allocmap_iteration_start(m, 1);
	expect_resolved(m, 1, ALLOCMAP_LIVE, 9);
	assert_int_equal(allocmap_add(m, 10, 0xa000, 20)->iter_ordinal, 2);

	/* On track the count runs past the plan's; a loss noticed after that
	 * counts those allocations as the next iteration's (unmapped). */
	assert_int_equal(allocmap_add(m, 11, 0xb000, 10)->iter_ordinal, 3);
	expect_resolved(m, 0, ALLOCMAP_LIVE, 9);
	allocmap_place_lost(m, true);
	assert_int_equal(allocmap_add(m, 12, 0xc000, 20)->iter_ordinal, 2);
	expect_resolved(m, 2, ALLOCMAP_LIVE, 12);
	/* Not 11, nor 9: the iteration begun at kernel 1 mapped no ordinal 1
	 * of its own, so none stands in. */
	expect_resolved(m, 0, ALLOCMAP_UNSEEN, 0);
	allocmap_destroy(m);
	plan_destroy(p);
}

/* Plan of 5 kernels: three iteration allocations of 10 B, before kernels
 * 2, 3 and 4; ordinal 3 also as the previous iteration's instance
 * (PREVIOUS). While the matcher is lost the count begins an iteration,
 * and the matcher then starts one past kernel 0, nearer a whole iteration
 * past the plan's count there than at it: the program went on into the
 * next iteration. At kernel 1 (none made before it) the count's instances
 * are the previous ones. At kernel 2, after an iteration that made one
 * allocation fewer than the plan, the count put the new iteration's first
 * (made before kernel 2) after that iteration's own, as ordinal 3: it is
 * this iteration's, never the previous instance of ordinal 3, which the
 * iteration before did not make. */
static void allocmap_late_start_after_a_lost_count(void **state)
{
	const uint64_t sizes[3] = { 10, 10, 10 }, before[5] = { 0, 0, 1, 2, 3 };
	const struct plan_alloc allocs[2] = { { PLAN_ALLOC_ITERATION, 3, 10 },
					      { PLAN_ALLOC_PREVIOUS, 3, 10 } };
	struct plan *p = allocmap_plan(sizes, 3, before, 5, allocs, 2);
	allocmap *m = allocmap_create(p);

	allocmap_iteration_start(m, 0);
	for (uint64_t id = 1; id <= 3; id++)
		allocmap_add(m, id, id << 12, 10);
	/* Lost through an iteration of the plan's three, found at the next
	 * one's kernel 1 before it allocates. */
	allocmap_place_lost(m, true);
	for (uint64_t id = 4; id <= 6; id++)
		allocmap_add(m, id, id << 12, 10);
	assert_int_equal(allocmap_iteration_start(m, 1), 0);
	allocmap_place_lost(m, false);
	expect_resolved(m, 1, ALLOCMAP_LIVE, 6);
	expect_resolved(m, 0, ALLOCMAP_LIVE, 6); /* the previous stands in */
	for (uint64_t id = 7; id <= 9; id++)
		allocmap_add(m, id, id << 12, 10);

	/* Lost through an iteration of two; the next one makes its first
	 * before kernel 2, where it is found. */
	allocmap_place_lost(m, true);
	allocmap_add(m, 10, 0xa000, 10);
	allocmap_add(m, 11, 0xb000, 10);
	assert_int_equal(allocmap_add(m, 12, 0xc000, 10)->iter_ordinal, 3);
	assert_int_equal(allocmap_iteration_start(m, 2), 0);
	allocmap_place_lost(m, false);
	/* Not 12, this iteration's own: the one before made no ordinal 3. */
	expect_resolved(m, 1, ALLOCMAP_UNSEEN, 0);
	expect_resolved(m, 0, ALLOCMAP_UNSEEN, 0);
	assert_int_equal(allocmap_add(m, 13, 0xd000, 10)->iter_ordinal, 2);
	allocmap_add(m, 14, 0xe000, 10);
	expect_resolved(m, 0, ALLOCMAP_LIVE, 14);
	expect_resolved(m, 1, ALLOCMAP_UNSEEN, 0);
	allocmap_iteration_start(m, 0);
	expect_resolved(m, 1, ALLOCMAP_LIVE, 14);
	allocmap_destroy(m);
	plan_destroy(p);
}

static void blocktab_lookups(void **state)
{
	blocktab *t = blocktab_create();
	const uint64_t nos[] = { 0, 1, 63, 64, 1u << 20, ((uint64_t)1 << 40) + 5, 7 };
	for (size_t i = 0; i < sizeof nos / sizeof nos[0]; i++) {
		struct block *b = blocktab_get(t, nos[i]);
		assert_true(b->no == nos[i]);
		b->live = (uint32_t)i + 1;
	}
	for (uint64_t c = 0; c < 5000; c++) /* growth keeps earlier blocks in place */
		blocktab_get(t, c * 64 + (1u << 24));
	for (size_t i = 0; i < sizeof nos / sizeof nos[0]; i++)
		assert_int_equal(blocktab_find(t, nos[i])->live, i + 1);
	assert_null(blocktab_find(t, (uint64_t)1 << 50));
	assert_int_equal(blocktab_find(t, 2)->live, 0); /* same chunk as 1: zeroed */
	blocktab_destroy(t);
}

/* Runs end where a chunk of 64 blocks does, and an absent chunk's is
 * skipped whole. */
static void blocktab_runs(void **state)
{
	blocktab *t = blocktab_create();
	blocktab_get(t, 62)->live = 1;
	blocktab_get(t, 65)->live = 2;
	uint32_t n = 10;
	struct block *b = blocktab_find_run(t, 60, &n);
	assert_int_equal(n, 4); /* 60 .. 63 */
	assert_true(b->no == 60 && b[2].no == 62 && b[2].live == 1);
	n = 6;
	b = blocktab_find_run(t, 64, &n);
	assert_int_equal(n, 6);
	assert_true(b[1].no == 65 && b[1].live == 2);
	n = 3;
	assert_non_null(blocktab_find_run(t, 10, &n));
	assert_int_equal(n, 3);
	n = 100;
	assert_null(blocktab_find_run(t, 200, &n)); /* chunk 3 never made */
	assert_int_equal(n, 56);                     /* 200 .. 255 */
	blocktab_destroy(t);
}

static void residency_victims(void **state)
{
	residency *r = residency_create();
	struct block *b[5];
	for (int i = 0; i < 5; i++) {
		b[i] = residency_block(r, (uint64_t)i);
		residency_live_add(r, b[i]);
		residency_set(r, b[i], BLOCK_RESIDENT);
	}
	assert_true(residency_bytes(r) == 5 * BLK);
	residency_touch(r, b[0]); /* oldest first: 1 2 3 4 0 */
	assert_ptr_equal(residency_victim(r, 9, true), b[1]);
	b[1]->pin = 9;            /* pinned by launch 9 */
	b[2]->keep = 12;          /* kept through launch 12 */
	assert_ptr_equal(residency_victim(r, 9, true), b[3]); /* 1 and 2 passed over */
	residency_set(r, b[3], BLOCK_ABSENT);
	assert_ptr_equal(residency_victim(r, 9, true), b[4]);
	residency_set(r, b[4], BLOCK_ABSENT);
	assert_true(residency_live_drop(r, b[0])); /* dead: the first to go */
	assert_ptr_equal(residency_victim(r, 9, true), b[0]);
	residency_set(r, b[0], BLOCK_DISCARDED);
	residency_live_add(r, b[0]); /* a new allocation there, not resident */
	assert_true(residency_bytes(r) == 2 * BLK && residency_peak(r) == 5 * BLK);
	assert_null(residency_victim(r, 9, true));           /* 1 pinned, 2 kept */
	assert_ptr_equal(residency_victim(r, 9, false), b[2]); /* keep yields */
	b[2]->pin = 9;
	assert_null(residency_victim(r, 9, false));          /* all pinned */
	assert_ptr_equal(residency_victim(r, 10, true), b[1]); /* a new launch */
	residency_destroy(r);
}

/* The victim rules the budget's eviction order rests on, each where a
 * slip would still pass residency_victims: of several dead blocks the one
 * that died first goes first; a dead resident block that a new allocation
 * makes live again leaves the dead list (it is no longer free to discard,
 * and goes to the live list's most recently used end), while another
 * allocation in a live block leaves its place alone; a block kept
 * through launch seq is kept for seq itself. */
static void residency_victims_dead_order_revival_and_keep(void **state)
{
	residency *r = residency_create();
	struct block *b[4];
	for (int i = 0; i < 4; i++) {
		b[i] = residency_block(r, (uint64_t)i);
		residency_live_add(r, b[i]);
		residency_set(r, b[i], BLOCK_RESIDENT);
	}
	assert_true(residency_live_drop(r, b[2])); /* dies first */
	assert_true(residency_live_drop(r, b[1]));
	assert_ptr_equal(residency_victim(r, 5, true), b[2]);
	residency_live_add(r, b[2]); /* reallocated while resident */
	assert_ptr_equal(residency_victim(r, 5, true), b[1]);
	residency_live_add(r, b[1]);
	/* Live, oldest first: 0 3 2 1. A second allocation in block 0 is
	 * not a use of it. */
	residency_live_add(r, b[0]);
	assert_ptr_equal(residency_victim(r, 5, true), b[0]);
	b[0]->keep = 5;           /* kept through launch 5: not for it */
	assert_ptr_equal(residency_victim(r, 5, true), b[3]);
	b[3]->pin = 6;            /* passed over below, with 2 and 1 */
	b[2]->pin = 6;
	b[1]->pin = 6;
	assert_ptr_equal(residency_victim(r, 6, true), b[0]); /* 5 is over */
	residency_destroy(r);
}

static void batch_coalesces_in_kind_order(void **state)
{
	oplog *l = oplog_create();
	struct engine_executor x = oplog_executor(l);
	batch *b = batch_create();
	struct engine_stats st = { 0 };
	const uint64_t pre[] = { 7, 3, 4, 5, 10, 4 };
	const struct wait_ref none = { 0, 0 };
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(batch_add(b, ENGINE_OP_PREFETCH, (BASE >> 21) + pre[i], none), 0);
	batch_add(b, ENGINE_OP_EVICT, (BASE >> 21) + 1, (struct wait_ref){ 5, 50 });
	batch_add(b, ENGINE_OP_EVICT, (BASE >> 21) + 2, (struct wait_ref){ 4, 60 });
	batch_add(b, ENGINE_OP_DISCARD, (BASE >> 21) + 20, (struct wait_ref){ 3, 70 });
	batch_add(b, ENGINE_OP_DISCARD, (BASE >> 21) + 21, (struct wait_ref){ 3, 71 });
	batch_flush(b, &x, &st, 42, 6 * BLK);
	size_t n;
	const struct oplog_entry *e = oplog_entries(l, &n);
	assert_int_equal(n, 3);
	assert_int_equal(e[0].op, ENGINE_OP_DISCARD);
	assert_int_equal(e[0].mark, 71); /* same launch: the later marker */
	assert_int_equal(e[1].op, ENGINE_OP_EVICT);
	assert_int_equal(e[1].mark, 50); /* the later launch's marker */
	assert_int_equal(e[1].n, 1);
	assert_true(e[1].ranges[0].address == BASE + BLK && e[1].ranges[0].bytes == 2 * BLK);
	assert_int_equal(e[2].op, ENGINE_OP_PREFETCH);
	assert_int_equal(e[2].mark, 0);
	assert_int_equal(e[2].n, 3); /* 3-5, 7, 10 */
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(e[i].ticket, 42); /* the flush's, on every kind */
		assert_true(e[i].room == 6 * BLK); /* and its room */
	}
	assert_true(e[2].ranges[0].address == BASE + 3 * BLK && e[2].ranges[0].bytes == 3 * BLK);
	assert_true(e[2].ranges[1].address == BASE + 7 * BLK && e[2].ranges[1].bytes == BLK);
	assert_true(e[2].ranges[2].address == BASE + 10 * BLK);
	assert_int_equal(st.ops[ENGINE_OP_PREFETCH], 1);
	assert_true(st.bytes[ENGINE_OP_PREFETCH] == 5 * BLK);
	batch_flush(b, &x, &st, 43, UINT64_MAX); /* empty: nothing issued */
	oplog_entries(l, &n);
	assert_int_equal(n, 3);
	batch_destroy(b);
	oplog_destroy(l);
}

/* A flush forgets its kinds' waits: the next flush's eviction, added
 * waiting for nothing, waits for nothing, not for the marker the one
 * before waited for. */
static void batch_flush_forgets_the_wait(void **state)
{
	oplog *l = oplog_create();
	struct engine_executor x = oplog_executor(l);
	batch *b = batch_create();
	struct engine_stats st = { 0 };
	assert_int_equal(batch_add(b, ENGINE_OP_EVICT, BASE >> 21, (struct wait_ref){ 5, 50 }), 0);
	batch_flush(b, &x, &st, 1, UINT64_MAX);
	assert_int_equal(batch_add(b, ENGINE_OP_EVICT, (BASE >> 21) + 1, (struct wait_ref){ 0, 0 }), 0);
	batch_flush(b, &x, &st, 2, UINT64_MAX);
	size_t n;
	const struct oplog_entry *e = oplog_entries(l, &n);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].mark, 50);
	assert_int_equal(e[1].mark, 0);
	assert_true(e[1].n == 1 && e[1].ranges[0].address == BASE + BLK);
	batch_destroy(b);
	oplog_destroy(l);
}

/* The last block of the address space, whose range ends at 2^64, added
 * twice (and its neighbour) is still one range of two blocks. */
static void batch_coalesces_at_the_top(void **state)
{
	oplog *l = oplog_create();
	struct engine_executor x = oplog_executor(l);
	batch *b = batch_create();
	struct engine_stats st = { 0 };
	const uint64_t top = UINT64_MAX >> BLOCK_SHIFT;
	const struct wait_ref none = { 0, 0 };
	batch_add(b, ENGINE_OP_EVICT, top, none);
	batch_add(b, ENGINE_OP_EVICT, top - 1, none);
	batch_add(b, ENGINE_OP_EVICT, top, none);
	batch_flush(b, &x, &st, 1, UINT64_MAX);
	size_t n;
	const struct oplog_entry *e = oplog_entries(l, &n);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].n, 1);
	assert_true(e[0].ranges[0].address == (top - 1) << BLOCK_SHIFT && e[0].ranges[0].bytes == 2 * BLK);
	assert_true(st.bytes[ENGINE_OP_EVICT] == 2 * BLK);
	batch_destroy(b);
	oplog_destroy(l);
}

/* The executor of batch_flush_allocates_nothing: counts calls and bytes. */
struct issued {
	size_t calls, ranges;
	uint64_t bytes;
};

static void count_issue(void *ctx, enum engine_op op, const struct engine_range *r, size_t n, uint64_t mark,
			uint64_t ticket, uint64_t room)
{
	struct issued *is = ctx;
	is->calls++;
	is->ranges += n;
	for (size_t i = 0; i < n; i++)
		is->bytes += r[i].bytes;
}

/* Memory running out: the block the batch has no room for is refused where
 * it is added (the engine then leaves its state as it was), and every
 * block added is issued and counted at the flush, which allocates nothing.
 * The flush grew its ranges itself, and when that failed it dropped the
 * kind's whole batch, uncounted, while the engine took its blocks for
 * moved. */
static void batch_flush_allocates_nothing(void **state)
{
	batch *b = batch_create();
	struct engine_stats st = { 0 };
	struct issued is = { 0 };
	struct engine_executor x = { .ctx = &is, .issue = count_issue };
	const struct wait_ref none = { 0, 0 };
	const uint64_t first = BASE >> BLOCK_SHIFT;
	assert_int_equal(batch_add(b, ENGINE_OP_PREFETCH, first, none), 0);
	realloc_fails = true;
	size_t added = 1; /* every other block: a range each */
	while (added < 1000 && batch_add(b, ENGINE_OP_PREFETCH, first + 2 * added, none) == 0)
		added++;
	assert_true(added < 1000); /* room ran out */
	batch_flush(b, &x, &st, 1, UINT64_MAX);
	realloc_fails = false;
	assert_int_equal(is.calls, 1);
	assert_int_equal(is.ranges, added);
	assert_true(is.bytes == added * BLK);
	assert_int_equal(st.ops[ENGINE_OP_PREFETCH], 1);
	assert_true(st.bytes[ENGINE_OP_PREFETCH] == added * BLK);
	batch_destroy(b);
}

static void marker_indexes(void **state)
{
	struct plan *p = plan_create();
	p->signature.n_kernels = 4;
	p->n_ops = 1;
	p->ops = calloc(1, sizeof *p->ops);
	p->ops[0] = (struct plan_op){ 3, PLAN_OP_EVICT, 1, PLAN_POS_NONE, 0, 0, 1 };
	marks *m = marks_create(p);
	assert_false(marks_position_wanted(m, 0));
	assert_true(marks_position_wanted(m, 1));
	assert_false(marks_position_wanted(m, PLAN_POS_NONE));
	assert_int_equal(marks_of_position(m, 1).mark, 0);
	marks_note(m, 10, 1, 100);
	marks_note(m, 11, PLAN_POS_NONE, 101);
	assert_true(marks_of_position(m, 1).mark == 100 && marks_of_position(m, 1).seq == 10);
	assert_int_equal(marks_of_launch(m, 11).mark, 101);
	assert_int_equal(marks_of_launch(m, 12).mark, 0);
	marks_note(m, 10 + MARKS_RING, 1, 200); /* the ring forgets launch 10 */
	assert_int_equal(marks_of_launch(m, 10).mark, 0);
	assert_int_equal(marks_of_position(m, 1).mark, 200);
	/* Noted out of order (launches on two threads): an older launch's
	 * marker never replaces a newer one's at the position, which an op
	 * after it must wait for. */
	marks_note(m, 9 + MARKS_RING, 1, 150);
	assert_int_equal(marks_of_launch(m, 9 + MARKS_RING).mark, 150);
	assert_true(marks_of_position(m, 1).mark == 200 && marks_of_position(m, 1).seq == 10 + MARKS_RING);
	assert_int_equal(marks_of_launch(m, 0).mark, 0);
	marks_destroy(m);
	plan_destroy(p);

	struct wait_ref none = { 0, 0 }, a = { 5, 9 }, b = { 5, 7 }, c = { 6, 1 };
	assert_int_equal(wait_later(none, a).mark, 9);
	assert_int_equal(wait_later(a, none).mark, 9);
	assert_int_equal(wait_later(a, b).mark, 9);
	assert_int_equal(wait_later(b, a).mark, 9);
	assert_int_equal(wait_later(a, c).mark, 1);
}

/* ---- calls_split: ranges cut into driver calls ---- */

#define SEG_A 0x200000000ULL /* mapping 1: 8 MiB; mapping 2 follows it at once */
#define SEG_B (SEG_A + 8 * MB)
#define SEG_C (SEG_B + 8 * MB + 4 * MB) /* after a 4 MiB hole */

static uint64_t two_mappings_and_a_hole(void *ctx, uint64_t address, uint64_t bytes)
{
	static const uint64_t maps[3][2] = { { SEG_A, 8 * MB }, { SEG_B, 8 * MB }, { SEG_C, 8 * MB } };
	for (int i = 0; i < 3; i++)
		if (address >= maps[i][0] && address < maps[i][0] + maps[i][1]) {
			uint64_t left = maps[i][0] + maps[i][1] - address;
			return left < bytes ? left : bytes;
		}
	return 0;
}

struct emitted {
	struct engine_range r[64];
	size_t calls[16], n, n_calls;
};

static void record_call(void *ctx, const struct engine_range *r, size_t n)
{
	struct emitted *e = ctx;
	assert_true(n > 0 && e->n + n <= 64 && e->n_calls < 16);
	for (size_t i = 0; i < n; i++)
		e->r[e->n++] = r[i];
	e->calls[e->n_calls++] = n;
}

static void calls_split_by_mapping_and_size(void **state)
{
	static struct engine_range piece[CALLS_MAX_RANGES];
	struct emitted e = { 0 };
	struct calls_target t = { &e, two_mappings_and_a_hole, record_call, piece };
	/* One coalesced range over both mappings and the hole, into the third;
	 * and a second range within the third. */
	const struct engine_range in[2] = { { SEG_A + 4 * MB, 22 * MB }, { SEG_C + 6 * MB, 2 * MB } };
	assert_int_equal(calls_split(in, 2, UINT64_MAX, &t), 4 * MB);
	assert_int_equal(e.n_calls, 1);
	assert_int_equal(e.n, 4);
	assert_true(e.r[0].address == SEG_A + 4 * MB && e.r[0].bytes == 4 * MB);
	assert_true(e.r[1].address == SEG_B && e.r[1].bytes == 8 * MB);
	assert_true(e.r[2].address == SEG_C && e.r[2].bytes == 6 * MB);
	assert_true(e.r[3].address == SEG_C + 6 * MB && e.r[3].bytes == 2 * MB);

	/* At most 6 MiB per call: pieces are cut, and no call exceeds it. */
	memset(&e, 0, sizeof e);
	assert_int_equal(calls_split(in, 2, 6 * MB, &t), 4 * MB);
	assert_int_equal(e.n_calls, 4);
	size_t at = 0;
	uint64_t total = 0;
	for (size_t c = 0; c < e.n_calls; c++) {
		uint64_t bytes = 0;
		for (size_t i = 0; i < e.calls[c]; i++)
			bytes += e.r[at++].bytes;
		assert_true(bytes <= 6 * MB);
		total += bytes;
	}
	assert_int_equal(total, 20 * MB);
	assert_true(e.r[0].address == SEG_A + 4 * MB && e.r[0].bytes == 4 * MB);
	assert_true(e.r[1].address == SEG_B && e.r[1].bytes == 2 * MB);

	/* Without an extent function everything is one mapping. */
	memset(&e, 0, sizeof e);
	t.extent = NULL;
	assert_int_equal(calls_split(in, 1, UINT64_MAX, &t), 0);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.r[0].bytes, 22 * MB);
}

static void count_call(void *ctx, const struct engine_range *r, size_t n)
{
	size_t *calls = ctx;
	assert_true(calls[0] < 3);
	calls[1 + calls[0]++] = n;
}

static void calls_split_caps_ranges_per_call(void **state)
{
	static struct engine_range in[CALLS_MAX_RANGES + 5], piece[CALLS_MAX_RANGES];
	for (size_t i = 0; i < CALLS_MAX_RANGES + 5; i++)
		in[i] = (struct engine_range){ SEG_A + i * 4 * MB, 2 * MB };
	size_t calls[4] = { 0 }; /* count, then ranges per call */
	struct calls_target t = { calls, NULL, count_call, piece };
	calls_split(in, CALLS_MAX_RANGES + 5, UINT64_MAX, &t);
	assert_int_equal(calls[0], 2);
	assert_int_equal(calls[1], CALLS_MAX_RANGES);
	assert_int_equal(calls[2], 5);
}

/* Random overlapping intervals on a small clock, against a bitmap of the
 * covered nanoseconds: merged, they are disjoint and ascending, and every
 * window's covered time is the bitmap's count. */
static void lostids_most_first_and_bounded(void **state)
{
	(void)state;
	lostids *l = lostids_create();
	assert_non_null(l);
	struct lost_id top[4];
	struct lost_totals tot;
	assert_int_equal(lostids_top(l, top, 4, &tot), 0);
	assert_int_equal(tot.launches, 0);
	for (uint64_t i = 0; i < 5; i++)
		lostids_count(l, 0xbeef);
	for (uint64_t i = 0; i < 3; i++) {
		lostids_count(l, 0xcafe);
		lostids_count(l, 0xab);
	}
	lostids_count(l, 7);
	assert_int_equal(lostids_top(l, top, 3, &tot), 0); /* pending until the iteration ends */
	lostids_iteration_end(l, true);
	assert_int_equal(lostids_top(l, top, 3, &tot), 3);
	assert_int_equal(tot.launches, 12);
	assert_int_equal(tot.distinct, 4);
	assert_int_equal(top[0].exec_id, 0xbeef);
	assert_int_equal(top[0].launches, 5);
	assert_int_equal(top[1].exec_id, 0xab); /* a tie: the smaller ID first */
	assert_int_equal(top[2].exec_id, 0xcafe);
	/* Past the cap, new IDs count in the total only; known ones still
	 * count in full. */
	for (uint64_t id = 100; id < 100 + 2 * LOSTIDS_CAP; id++)
		lostids_count(l, id);
	lostids_count(l, 7);
	lostids_iteration_end(l, true);
	/* A dropped iteration's launches count nowhere. */
	lostids_count(l, 7);
	lostids_iteration_end(l, false);
	/* Nor do those of an iteration that never ends. */
	lostids_count(l, 7);
	assert_int_equal(lostids_top(l, top, 4, &tot), 4);
	assert_int_equal(tot.distinct, LOSTIDS_CAP);
	assert_int_equal(tot.launches, 12 + 2 * LOSTIDS_CAP + 1);
	assert_int_equal(top[3].exec_id, 7);
	assert_int_equal(top[3].launches, 2);
	lostids_destroy(l);
}

static void busy_matches_a_bitmap(void **state)
{
	enum { T = 600, N = 40 };
	uint64_t s = 99;
	for (int round = 0; round < 300; round++) {
		struct busy_interval v[N];
		bool on[T] = { false };
		size_t n = (size_t)(round % N);
		for (size_t i = 0; i < n; i++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			uint64_t a = (s >> 33) % (T - 100), len = (s >> 20) % 100;
			v[i] = (struct busy_interval){ a, a + len };
			for (uint64_t t = a; t < a + len; t++)
				on[t] = true;
		}
		size_t k = busy_merge(v, n);
		for (size_t i = 1; i < k; i++)
			assert_true(v[i - 1].end < v[i].start);
		for (uint64_t from = 0; from < T; from += 37) {
			for (uint64_t to = from; to <= T; to += 53) {
				uint64_t want = 0;
				for (uint64_t t = from; t < to; t++)
					want += on[t];
				assert_int_equal(busy_within(v, k, from, to), want);
			}
			assert_int_equal(busy_within(v, k, from + 10, from), 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allocmap_churn),
		cmocka_unit_test(allocmap_blocks),
		cmocka_unit_test(allocmap_resolution),
		cmocka_unit_test(allocmap_previous_as_of_next_iteration),
		cmocka_unit_test(allocmap_previous_of_another_size),
		cmocka_unit_test(allocmap_start_counts_from_the_plan),
		cmocka_unit_test(allocmap_lost_count_starts_the_next_iteration),
		cmocka_unit_test(allocmap_late_start_after_a_lost_count),
		cmocka_unit_test(footprint_against_a_bitmap),
		cmocka_unit_test(blocktab_lookups),
		cmocka_unit_test(blocktab_runs),
		cmocka_unit_test(residency_victims),
		cmocka_unit_test(residency_victims_dead_order_revival_and_keep),
		cmocka_unit_test(batch_coalesces_in_kind_order),
		cmocka_unit_test(batch_flush_forgets_the_wait),
		cmocka_unit_test(batch_coalesces_at_the_top),
		cmocka_unit_test(batch_flush_allocates_nothing),
		cmocka_unit_test(marker_indexes),
		cmocka_unit_test(calls_split_by_mapping_and_size),
		cmocka_unit_test(calls_split_caps_ranges_per_call),
		cmocka_unit_test(busy_matches_a_bitmap),
		cmocka_unit_test(lostids_most_first_and_bounded),
	};
	return cmocka_run_group_tests_name("replay_parts", tests, NULL, NULL);
}
