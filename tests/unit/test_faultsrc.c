/*
 * Unit tests for charging on-demand migrations to allocations
 * (replay/faultsrc.c): a reused range goes to whichever allocation held it
 * at the migration's time; allocations sharing a block are told apart by
 * address; one spanning many blocks is found from any of them; instances of
 * one iteration allocation add up to one source, a persistent one keeps its
 * id; migrations before any allocation, or outside every one, are counted
 * unattributed; the sources come most bytes first, cut to the room given.
 *
 * And for dating a migration by the launch of the kernel that faulted
 * (replay/faultlaunch.c): with one stream, a fault of the old owner's last
 * kernel, made after the range's reuse, goes to the old owner; among
 * kernels running at once the latest launched dates it, a long kernel
 * started early included; a migration while no kernel ran, or of a kernel
 * whose launch was not noted, keeps its own time.
 */
#include "testutil.h"

#include "plan.h"
#include "replay/allocmap.h"
#include "replay/faultlaunch.h"
#include "replay/faultsrc.h"

#define MB ((uint64_t)1 << 20)
#define BASE ((uint64_t)0x7f0000000000)

/* Allocation id at [address, address + size) as allocmap records it
 * (its blocks among the rest), mapped to no plan allocation. */
static struct alloc_rec rec_at(uint64_t id, uint64_t address, uint64_t size)
{
	allocmap *m = allocmap_create(NULL);
	assert_non_null(m);
	struct alloc_rec *r = allocmap_add(m, id, address, size);
	assert_non_null(r);
	struct alloc_rec copy = *r;
	allocmap_destroy(m);
	return copy;
}

/* Notes allocation id at [address, address + size) at t; iter_ordinal 0
 * makes it persistent, plan_alloc -1 leaves it unnamed. */
static void note(faultsrc *f, uint64_t t, uint64_t id, uint64_t address, uint64_t size, uint64_t iter_ordinal,
		 int32_t plan_alloc)
{
	struct alloc_rec r = rec_at(id, address, size);
	r.iter_ordinal = iter_ordinal;
	r.plan_pers = iter_ordinal ? -1 : plan_alloc;
	r.plan_iter = iter_ordinal ? plan_alloc : -1;
	faultsrc_note(f, t, &r);
}

/* Attributes ev and returns the sources (at most 8) in out. */
static size_t charge(faultsrc *f, const struct fault_event *ev, size_t n, struct fault_source *out,
		     struct fault_totals *tot)
{
	return faultsrc_attribute(f, ev, n, out, 8, tot);
}

static void reused_range_goes_to_its_holder_then(void **state)
{
	(void)state;
	faultsrc *f = faultsrc_create();
	note(f, 10, 1, BASE, 4 * MB, 0, -1);
	note(f, 50, 2, BASE, 1 * MB, 0, -1); /* 1 was freed; 2 reuses its start */
	struct fault_event ev[] = {
		{ 30, BASE + 100, 4096, 0 },     /* before 2 was made: 1's */
		{ 60, BASE + 200, 16384, 0 },    /* after: 2's */
		{ 60, BASE + 3 * MB, 4096, 0 },  /* past 2's end: still 1's range */
		{ 5, BASE, 4096, 0 },            /* before anything was made */
	};
	struct fault_source s[8];
	struct fault_totals tot;
	size_t n = charge(f, ev, 4, s, &tot);
	assert_int_equal(n, 2);
	assert_int_equal(tot.sources, 2);
	assert_int_equal(tot.unattributed, 1);
	assert_int_equal(s[0].alloc_id, 2);
	assert_int_equal(s[0].migrations, 1);
	assert_int_equal(s[0].bytes, 16384);
	assert_int_equal(s[1].alloc_id, 1);
	assert_int_equal(s[1].migrations, 2);
	assert_int_equal(s[1].bytes, 8192);
	faultsrc_destroy(f);
}

static void neighbours_in_one_block_and_spans(void **state)
{
	(void)state;
	faultsrc *f = faultsrc_create();
	note(f, 10, 1, BASE, 4096, 0, 3);
	note(f, 20, 2, BASE + 4096, 4096, 0, -1);
	note(f, 30, 3, BASE + 3 * MB, 9 * MB, 0, -1); /* blocks 1 to 5 */
	struct fault_event ev[] = {
		{ 40, BASE + 10, 4096, 0 },         /* 1, behind the newer 2 */
		{ 40, BASE + 5000, 4096, 0 },       /* 2 */
		{ 40, BASE + 11 * MB, 65536, 0 },   /* 3's last block */
		{ 40, BASE + 12 * MB + 1, 4096, 0 },/* past 3 */
		{ 40, BASE + 8192, 4096, 0 },       /* between 2 and 3, in block 0 */
	};
	struct fault_source s[8];
	struct fault_totals tot;
	size_t n = charge(f, ev, 5, s, &tot);
	assert_int_equal(n, 3);
	assert_int_equal(tot.unattributed, 2);
	assert_int_equal(s[0].alloc_id, 3);
	assert_int_equal(s[0].size, 9 * MB);
	assert_int_equal(s[0].plan_alloc, -1);
	/* 1 and 2 tie on bytes: persistent ones in ordinal (= id) order. */
	assert_int_equal(s[1].alloc_id, 1);
	assert_int_equal(s[1].origin, PLAN_ALLOC_PERSISTENT);
	assert_int_equal(s[1].ordinal, 1);
	assert_int_equal(s[1].plan_alloc, 3);
	assert_int_equal(s[2].alloc_id, 2);
	faultsrc_destroy(f);
}

static void iteration_instances_are_one_source(void **state)
{
	(void)state;
	faultsrc *f = faultsrc_create();
	/* Ordinal 2 of each of three iterations, at a repeating address; a
	 * persistent plan allocation made during the first iteration keeps
	 * its id. */
	note(f, 100, 7, BASE, 2 * MB, 2, 4);
	note(f, 110, 8, BASE + 8 * MB, MB, 3, -1);
	struct alloc_rec pers = rec_at(9, BASE + 16 * MB, MB);
	pers.iter_ordinal = 4;
	pers.plan_pers = 0;
	faultsrc_note(f, 120, &pers);
	note(f, 200, 17, BASE, 2 * MB, 2, 4);
	note(f, 300, 27, BASE, 2 * MB, 2, 4);
	struct fault_event ev[] = {
		{ 150, BASE, 4096, 0 }, { 250, BASE + MB, 4096, 0 }, { 350, BASE, 4096, 0 },
		{ 150, BASE + 8 * MB, 8192, 0 }, { 350, BASE + 16 * MB, 4096, 0 },
	};
	struct fault_source s[8];
	struct fault_totals tot;
	size_t n = charge(f, ev, 5, s, &tot);
	assert_int_equal(n, 3);
	assert_int_equal(tot.unattributed, 0);
	assert_int_equal(s[0].origin, PLAN_ALLOC_ITERATION);
	assert_int_equal(s[0].ordinal, 2);
	assert_int_equal(s[0].alloc_id, 7); /* the first instance charged */
	assert_int_equal(s[0].plan_alloc, 4);
	assert_int_equal(s[0].migrations, 3);
	assert_int_equal(s[0].bytes, 3 * 4096);
	assert_int_equal(s[1].origin, PLAN_ALLOC_ITERATION);
	assert_int_equal(s[1].ordinal, 3);
	assert_int_equal(s[1].plan_alloc, -1);
	assert_int_equal(s[2].origin, PLAN_ALLOC_PERSISTENT);
	assert_int_equal(s[2].ordinal, 9);
	assert_int_equal(s[2].plan_alloc, 0);
	faultsrc_destroy(f);
}

static void most_bytes_first_within_the_room(void **state)
{
	(void)state;
	faultsrc *f = faultsrc_create();
	for (uint64_t i = 0; i < 3; i++)
		note(f, 1, i + 1, BASE + i * 4 * MB, MB, 0, -1);
	struct fault_event ev[] = {
		{ 2, BASE, 10, 0 }, { 2, BASE + 4 * MB, 30, 0 }, { 2, BASE + 8 * MB, 20, 0 },
	};
	struct fault_source s[2];
	struct fault_totals tot;
	assert_int_equal(faultsrc_attribute(f, ev, 3, s, 2, &tot), 2);
	assert_int_equal(tot.sources, 3);
	assert_int_equal(s[0].bytes, 30);
	assert_int_equal(s[1].bytes, 20);
	/* Nothing to charge: no sources, nothing unattributed. */
	assert_int_equal(faultsrc_attribute(f, NULL, 0, s, 2, &tot), 0);
	assert_int_equal(tot.sources, 0);
	assert_int_equal(tot.unattributed, 0);
	faultsrc_destroy(f);
}

static void nothing_noted(void **state)
{
	(void)state;
	faultsrc *f = faultsrc_create();
	struct fault_event ev = { 1, BASE, 4096, 0 };
	struct fault_source s[1];
	struct fault_totals tot;
	assert_int_equal(faultsrc_attribute(f, &ev, 1, s, 1, &tot), 0);
	assert_int_equal(tot.unattributed, 1);
	faultsrc_destroy(f);
}

/* Past FAULTSRC_MAX_ALLOCS the log cannot say who holds an address: a
 * migration from the first allocation left unnoted on is unattributed, not
 * charged to a noted allocation there freed long before (a PyTorch run of
 * 2,000 allocations a step reaches the cap near step 520). */
static void past_the_cap_faults_are_unattributed(void **state)
{
	(void)state;
	faultsrc *f = faultsrc_create();
	note(f, 10, 1, BASE, 4 * MB, 0, 3);
	struct alloc_rec r = rec_at(2, BASE + 64 * MB, 2 * MB);
	for (uint64_t i = 1; i < FAULTSRC_MAX_ALLOCS; i++) {
		r.id = 1 + i;
		faultsrc_note(f, 10 + i, &r);
	}
	uint64_t t = 20 + FAULTSRC_MAX_ALLOCS;
	note(f, t, 2 * FAULTSRC_MAX_ALLOCS, BASE, 4 * MB, 0, -1); /* unnoted, where 1 was */
	struct fault_event ev[] = { { 15, BASE + 4096, 4096, 0 }, { t + 100, BASE + 4096, 4096, 0 } };
	struct fault_source s[8];
	struct fault_totals tot;
	assert_int_equal(charge(f, ev, 2, s, &tot), 1);
	assert_int_equal(s[0].alloc_id, 1); /* the fault before the cap */
	assert_int_equal(tot.unattributed, 1);
	faultsrc_destroy(f);
}

static void early_reuse_goes_to_the_faulting_kernels_owner(void **state)
{
	(void)state;
	faultsrc *f = faultsrc_create();
	/* Host order: A made, K1 launched on it, A freed and its range given
	 * to B at once (one stream), K2 launched on B. The GPU runs K1 after
	 * all of that. */
	note(f, 10, 1, BASE, 2 * MB, 0, -1);
	note(f, 30, 2, BASE, 2 * MB, 0, -1);
	struct kernel_span k[] = { { 200, 300, 6 }, { 100, 200, 5 } };
	struct launch_time l[] = { { 6, 40 }, { 5, 20 } };
	struct fault_event ev[] = {
		{ 150, BASE + 4096, 4096, 0 }, /* K1's: A's */
		{ 250, BASE + 8192, 8192, 0 }, /* K2's: B's */
	};
	assert_int_equal(faultlaunch_date(ev, 2, k, 2, l, 2), 2);
	assert_int_equal(ev[0].launch_ns, 20);
	assert_int_equal(ev[1].launch_ns, 40);
	struct fault_source s[8];
	struct fault_totals tot;
	assert_int_equal(charge(f, ev, 2, s, &tot), 2);
	assert_int_equal(tot.by_launch, 2);
	assert_int_equal(tot.owner_changed, 1); /* by its own time K1's fault was B's */
	assert_int_equal(s[0].alloc_id, 2);
	assert_int_equal(s[0].bytes, 8192);
	assert_int_equal(s[1].alloc_id, 1);
	assert_int_equal(s[1].bytes, 4096);

	/* Undated, the old owner's fault goes to the new one. */
	ev[0].launch_ns = ev[1].launch_ns = 0;
	assert_int_equal(charge(f, ev, 2, s, &tot), 1);
	assert_int_equal(tot.by_launch, 0);
	assert_int_equal(s[0].alloc_id, 2);
	assert_int_equal(s[0].migrations, 2);
	faultsrc_destroy(f);
}

/* by_launch and owner_changed count charged migrations only: one whose
 * address no allocation held at its kernel's launch is unattributed, and
 * charged as of nothing. */
static void unattributed_is_not_charged_by_launch(void **state)
{
	(void)state;
	faultsrc *f = faultsrc_create();
	note(f, 100, 1, BASE, 2 * MB, 0, -1);
	struct fault_event ev[] = {
		{ 200, BASE + 4096, 4096, 50 },  /* launched before A was made */
		{ 300, BASE + 8192, 4096, 150 }, /* A's */
	};
	struct fault_source s[8];
	struct fault_totals tot;
	assert_int_equal(charge(f, ev, 2, s, &tot), 1);
	assert_int_equal(tot.unattributed, 1);
	assert_int_equal(tot.by_launch, 1);
	assert_int_equal(tot.owner_changed, 0);
	assert_int_equal(s[0].migrations, 1);
	faultsrc_destroy(f);
}

static void concurrent_kernels_date_by_the_latest_launch(void **state)
{
	(void)state;
	/* X runs long from the start; Y and Z run beside it, one after the
	 * other; W's launch was never noted. */
	struct kernel_span k[] = {
		{ 0, 1000, 1 },   /* X */
		{ 100, 200, 2 },  /* Y */
		{ 300, 400, 3 },  /* Z */
		{ 2000, 2100, 4 } /* W */
	};
	struct launch_time l[] = { { 3, 60 }, { 1, 5 }, { 2, 50 } };
	struct fault_event ev[] = {
		{ 150, BASE, 4096, 99 }, /* X and Y: Y, launched later */
		{ 350, BASE, 4096, 0 },  /* X and Z: Z */
		{ 500, BASE, 4096, 0 },  /* X alone, past Y and Z */
		{ 1500, BASE, 4096, 0 }, /* nothing runs */
		{ 2050, BASE, 4096, 0 }, /* W, launch unknown */
		{ 1000, BASE, 4096, 0 }, /* X's end: no longer running */
	};
	assert_int_equal(faultlaunch_date(ev, 6, k, 4, l, 3), 3);
	assert_int_equal(ev[0].launch_ns, 50);
	assert_int_equal(ev[1].launch_ns, 60);
	assert_int_equal(ev[2].launch_ns, 5);
	assert_int_equal(ev[3].launch_ns, 0);
	assert_int_equal(ev[4].launch_ns, 0);
	assert_int_equal(ev[5].launch_ns, 0);
	/* Without kernel records nothing is dated. */
	assert_int_equal(faultlaunch_date(ev, 6, NULL, 0, l, 3), 0);
	assert_int_equal(ev[2].launch_ns, 0);
}

/* Kernel records without a launch noted (a program whose first CUDA call
 * is a graph capture stops the following before any launch): nothing is
 * dated, and the empty list of launches is not handed to qsort, whose
 * array glibc declares never NULL (the sanitizer build stops at it). */
static void no_launch_noted_dates_nothing(void **state)
{
	(void)state;
	struct kernel_span k[] = { { 0, 1000, 1 } };
	struct fault_event ev[] = { { 150, BASE, 4096, 99 } };
	assert_int_equal(faultlaunch_date(ev, 1, k, 1, NULL, 0), 0);
	assert_int_equal(ev[0].launch_ns, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reused_range_goes_to_its_holder_then),
		cmocka_unit_test(neighbours_in_one_block_and_spans),
		cmocka_unit_test(iteration_instances_are_one_source),
		cmocka_unit_test(most_bytes_first_within_the_room),
		cmocka_unit_test(nothing_noted),
		cmocka_unit_test(past_the_cap_faults_are_unattributed),
		cmocka_unit_test(unattributed_is_not_charged_by_launch),
		cmocka_unit_test(early_reuse_goes_to_the_faulting_kernels_owner),
		cmocka_unit_test(concurrent_kernels_date_by_the_latest_launch),
		cmocka_unit_test(no_launch_noted_dates_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
