/*
 * Unit tests for the replayer's plan position tracking (replay/match.c) and
 * the foreign-plan rule (replay/sigcheck.c): exact matching over
 * iterations, resynchronisation after removed and inserted kernels whose
 * execution IDs repeat (the history decides), losing the place and finding
 * it again, matching by shape where an ID drifts, and the kernel and
 * allocation rules of the foreign check (memory running out is no
 * disagreement).
 */
#include "testutil.h"
#include "failing_alloc.h"

#include <time.h>

#include "plan.h"
#include "replay/match.h"
#include "replay/sigcheck.h"

enum { A = 0xa, B = 0xb, C = 0xc, D = 0xd, E = 0xe, X = 0x58, U = 0x1000 };

/* Feeds seq[0 .. n) and checks each launch's outcome: want_pos[i] is the
 * expected position, or -1 for a lost launch. */
static void feed(match *m, const uint64_t *seq, const int *want_pos, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct match_step st;
		match_launch(m, seq[i], 0, &st);
		if (want_pos[i] < 0) {
			assert_int_equal(st.how, MATCH_LOST);
			assert_int_equal(st.position, PLAN_POS_NONE);
		} else {
			assert_int_not_equal(st.how, MATCH_LOST);
			assert_int_equal(st.position, want_pos[i]);
		}
	}
}

/* ids[i] = 0x100 + i: a plan of n distinct kernels. */
static void distinct_ids(uint64_t *ids, int n)
{
	for (int i = 0; i < n; i++)
		ids[i] = 0x100 + (uint64_t)i;
}

static void exact_over_iterations(void **state)
{
	const uint64_t ids[4] = { A, B, X, C };
	match *m = match_create(ids, NULL, 4);
	assert_non_null(m);
	for (int it = 0; it < 5; it++) {
		for (uint32_t p = 0; p < 4; p++) {
			struct match_step st;
			match_launch(m, ids[p], 0, &st);
			assert_int_equal(st.how, MATCH_MATCHED);
			assert_int_equal(st.position, p);
			assert_int_equal(st.skipped, 0);
			assert_int_equal(st.iteration_start, p == 0);
			assert_false(st.lost);
		}
	}
	match_destroy(m);
}

static void single_kernel_plan(void **state)
{
	const uint64_t ids[1] = { A };
	match *m = match_create(ids, NULL, 1);
	for (int i = 0; i < 3; i++) {
		struct match_step st;
		match_launch(m, A, 0, &st);
		assert_int_equal(st.how, MATCH_MATCHED);
		assert_true(st.iteration_start);
	}
	struct match_step st;
	match_launch(m, 0, 0, &st); /* ID 0 is unknown: never matches */
	assert_int_equal(st.how, MATCH_LOST);
	match_destroy(m);
}

/* Warm-up kernels the plan does not hold are lost; the first iteration is
 * found from the history once a kernel has a known predecessor. */
static void finds_start_after_warmup(void **state)
{
	const uint64_t ids[4] = { A, B, X, C };
	match *m = match_create(ids, NULL, 4);
	const uint64_t seq[] = { U, U + 1, U + 2, U + 3, U + 4, A, B, X, C, A };
	const int want[] = { -1, -1, -1, -1, -1, -1, 1, 2, 3, 0 };
	feed(m, seq, want, 10);
	match_destroy(m);
}

/*
 * Plan A B X C X D X E. The program drops C in its second iteration: X
 * comes where C was expected, and X is at positions 2, 4 and 6. The history
 * (... E A B X) agrees with the plan before position 4 with one plan kernel
 * of slack, and less well elsewhere: resync to 4, then D X E match.
 */
static void resync_after_removed_kernel(void **state)
{
	const uint64_t ids[8] = { A, B, X, C, X, D, X, E };
	match *m = match_create(ids, NULL, 8);
	feed(m, ids, (const int[]){ 0, 1, 2, 3, 4, 5, 6, 7 }, 8);
	const uint64_t seq[] = { A, B, X, X, D, X, E, A };
	const int want[] = { 0, 1, 2, 4, 5, 6, 7, 0 };
	struct match_step st;
	feed(m, seq, want, 3);
	match_launch(m, seq[3], 0, &st);
	assert_int_equal(st.how, MATCH_RESYNCED);
	assert_int_equal(st.position, 4);
	assert_int_equal(st.skipped, 1);
	feed(m, seq + 4, want + 4, 4);
	match_destroy(m);
}

/*
 * Plan A X B X C X D. The program inserts an extra B after C. B occurs only
 * at position 2, but nothing the program just ran agrees with the plan
 * before position 2 (C is not X): the launch is lost rather than jumping
 * back, and X D match where they were expected.
 */
static void inserted_aliased_kernel_is_lost_not_jumped(void **state)
{
	const uint64_t ids[7] = { A, X, B, X, C, X, D };
	match *m = match_create(ids, NULL, 7);
	feed(m, ids, (const int[]){ 0, 1, 2, 3, 4, 5, 6 }, 7);
	const uint64_t seq[] = { A, X, B, X, C, B, X, D, A };
	const int want[] = { 0, 1, 2, 3, 4, -1, 5, 6, 0 };
	feed(m, seq, want, 9);
	match_destroy(m);
}

/*
 * Plan U, then five identical layers A B C D. The program launches B twice
 * in its third layer. The second B scores as well at its own position as
 * one layer ahead; its own position is the nearer (one back against three
 * ahead), so it goes back there, and the layer goes on where it was,
 * rather than the matcher skipping ahead a layer and losing the end of the
 * iteration.
 */
static void repeated_launch_stays_in_its_layer(void **state)
{
	const uint64_t ids[21] = { U, A, B, C, D, A, B, C, D, A, B, C, D, A, B, C, D, A, B, C, D };
	match *m = match_create(ids, NULL, 21);
	int want0[21];
	for (int i = 0; i < 21; i++)
		want0[i] = i;
	feed(m, ids, want0, 21);
	const uint64_t seq[] = { U, A, B, C, D, A, B, C, D, A, B, B, C, D, A, B, C, D, A, B, C, D, U };
	const int want[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 0 };
	feed(m, seq, want, 11);
	struct match_step st;
	match_launch(m, B, 0, &st);
	assert_int_equal(st.how, MATCH_RESYNCED);
	assert_int_equal(st.position, 10);
	assert_false(st.iteration_start);
	feed(m, seq + 12, want + 12, 11);
	match_destroy(m);
}

/*
 * The same with layers of two kernels: plan U, then eight layers A B; the
 * program launches A twice in its sixth layer (position 11). The history
 * agrees as well with position 11 as with 13, a layer ahead, and both are
 * one position from the expected 12: only the repeat rule (a launch with
 * the last one's ID, supported as well as any, stays there) keeps the
 * matcher in its layer; the nearest tie-break takes the one ahead.
 */
static void repeated_launch_in_a_two_kernel_layer(void **state)
{
	enum { N = 17 };
	uint64_t ids[N];
	int want[N];
	ids[0] = U;
	for (int i = 1; i < N; i++)
		ids[i] = i % 2 ? A : B;
	for (int i = 0; i < N; i++)
		want[i] = i;
	match *m = match_create(ids, NULL, N);
	feed(m, ids, want, N);
	feed(m, ids, want, 12);
	struct match_step st;
	match_launch(m, A, 0, &st);
	assert_int_equal(st.how, MATCH_RESYNCED);
	assert_int_equal(st.position, 11);
	assert_int_equal(st.skipped, 0);
	feed(m, ids + 12, want + 12, N - 12);
	match_launch(m, U, 0, &st);
	assert_int_equal(st.how, MATCH_MATCHED);
	assert_int_equal(st.position, 0);
	assert_true(st.iteration_start);
	match_destroy(m);
}

/*
 * Three identical layers of 12 kernels; in one pass the program runs
 * kernels 5 and 6 again after kernel 9. Kernel 6 then scores as well 4
 * positions back as 8 ahead, a layer on: the nearer wins, and the matcher
 * stays in its layer (nearest ahead used to win, and two such steps moved
 * it a whole layer, every later iteration start 12 kernels early).
 */
static void rerun_kernels_resync_back_not_a_layer_ahead(void **state)
{
	enum { L = 12, N = 3 * L };
	uint64_t ids[N];
	int want[N];
	for (int i = 0; i < N; i++) {
		ids[i] = U + i % L;
		want[i] = i;
	}
	match *m = match_create(ids, NULL, N);
	feed(m, ids, want, N);
	feed(m, ids, want, N);
	feed(m, ids, want, 10);
	struct match_step st;
	match_launch(m, ids[5], 0, &st); /* no predecessor agrees anywhere */
	match_launch(m, ids[6], 0, &st);
	assert_int_equal(st.how, MATCH_RESYNCED);
	assert_int_equal(st.position, 6);
	feed(m, ids + 7, want + 7, N - 7);
	match_launch(m, ids[0], 0, &st);
	assert_int_equal(st.position, 0);
	assert_true(st.iteration_start);
	match_destroy(m);
}

/*
 * The same with more places per ID than the matcher scores
 * (MATCH_CANDIDATES): 70 layers of A B C D X, the program runs C D again
 * after the tenth layer's D. D's nearest supported place is two back, not
 * three ahead in the next layer; the candidates scored must be the
 * nearest either way (session 61's review: walked ahead only, D went a
 * layer ahead whenever its ID had more than 64 places).
 */
static void rerun_kernels_resync_back_past_the_candidates(void **state)
{
	enum { LAYERS = 70, N = 5 * LAYERS };
	static uint64_t ids[N];
	static int want[N];
	for (int i = 0; i < N; i++) {
		ids[i] = U + i % 5;
		want[i] = i;
	}
	assert_true(LAYERS > MATCH_CANDIDATES);
	match *m = match_create(ids, NULL, N);
	feed(m, ids, want, 50);
	struct match_step st;
	match_launch(m, ids[47], 0, &st); /* C again: no predecessor agrees */
	match_launch(m, ids[48], 0, &st); /* D again */
	assert_int_equal(st.how, MATCH_RESYNCED);
	assert_int_equal(st.position, 48);
	match_launch(m, ids[49], 0, &st);
	assert_int_equal(st.position, 49);
	match_destroy(m);
}

/*
 * A kernel replaced by an unknown one: the next kernel resyncs one position
 * ahead on the history with one launch of slack on both sides.
 */
static void resync_after_replaced_kernel(void **state)
{
	const uint64_t ids[6] = { A, B, C, X, D, X };
	match *m = match_create(ids, NULL, 6);
	feed(m, ids, (const int[]){ 0, 1, 2, 3, 4, 5 }, 6);
	/* C replaced by U: expected C, got U (lost), then X expected C again:
	 * X at 3 agrees with B A before it once U is skipped. */
	const uint64_t seq[] = { A, B, U, X, D, X };
	const int want[] = { 0, 1, -1, 3, 4, 5 };
	feed(m, seq, want, 6);
	match_destroy(m);
}

/*
 * Plan A X B X C X. After A X the program runs unknown kernels until the
 * matcher is lost, then C X D...: C alone has no support (its predecessor
 * is unknown), but X after C is placed at 5, where C precedes it, although
 * position 3 is nearer ahead of where the matcher stood.
 */
static void lost_then_history_beats_nearest(void **state)
{
	const uint64_t ids[6] = { A, X, B, X, C, X };
	match *m = match_create(ids, NULL, 6);
	struct match_step st;
	feed(m, ids, (const int[]){ 0, 1 }, 2);
	for (int i = 0; i < MATCH_LOST_AFTER; i++) {
		match_launch(m, U + (uint64_t)i, 0, &st);
		assert_int_equal(st.how, MATCH_LOST);
		assert_int_equal(st.lost, i + 1 >= MATCH_LOST_AFTER);
	}
	match_launch(m, C, 0, &st);
	assert_int_equal(st.how, MATCH_LOST);
	assert_true(st.lost);
	match_launch(m, X, 0, &st);
	assert_int_equal(st.how, MATCH_RESYNCED);
	assert_int_equal(st.position, 5);
	assert_false(st.lost);
	assert_int_equal(st.skipped, 0); /* the place was lost: no ops to replay */
	match_launch(m, A, 0, &st);
	assert_int_equal(st.how, MATCH_MATCHED);
	assert_true(st.iteration_start);
	match_destroy(m);
}

/*
 * Plan S, six layers of A B C D E, T; the recording's fourth layer ran a
 * variant V of B (a stale parameter word changed its ID). The replay runs
 * V in the first layer: the plan holds V at 17, 15 ahead, where the history
 * agrees with the plan as well as here (A before it), but the matcher is on
 * track, so V is lost rather than sending it three layers ahead; C
 * resyncs at 3 and the iteration goes on in place, with no extra iteration
 * start.
 */
static void varying_id_does_not_jump_layers(void **state)
{
	enum { N = 32 };
	uint64_t ids[N] = { 0x5 };
	for (int l = 0; l < 6; l++)
		for (int k = 0; k < 5; k++)
			ids[1 + 5 * l + k] = (uint64_t[]){ A, B, C, D, E }[k];
	ids[17] = U;     /* V */
	ids[N - 1] = 0x7; /* T */
	match *m = match_create(ids, NULL, N);
	int want[N];
	for (int i = 0; i < N; i++)
		want[i] = i;
	feed(m, ids, want, N);
	uint64_t seq[N];
	memcpy(seq, ids, sizeof seq);
	seq[2] = U;
	want[2] = -1;
	for (int i = 0; i < N; i++) {
		struct match_step st;
		match_launch(m, seq[i], 0, &st);
		if (want[i] < 0)
			assert_int_equal(st.how, MATCH_LOST);
		else
			assert_int_equal(st.position, want[i]);
		assert_int_equal(st.iteration_start, i == 0);
		assert_int_equal(st.skipped, i == 3);
	}
	match_destroy(m);
}

/*
 * A matcher that lost its place near the iteration's end and finds it again
 * mid-iteration (here at 16, from 38) has not started an iteration: a new
 * one starts only at one of the first MATCH_NEAR + 1 positions. Counting
 * such re-acquisitions restarted the iteration's allocation ordinals and
 * the foreign-plan check's window in the middle of an iteration. It is
 * found back (half an iteration behind the last place): whether the
 * program wrapped meanwhile, the engine asks its allocations.
 */
static void reacquired_mid_iteration_is_no_start(void **state)
{
	enum { N = 40 };
	uint64_t ids[N];
	int want[N];
	distinct_ids(ids, N);
	for (int i = 0; i < N; i++)
		want[i] = i;
	/* Found at 16, or at 18, half the plan before the last place (38):
	 * back; at 19, less than half: not back. */
	const uint32_t found[3] = { 16, 18, 19 };
	for (int f = 0; f < 3; f++) {
		match *m = match_create(ids, NULL, N);
		feed(m, ids, want, N - 1);
		struct match_step st;
		for (int i = 0; i < MATCH_LOST_AFTER; i++)
			match_launch(m, U + (uint64_t)i, 0, &st);
		assert_true(st.lost);
		match_launch(m, ids[found[f] - 1], 0, &st); /* no support: its predecessor is unknown */
		assert_int_equal(st.how, MATCH_LOST);
		match_launch(m, ids[found[f]], 0, &st);
		assert_int_equal(st.how, MATCH_RESYNCED);
		assert_int_equal(st.position, found[f]);
		assert_false(st.iteration_start);
		assert_int_equal(st.found_back, found[f] + N / 2 <= N - 2);
		for (int i = (int)found[f] + 1; i < N; i++) {
			match_launch(m, ids[i], 0, &st);
			assert_int_equal(st.how, MATCH_MATCHED);
			assert_false(st.iteration_start);
			assert_false(st.found_back);
		}
		match_launch(m, ids[0], 0, &st);
		assert_true(st.iteration_start);
		assert_false(st.found_back);
		match_destroy(m);
	}
}

/* A program whose iterations lack the plan's first 12 kernels, more than
 * MATCH_NEAR: it enters the plan at 13 (12 has no predecessor the plan
 * knows), and each later iteration starts there, 12 lost and 13 resynced.
 * Counted from position 0, no iteration would ever start. */
static void iterations_without_the_first_kernels(void **state)
{
	enum { N = 40, SKIP = 12 };
	uint64_t ids[N];
	distinct_ids(ids, N);
	match *m = match_create(ids, NULL, N);
	for (int it = 0; it < 4; it++) {
		for (int i = SKIP; i < N; i++) {
			struct match_step st;
			match_launch(m, ids[i], 0, &st);
			if (i == SKIP) {
				assert_int_equal(st.how, MATCH_LOST);
				continue;
			}
			assert_int_equal(st.how, i == SKIP + 1 ? MATCH_RESYNCED : MATCH_MATCHED);
			assert_int_equal(st.position, i);
			assert_int_equal(st.iteration_start, it > 0 && i == SKIP + 1);
		}
	}
	match_destroy(m);
}

/* A program whose iterations lack the plan's last 10 kernels, more than
 * MATCH_NEAR: each iteration's first MATCH_LOST_AFTER launches are lost
 * (their predecessors are the program's last kernels, not the plan's) and
 * the next resyncs at 4, which starts the iteration, counted from the
 * launches lost before it. Lacking half the plan, it never starts one. */
static void iterations_without_the_last_kernels(void **state)
{
	uint64_t ids[40];
	distinct_ids(ids, 40);
	/* Plans of 28 and, lacking 10 again, 40 kernels: there the place is
	 * found again half the plan before the last, yet at a start. */
	const int n[3] = { 28, 28, 40 }, runs[3] = { 18, 14, 30 };
	for (int r = 0; r < 3; r++) {
		match *m = match_create(ids, NULL, (uint32_t)n[r]);
		int starts = 0;
		for (int it = 0; it < 5; it++)
			for (int i = 0; i < runs[r]; i++) {
				struct match_step st;
				match_launch(m, ids[i], 0, &st);
				if (it > 0 && i < MATCH_LOST_AFTER) {
					assert_int_equal(st.how, MATCH_LOST);
					continue;
				}
				assert_int_equal(st.position, i);
				if (st.iteration_start) {
					assert_int_equal(i, it ? MATCH_LOST_AFTER : 0);
					starts++;
				}
				/* Found again at an iteration's start: not back. */
				assert_false(st.found_back);
			}
		assert_int_equal(starts, r == 1 ? 1 : 5);
		match_destroy(m);
	}
}

/* The same program, whose very first launch (a warm-up fill, say) has the
 * plan's first ID: it matches position 0 with no support, so the entry is
 * still where the iterations are first placed, and they start there (16:
 * at the wrap 12 is lost and 13-15 may not move the matcher from 0). */
static void unsupported_first_match_is_no_entry(void **state)
{
	enum { N = 40, SKIP = 12 };
	uint64_t ids[N];
	distinct_ids(ids, N);
	match *m = match_create(ids, NULL, N);
	struct match_step st;
	match_launch(m, ids[0], 0, &st);
	assert_int_equal(st.how, MATCH_MATCHED);
	assert_int_equal(st.position, 0);
	int starts = 0;
	for (int it = 0; it < 4; it++)
		for (int i = SKIP; i < N; i++) {
			match_launch(m, ids[i], 0, &st);
			if (st.iteration_start) {
				assert_int_equal(st.position, 16);
				starts++;
			}
		}
	assert_int_equal(starts, 3);
	match_destroy(m);
}

/* A program first placed in the middle of an iteration (the replayer came
 * in late) still matches the plan's first kernel at the wrap, and that
 * starts an iteration. */
static void joined_midway_starts_at_the_first_kernel(void **state)
{
	enum { N = 40 };
	uint64_t ids[N];
	int want[N];
	distinct_ids(ids, N);
	for (int i = 0; i < N; i++)
		want[i] = i < 21 ? -1 : i;
	match *m = match_create(ids, NULL, N);
	feed(m, ids + 20, want + 20, N - 20);
	struct match_step st;
	for (int i = 0; i < N; i++) {
		match_launch(m, ids[i], 0, &st);
		assert_int_equal(st.how, MATCH_MATCHED);
		assert_int_equal(st.iteration_start, i == 0);
	}
	match_destroy(m);
}

/* The program repeats C D: the second C has no support (D never precedes
 * C in the plan), the second D has (C precedes D). A short backward jump is
 * not a new iteration. */
static void backward_jump_is_not_an_iteration(void **state)
{
	const uint64_t ids[8] = { A, B, C, D, E, X, U, U + 1 };
	match *m = match_create(ids, NULL, 8);
	feed(m, ids, (const int[]){ 0, 1, 2, 3 }, 4);
	struct match_step st;
	match_launch(m, C, 0, &st);
	assert_int_equal(st.how, MATCH_LOST);
	match_launch(m, D, 0, &st);
	assert_int_equal(st.how, MATCH_RESYNCED);
	assert_int_equal(st.position, 3);
	assert_int_equal(st.skipped, 0);
	assert_false(st.iteration_start);
	match_launch(m, E, 0, &st);
	assert_int_equal(st.how, MATCH_MATCHED);
	match_destroy(m);
}

/* A plan of 12 kernels whose last two the program runs again after the
 * first two: the resync to 11 is 3 back across the iteration's start, not
 * 9 positions skipped ahead (whose ops the engine would issue early). */
static void rerun_across_the_start_skips_nothing(void **state)
{
	uint64_t ids[12];
	distinct_ids(ids, 12);
	match *m = match_create(ids, NULL, 12);
	feed(m, ids, (const int[]){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, 12);
	feed(m, ids, (const int[]){ 0, 1 }, 2);
	struct match_step st;
	match_launch(m, ids[10], 0, &st); /* what ran before it is not what precedes 10 */
	assert_int_equal(st.how, MATCH_LOST);
	match_launch(m, ids[11], 0, &st);
	assert_int_equal(st.how, MATCH_RESYNCED);
	assert_int_equal(st.position, 11);
	assert_int_equal(st.skipped, 0);
	match_destroy(m);
}

/* One predecessor agreeing with a kernel of slack scores 1, short of the 2
 * a resync needs; one agreeing exactly scores 2. The program's launches
 * after an unknown start: 4 (nothing before it), then 6 (4 precedes it
 * with 5 between: lost), or 5 (placed). */
static void one_slack_predecessor_is_no_support(void **state)
{
	uint64_t ids[20];
	distinct_ids(ids, 20);
	for (int exact = 0; exact < 2; exact++) {
		match *m = match_create(ids, NULL, 20);
		struct match_step st;
		match_launch(m, ids[4], 0, &st);
		assert_int_equal(st.how, MATCH_LOST);
		match_launch(m, ids[exact ? 5 : 6], 0, &st);
		assert_int_equal(st.how, exact ? MATCH_RESYNCED : MATCH_LOST);
		if (exact)
			assert_int_equal(st.position, 5);
		match_destroy(m);
	}
}

/* On track the matcher moves at most MATCH_NEAR positions: at 3 it sees
 * the kernel after the one at 3 + MATCH_NEAR or + MATCH_NEAR + 1, whose
 * two predecessors are the plan's 2 and 3 again (R, S), and resyncs the
 * first, ops of the positions jumped over included, but not the second. */
static void on_track_resync_moves_at_most_match_near(void **state)
{
	enum { N = 24, R = 0x500, S = 0x501 };
	for (uint32_t jump = MATCH_NEAR; jump <= MATCH_NEAR + 1; jump++) {
		uint64_t ids[N];
		distinct_ids(ids, N);
		ids[2] = ids[2 + jump] = R;
		ids[3] = ids[3 + jump] = S;
		match *m = match_create(ids, NULL, N);
		feed(m, ids, (const int[]){ 0, 1, 2, 3 }, 4);
		struct match_step st;
		match_launch(m, ids[4 + jump], 0, &st);
		if (jump == MATCH_NEAR) {
			assert_int_equal(st.how, MATCH_RESYNCED);
			assert_int_equal(st.position, 4 + jump);
			assert_int_equal(st.skipped, jump);
		} else {
			assert_int_equal(st.how, MATCH_LOST);
		}
		match_destroy(m);
	}
}

/* A program that enters the plan at 13 (its first iteration lacks the
 * plan's first 12 kernels), and whose next iteration begins MATCH_NEAR
 * further on, at 20 (lost: nothing before it) and 21, resyncs there on
 * track, past the iteration's end, and starts the iteration: exactly
 * MATCH_NEAR past the entry is near. One further is not. */
static void later_start_match_near_past_the_entry(void **state)
{
	enum { N = 60, SKIP = 12 };
	uint64_t ids[N];
	distinct_ids(ids, N);
	for (int further = 0; further < 2; further++) {
		match *m = match_create(ids, NULL, N);
		struct match_step st;
		for (int i = SKIP; i < N; i++)
			match_launch(m, ids[i], 0, &st);
		assert_int_equal(st.position, N - 1);
		int lost = SKIP + 1 + MATCH_NEAR - 1 + further;
		match_launch(m, ids[lost], 0, &st);
		assert_int_equal(st.how, MATCH_LOST);
		match_launch(m, ids[lost + 1], 0, &st);
		if (further) {
			assert_int_equal(st.how, MATCH_LOST);
		} else {
			assert_int_equal(st.how, MATCH_RESYNCED);
			assert_int_equal(st.position, SKIP + 1 + MATCH_NEAR);
			assert_true(st.iteration_start);
			assert_false(st.found_back);
		}
		match_destroy(m);
	}
}

/* Lost, the matcher scores the places of an ID in order of distance from
 * the expected position, and as many as MATCH_CANDIDATES: in 10 layers
 * of A_i P Q T, lost at 20, the program runs A_9 (lost: unknown kernels
 * before it), then P, whose place supported by A_9 is 37, the ninth
 * nearest of P's ten places. */
static void lost_resync_scores_the_farther_candidates(void **state)
{
	enum { N = 40, P = 0x600, Q = 0x601, T = 0x602 };
	uint64_t ids[N];
	for (int l = 0; l < 10; l++) {
		ids[4 * l] = 0x100 + (uint64_t)l;
		ids[4 * l + 1] = P;
		ids[4 * l + 2] = Q;
		ids[4 * l + 3] = T;
	}
	match *m = match_create(ids, NULL, N);
	struct match_step st;
	for (int i = 0; i < 20; i++)
		match_launch(m, ids[i], 0, &st);
	assert_int_equal(st.position, 19);
	for (int i = 0; i < MATCH_LOST_AFTER; i++)
		match_launch(m, U + (uint64_t)i, 0, &st);
	assert_true(st.lost);
	match_launch(m, ids[36], 0, &st);
	assert_int_equal(st.how, MATCH_LOST);
	match_launch(m, P, 0, &st);
	assert_int_equal(st.how, MATCH_RESYNCED);
	assert_int_equal(st.position, 37);
	match_launch(m, Q, 0, &st);
	assert_int_equal(st.how, MATCH_MATCHED);
	assert_int_equal(st.position, 38);
	match_destroy(m);
}

/* ---- matching by shape ---- */

enum { SA = 0x5a, SB = 0x5b, SM = 0x50 };

static void step_is(match *m, uint64_t id, uint64_t shape, enum match_how how, uint32_t pos)
{
	struct match_step st;
	match_launch(m, id, shape, &st);
	assert_int_equal(st.how, how);
	assert_int_equal(st.position, pos);
}

/* An optimizer's multi-tensor kernels (shape SM) whose IDs drift every
 * iteration (stale pointer words): placed by shape at the expected
 * position, every iteration, and the history then holds the plan's IDs, so
 * a replaced kernel right after still resyncs. Without shapes they are
 * lost, and four in a row lose the place. */
static void drifting_ids_matched_by_shape(void **state)
{
	const uint64_t ids[8] = { A, B, 0x71, 0x72, 0x73, 0x74, C, D };
	const uint64_t shapes[8] = { SA, SB, SM, SM, SM, SM, SA, SB };
	match *m = match_create(ids, shapes, 8);
	for (uint64_t it = 0; it < 3; it++) {
		step_is(m, A, SA, MATCH_MATCHED, 0);
		step_is(m, B, SB, MATCH_MATCHED, 1);
		for (uint32_t p = 2; p < 6; p++)
			step_is(m, 0x100 * (it + 1) + p, SM, MATCH_SHAPED, p);
		/* C replaced by an unknown kernel of another shape: lost;
		 * then D resyncs from the history, which agrees before it. */
		step_is(m, U, SB, MATCH_LOST, PLAN_POS_NONE);
		step_is(m, D, SB, MATCH_RESYNCED, 7);
	}
	match_destroy(m);

	m = match_create(ids, NULL, 8);
	step_is(m, A, SA, MATCH_MATCHED, 0);
	step_is(m, B, SB, MATCH_MATCHED, 1);
	struct match_step st;
	for (int i = 0; i < MATCH_LOST_AFTER; i++)
		match_launch(m, 0x200 + (uint64_t)i, SM, &st);
	assert_int_equal(st.how, MATCH_LOST);
	assert_true(st.lost);
	match_destroy(m);
}

/* A shape places a launch only where the matcher expects one, on track: it
 * never moves the matcher (every layer has the same shapes), a known ID's
 * resync comes first, and once the place is lost a shape does not bring it
 * back. */
static void shape_never_moves_the_matcher(void **state)
{
	const uint64_t ids[8] = { A, B, X, C, A, B, X, D };
	const uint64_t shapes[8] = { SA, SB, SM, SA, SA, SB, SM, SB };
	match *m = match_create(ids, shapes, 8);
	step_is(m, A, SA, MATCH_MATCHED, 0);
	step_is(m, B, SB, MATCH_MATCHED, 1);
	/* At 2 a drifted ID of another shape: lost, not placed. */
	step_is(m, 0x77, SA, MATCH_LOST, PLAN_POS_NONE);
	/* C has the shape of the expected position 2, but its ID resyncs at
	 * 3 (the history agrees with one kernel of slack): the ID wins. */
	step_is(m, C, SM, MATCH_RESYNCED, 3);
	for (int i = 0; i < MATCH_LOST_AFTER; i++)
		step_is(m, 0x300 + (uint64_t)i, 0x99, MATCH_LOST, PLAN_POS_NONE);
	/* Lost: position 4 has this shape, but only an ID finds the place. */
	step_is(m, 0x400, SA, MATCH_LOST, PLAN_POS_NONE);
	match_destroy(m);
}

/* ---- the foreign-plan rule ---- */

static struct plan_signature signature(uint64_t *ids, uint32_t n, uint64_t *sizes, uint32_t ns)
{
	struct plan_signature s = { .n_kernels = n, .exec_ids = ids, .n_alloc_sizes = ns, .alloc_sizes = sizes };
	return s;
}

static void kernels_rule(void **state)
{
	uint64_t ids[10] = { 0 }, sizes[1] = { 1 };
	struct plan_signature sig = signature(ids, 10, sizes, 1);
	/* Launches enough for a plan no window agreed with to be called
	 * foreign: fed after a window agrees, they show it did (an unjudged
	 * plan would be foreign by then). */
	const int no_hit = 10 * 10 + SIGCHECK_NO_HIT_SLACK;
	/* Unplaced warm-up does not count, and opens no window: 505 of them,
	 * not a whole number of windows, so a window opened among them would
	 * span the next launches and fail. Then exactly 5 of 10 placed, from
	 * a placed one: enough. */
	sigcheck *s = sigcheck_create(&sig, true);
	for (int i = 0; i < 505; i++)
		sigcheck_launch(s, false);
	for (int i = 0; i < 10; i++)
		sigcheck_launch(s, i % 2 == 0);
	assert_false(sigcheck_foreign(s));
	for (int i = 0; i < no_hit; i++)
		sigcheck_launch(s, false); /* judged already */
	assert_false(sigcheck_foreign(s));
	sigcheck_destroy(s);
	/* 4 of 10 in every window: foreign once 10 * n + slack launches have
	 * passed since the first placed one. */
	s = sigcheck_create(&sig, true);
	for (int i = 0; i < 7; i++)
		sigcheck_launch(s, false);
	for (int i = 0; i < 10 * 10 + SIGCHECK_NO_HIT_SLACK - 1; i++) {
		sigcheck_launch(s, i % 10 < 4);
		assert_false(sigcheck_foreign(s));
	}
	sigcheck_launch(s, false);
	assert_true(sigcheck_foreign(s));
	sigcheck_destroy(s);
	/* The same, but the window that the last of those launches closes
	 * agrees: a window agreed within them, so the plan is not foreign. */
	s = sigcheck_create(&sig, true);
	for (int i = 0; i < 10 * 10 + SIGCHECK_NO_HIT_SLACK - 10; i++)
		sigcheck_launch(s, i % 10 < 4);
	for (int i = 0; i < 10; i++)
		sigcheck_launch(s, true);
	assert_false(sigcheck_foreign(s));
	for (int i = 0; i < no_hit; i++)
		sigcheck_launch(s, false); /* judged already */
	assert_false(sigcheck_foreign(s));
	sigcheck_destroy(s);
	/* A warm-up kernel the plan also holds opens a window that fails; the
	 * iteration's launches open the next, which agrees. */
	s = sigcheck_create(&sig, true);
	sigcheck_launch(s, true);
	for (int i = 0; i < 30; i++)
		sigcheck_launch(s, false);
	for (int i = 0; i < 10; i++)
		sigcheck_launch(s, i != 3);
	for (int i = 0; i < no_hit; i++)
		sigcheck_launch(s, false); /* judged already */
	assert_false(sigcheck_foreign(s));
	sigcheck_destroy(s);
	/* Never placed: foreign after 10 * n + slack launches. */
	s = sigcheck_create(&sig, true);
	for (int i = 0; i < 10 * 10 + SIGCHECK_NO_HIT_SLACK - 1; i++)
		sigcheck_launch(s, false);
	assert_false(sigcheck_foreign(s));
	sigcheck_launch(s, false);
	assert_true(sigcheck_foreign(s));
	sigcheck_destroy(s);
}

static void window_is_capped(void **state)
{
	static uint64_t ids[5000];
	uint64_t sizes[1] = { 1 };
	struct plan_signature sig = signature(ids, 5000, sizes, 1);
	/* One window of SIGCHECK_WINDOW_MAX launches, not of n_kernels: half
	 * of it placed is enough, one fewer is not. */
	sigcheck *s = sigcheck_create(&sig, true);
	for (int i = 0; i < SIGCHECK_WINDOW_MAX; i++)
		sigcheck_launch(s, i < SIGCHECK_WINDOW_MAX / 2);
	for (int i = 0; i < 10 * 5000 + SIGCHECK_NO_HIT_SLACK; i++)
		sigcheck_launch(s, false);
	assert_false(sigcheck_foreign(s));
	sigcheck_destroy(s);
	s = sigcheck_create(&sig, true);
	for (int i = 0; i < SIGCHECK_WINDOW_MAX; i++)
		sigcheck_launch(s, i < SIGCHECK_WINDOW_MAX / 2 - 1);
	for (int i = 0; i < 10 * 5000 + SIGCHECK_NO_HIT_SLACK; i++)
		sigcheck_launch(s, false);
	assert_true(sigcheck_foreign(s));
	sigcheck_destroy(s);
}

/* Iterations of 20 allocations: 4 gradients (sizes fixed by the model) and
 * 16 activations (sizes scale with the batch). */
static void iteration_sizes(uint64_t *out, uint64_t batch)
{
	for (int i = 0; i < 20; i++)
		out[i] = i < 4 ? 4096u * (i + 1) : batch * 1000u * (i + 1);
}

static void allocations_as_multisets(void **state)
{
	uint64_t ids[2] = { A, B }, want[20], got[21];
	iteration_sizes(want, 8);
	struct plan_signature sig = signature(ids, 2, want, 20);
	/* Another thread's allocations interleaved differently, and one extra
	 * (a resynchronisation moved the start by a kernel): 20 of 21 shared,
	 * so the iteration agrees. */
	sigcheck *s = sigcheck_create(&sig, true);
	sigcheck_iteration_start(s, 0);
	for (int i = 0; i < 20; i++)
		got[i] = want[(i * 7) % 20];
	got[20] = 12345;
	for (int i = 0; i < 21; i++)
		sigcheck_alloc(s, got[i]);
	sigcheck_iteration_start(s, 0);
	for (int it = 0; it < 3; it++) {
		sigcheck_alloc(s, 1);
		sigcheck_iteration_start(s, 0);
	}
	assert_false(sigcheck_foreign(s));
	sigcheck_destroy(s);

	/* Twice the batch: only the gradients match, 3 times: foreign. */
	s = sigcheck_create(&sig, true);
	iteration_sizes(got, 16);
	sigcheck_iteration_start(s, 0);
	for (int it = 0; it < 3; it++) {
		assert_false(sigcheck_foreign(s));
		for (int i = 0; i < 20; i++)
			sigcheck_alloc(s, got[i]);
		sigcheck_iteration_start(s, 0);
	}
	assert_true(sigcheck_foreign(s));
	sigcheck_destroy(s);

	/* The same, judged by kernels alone (the allocations are a cache's
	 * segments): never foreign by its allocations. */
	s = sigcheck_create(&sig, false);
	sigcheck_iteration_start(s, 0);
	for (int it = 0; it < 5; it++) {
		for (int i = 0; i < 20; i++)
			sigcheck_alloc(s, got[i]);
		sigcheck_iteration_start(s, 0);
	}
	assert_false(sigcheck_foreign(s));
	sigcheck_destroy(s);

	/* Every wanted size and then as many again: too many to agree. */
	s = sigcheck_create(&sig, true);
	sigcheck_iteration_start(s, 0);
	for (int it = 0; it < 3; it++) {
		for (int i = 0; i < 40; i++)
			sigcheck_alloc(s, want[i % 20]);
		sigcheck_iteration_start(s, 0);
	}
	assert_true(sigcheck_foreign(s));
	sigcheck_destroy(s);
}

/* Starts found late (engine.c: the allocation count began the iteration
 * while the matcher was lost): the allocations the count took into the new
 * iteration are judged with it, so each window holds one iteration's own.
 * Found 8, 2 and 14 allocations late, the first window agrees; judged
 * where the starts were found, the windows held 28, 14 and 32, none
 * agreed, and the plan was foreign. A window too long to have kept its
 * last allocations leaves the next one unjudged (its first are unknown):
 * only the one after counts. */
static void allocations_of_starts_found_late(void **state)
{
	uint64_t ids[2] = { A, B }, want[20];
	iteration_sizes(want, 8);
	struct plan_signature sig = signature(ids, 2, want, 20);
	const uint64_t late[3] = { 8, 2, 14 };
	for (int moved = 0; moved < 2; moved++) {
		sigcheck *s = sigcheck_create(&sig, true);
		sigcheck_iteration_start(s, 0);
		size_t k = 0;
		for (int it = 0; it < 3; it++) {
			assert_false(sigcheck_foreign(s));
			for (; k < 20 * (size_t)(it + 1) + late[it]; k++)
				sigcheck_alloc(s, want[k % 20]);
			sigcheck_iteration_start(s, moved ? late[it] : 0);
		}
		for (int it = 0; moved && it < 3; it++) { /* the first agreed: judged */
			sigcheck_alloc(s, 1);
			sigcheck_iteration_start(s, 0);
		}
		assert_int_equal(sigcheck_foreign(s), !moved);
		sigcheck_destroy(s);
	}

	sigcheck *s = sigcheck_create(&sig, true);
	sigcheck_iteration_start(s, 0);
	for (int i = 0; i < 50; i++)
		sigcheck_alloc(s, want[i % 20]);
	sigcheck_iteration_start(s, 5); /* too many: one try */
	for (int it = 0; it < 2; it++) {
		for (int i = 0; i < 20; i++)
			sigcheck_alloc(s, 1);
		sigcheck_iteration_start(s, 0); /* unjudged, then a second try */
	}
	assert_false(sigcheck_foreign(s));
	sigcheck_destroy(s);
}

/* Iterations whose sizes could not be kept (memory ran out at their first
 * allocation) are not judged: they were counted as tries that disagreed,
 * and three of them judged the program's own plan foreign. The next
 * iteration with memory is judged, and agrees. */
static void allocations_out_of_memory_not_judged(void **state)
{
	uint64_t ids[2] = { A, B }, want[20];
	iteration_sizes(want, 8);
	struct plan_signature sig = signature(ids, 2, want, 20);
	sigcheck *s = sigcheck_create(&sig, true);
	sigcheck_iteration_start(s, 0);
	for (int it = 0; it < SIGCHECK_ALLOC_TRIES + 1; it++) {
		realloc_fails = true;
		for (int i = 0; i < 20; i++)
			sigcheck_alloc(s, want[i]);
		realloc_fails = false;
		sigcheck_iteration_start(s, 0);
		assert_false(sigcheck_foreign(s));
	}
	for (int i = 0; i < 20; i++)
		sigcheck_alloc(s, want[i]);
	sigcheck_iteration_start(s, 0);
	for (int it = 0; it < SIGCHECK_ALLOC_TRIES; it++) { /* agreed: judged */
		sigcheck_alloc(s, 1);
		sigcheck_iteration_start(s, 0);
	}
	assert_false(sigcheck_foreign(s));
	sigcheck_destroy(s);
}

static void allocations_rule(void **state)
{
	uint64_t ids[2] = { A, B }, sizes[3] = { 100, 200, 300 };
	struct plan_signature sig = signature(ids, 2, sizes, 3);
	/* Allocations before the first iteration start are not compared; a
	 * first iteration with an extra allocation (optimizer state), then
	 * an agreeing one: not foreign. */
	sigcheck *s = sigcheck_create(&sig, true);
	sigcheck_alloc(s, 7);
	sigcheck_iteration_start(s, 0);
	const uint64_t first[4] = { 100, 200, 50, 300 };
	for (int i = 0; i < 4; i++)
		sigcheck_alloc(s, first[i]);
	sigcheck_iteration_start(s, 0);
	for (int i = 0; i < 3; i++)
		sigcheck_alloc(s, sizes[i]);
	sigcheck_iteration_start(s, 0);
	assert_false(sigcheck_foreign(s));
	for (int it = 0; it < 5; it++) { /* judged: later drift is not held against it */
		sigcheck_alloc(s, 1);
		sigcheck_iteration_start(s, 0);
	}
	assert_false(sigcheck_foreign(s));
	sigcheck_destroy(s);

	/* Three complete iterations that disagree (too few, other sizes):
	 * foreign. */
	s = sigcheck_create(&sig, true);
	sigcheck_iteration_start(s, 0);
	const uint64_t bad[3][3] = { { 100, 200, 0 }, { 100, 201, 300 }, { 1, 2, 3 } };
	const int n_bad[3] = { 2, 3, 3 };
	for (int it = 0; it < 3; it++) {
		assert_false(sigcheck_foreign(s));
		for (int i = 0; i < n_bad[it]; i++)
			sigcheck_alloc(s, bad[it][i]);
		sigcheck_iteration_start(s, 0);
	}
	assert_true(sigcheck_foreign(s));
	sigcheck_destroy(s);
}

/* On track, a kernel the program dropped where another layer of the plan,
 * more than MATCH_NEAR away, lacks that kernel: the far place's history
 * agrees exactly (score 2r) and the near one's with one kernel of slack
 * (2r - 1). The near place is where the program is and is allowed; the far
 * one is not (on track). The launch must resync near, not be lost because
 * the best-scoring candidate may not be moved to. */
static void dropped_kernel_near_beats_far_variant(void **state)
{
	(void)state;
	enum { C_ = 0x30, D_ = 0x31, E_ = 0x32, X_ = 0x33, K = 0x40 };
	/* L_full = C D E X K0..K7 (12), twice; then L_noE = C D X K0..K7 (11). */
	uint64_t ids[35];
	int n = 0;
	for (int l = 0; l < 3; l++) {
		ids[n++] = C_;
		ids[n++] = D_;
		if (l < 2)
			ids[n++] = E_;
		ids[n++] = X_;
		for (int k = 0; k < 8; k++)
			ids[n++] = K + (uint64_t)k;
	}
	match *m = match_create(ids, NULL, (uint32_t)n);
	/* The first layer, then the second's C D (positions 0 .. 13). */
	for (int p = 0; p < 14; p++) {
		struct match_step st;
		match_launch(m, ids[p], 0, &st);
		assert_int_equal(st.position, p);
	}
	/* E (position 14) dropped: X is at position 15. */
	struct match_step st;
	match_launch(m, X_, 0, &st);
	assert_int_equal(st.how, MATCH_RESYNCED);
	assert_int_equal(st.position, 15);
	match_launch(m, K, 0, &st);
	assert_int_equal(st.position, 16);
	match_destroy(m);
}

/* Nanoseconds the matcher takes for launches that resync against a plan of
 * n kernels, every other one K: the program's launches are K and an
 * unknown kernel by turns, so each K is scored against K's n / 2 places. */
static uint64_t resync_ns(uint32_t n)
{
	enum { K = 0x50, LAUNCHES = 2000 };
	uint64_t *ids = malloc(n * sizeof *ids);
	assert_non_null(ids);
	for (uint32_t i = 0; i < n; i++)
		ids[i] = i % 2 ? K : 0x60 + i % 4;
	match *m = match_create(ids, NULL, n);
	assert_non_null(m);
	/* The fastest of three rounds: a round the machine preempted says
	 * nothing of the matcher. */
	uint64_t best = UINT64_MAX;
	for (int round = 0; round < 3; round++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < LAUNCHES; i++) {
			struct match_step st;
			match_launch(m, i % 2 ? K : U, 0, &st);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		uint64_t ns = (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
		if (ns < best)
			best = ns;
	}
	match_destroy(m);
	free(ids);
	return best;
}

/* A resync finds an ID's candidates by binary search, however many places
 * the plan gives it (match.h: O(log n + MATCH_CANDIDATES * MATCH_HISTORY)).
 * Walked, the ID's places ahead of the expected position and the end of
 * its run cost a step each: 500,000 places took about 200 times as long
 * as 500 a resync. Compared as a ratio, so that a slow machine or a
 * sanitizer's build slows both. */
static void resync_cost_is_not_linear_in_an_ids_places(void **state)
{
	(void)state;
	uint64_t few = resync_ns(1000), many = resync_ns(1000000);
	assert_true(many < 10 * few);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_over_iterations),
		cmocka_unit_test(single_kernel_plan),
		cmocka_unit_test(finds_start_after_warmup),
		cmocka_unit_test(resync_after_removed_kernel),
		cmocka_unit_test(inserted_aliased_kernel_is_lost_not_jumped),
		cmocka_unit_test(repeated_launch_stays_in_its_layer),
		cmocka_unit_test(repeated_launch_in_a_two_kernel_layer),
		cmocka_unit_test(rerun_kernels_resync_back_not_a_layer_ahead),
		cmocka_unit_test(rerun_kernels_resync_back_past_the_candidates),
		cmocka_unit_test(resync_after_replaced_kernel),
		cmocka_unit_test(lost_then_history_beats_nearest),
		cmocka_unit_test(dropped_kernel_near_beats_far_variant),
		cmocka_unit_test(resync_cost_is_not_linear_in_an_ids_places),
		cmocka_unit_test(iterations_without_the_first_kernels),
		cmocka_unit_test(iterations_without_the_last_kernels),
		cmocka_unit_test(unsupported_first_match_is_no_entry),
		cmocka_unit_test(joined_midway_starts_at_the_first_kernel),
		cmocka_unit_test(backward_jump_is_not_an_iteration),
		cmocka_unit_test(rerun_across_the_start_skips_nothing),
		cmocka_unit_test(varying_id_does_not_jump_layers),
		cmocka_unit_test(reacquired_mid_iteration_is_no_start),
		cmocka_unit_test(one_slack_predecessor_is_no_support),
		cmocka_unit_test(on_track_resync_moves_at_most_match_near),
		cmocka_unit_test(later_start_match_near_past_the_entry),
		cmocka_unit_test(lost_resync_scores_the_farther_candidates),
		cmocka_unit_test(drifting_ids_matched_by_shape),
		cmocka_unit_test(shape_never_moves_the_matcher),
		cmocka_unit_test(kernels_rule),
		cmocka_unit_test(window_is_capped),
		cmocka_unit_test(allocations_rule),
		cmocka_unit_test(allocations_of_starts_found_late),
		cmocka_unit_test(allocations_as_multisets),
		cmocka_unit_test(allocations_out_of_memory_not_judged),
	};
	return cmocka_run_group_tests_name("replay_match", tests, NULL, NULL);
}
