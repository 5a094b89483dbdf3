/*
 * Unit tests for iteration detection: the period search on plain execution-
 * ID sequences (warm-up, a different first iteration, identical layers, a
 * trailing partial iteration, no repetition), --iteration parsing, and
 * detection on synthetic traces with and without NVTX ranges.
 */
#include "testutil.h"

#include "plan/iter.h"
#include "plan/synth.h"
#include "plan/trace_load.h"

/* Appends reps copies of pat[0..n) to seq at *len. */
static void repeat(uint64_t *seq, size_t *len, const uint64_t *pat, size_t n, size_t reps)
{
	for (size_t r = 0; r < reps; r++)
		for (size_t i = 0; i < n; i++)
			seq[(*len)++] = pat[i];
}

static void period_of_a_plain_loop(void **state)
{
	uint64_t seq[64], pat[] = { 1, 2, 3 };
	size_t n = 0, first, end;
	repeat(seq, &n, pat, 3, 10);
	assert_int_equal(iter_find_period(seq, n, &first, &end), 3);
	assert_int_equal(first, 0);
	assert_int_equal(end, n);
}

static void period_after_warmup(void **state)
{
	uint64_t seq[64] = { 9, 8, 7, 6, 5 }, pat[] = { 1, 2, 3, 4 };
	size_t n = 5, first, end;
	repeat(seq, &n, pat, 4, 8);
	assert_int_equal(iter_find_period(seq, n, &first, &end), 4);
	assert_int_equal(first, 5);
	assert_int_equal(end, n);
}

static void period_with_a_different_first_iteration(void **state)
{
	/* The first iteration has an extra kernel (optimizer state init). */
	uint64_t seq[64] = { 1, 2, 3, 4, 99, 5 }, pat[] = { 1, 2, 3, 4, 5 };
	size_t n = 6, first, end;
	repeat(seq, &n, pat, 5, 6);
	assert_int_equal(iter_find_period(seq, n, &first, &end), 5);
	assert_true(first <= 6);
	assert_int_equal(end, n);
}

static void identical_layers_are_not_the_period(void **state)
{
	/* 6 identical layers forward (10, 11) and backward (20, 21), then the
	 * optimizer: the layer sub-period covers less than the iteration. */
	uint64_t it[64], seq[512];
	size_t m = 0, n = 0, first, end;
	for (int l = 0; l < 6; l++) {
		it[m++] = 10;
		it[m++] = 11;
	}
	for (int l = 0; l < 6; l++) {
		it[m++] = 20;
		it[m++] = 21;
	}
	it[m++] = 30;
	repeat(seq, &n, it, m, 5);
	assert_int_equal(iter_find_period(seq, n, &first, &end), m);
	assert_int_equal(end - first, n);
}

static void trailing_partial_iteration(void **state)
{
	uint64_t seq[64], pat[] = { 1, 2, 3, 4 };
	size_t n = 0, first, end;
	repeat(seq, &n, pat, 4, 6);
	seq[n++] = 1;
	seq[n++] = 2;
	assert_int_equal(iter_find_period(seq, n, &first, &end), 4);
	assert_int_equal(end, n);
}

static void no_repetition(void **state)
{
	uint64_t seq[100];
	size_t first, end;
	for (int i = 0; i < 100; i++)
		seq[i] = (uint64_t)i + 1;
	assert_int_equal(iter_find_period(seq, 100, &first, &end), 0);
	assert_int_equal(iter_find_period(seq, 1, &first, &end), 0);
	/* Unknown IDs (0) are no evidence of a period. */
	memset(seq, 0, sizeof seq);
	assert_int_equal(iter_find_period(seq, 100, &first, &end), 0);
}

static void options_parse(void **state)
{
	struct iter_options o;
	assert_int_equal(iter_options_parse("auto", &o), 0);
	assert_int_equal(o.mode, ITER_MODE_AUTO);
	assert_int_equal(iter_options_parse("12", &o), 0);
	assert_int_equal(o.mode, ITER_MODE_INDEX);
	assert_int_equal(o.index, 12);
	assert_int_equal(iter_options_parse("nvtx:train step", &o), 0);
	assert_int_equal(o.mode, ITER_MODE_NVTX);
	assert_string_equal(o.nvtx_name, "train step");
	const char *bad[] = { "", "x", "-1", "3x", "nvtx:", "Auto" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(iter_options_parse(bad[i], &o), -1);
}

static struct trace *synth_trace(const char *name, const struct synth_params *sp)
{
	char path[512], err[512];
	test_path(path, sizeof path, name);
	if (synth_write(path, sp, err, sizeof err))
		fail_msg("%s", err);
	struct trace *t = trace_load(path, err, sizeof err);
	if (!t)
		fail_msg("%s", err);
	assert_int_equal(t->n_kernels, synth_kernel_count(sp));
	return t;
}

/* Detects t's iterations as SPEC (an --iteration value) asks; must succeed. */
static void detect(struct trace *t, const char *spec, struct iter_result *r)
{
	struct iter_options o;
	char err[512];
	assert_int_equal(iter_options_parse(spec, &o), 0);
	if (iter_detect(t, &o, r, err, sizeof err) != 0)
		fail_msg("%s", err);
}

static void synthetic_trace_by_period(void **state)
{
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct synth_params sp;
		synth_defaults(&sp);
		sp.seed = seed;
		sp.layers = 3 + (uint32_t)seed;
		sp.kernels_per_layer = (uint32_t)seed;
		sp.iterations = 5;
		struct trace *t = synth_trace("period_synth.db", &sp);
		struct iter_result r;
		detect(t, "auto", &r);
		uint64_t per = (uint64_t)sp.layers * (sp.kernels_per_layer + 3) + 1;
		assert_int_equal(r.method, ITER_BY_PERIOD);
		assert_int_equal(r.period, per);
		/* Weights' init and warm-up kernels come before any iteration;
		 * the first iteration differs (optimizer state), so at most
		 * four of the five are whole periods. */
		assert_true(r.warmup >= sp.layers + sp.warmup_kernels);
		assert_true(r.n_iters >= 3 && r.n_iters <= 4);
		assert_true(r.steady);
		assert_int_equal(r.chosen, r.n_iters - 2);
		iter_result_free(&r);
		trace_free(t);
	}
}

static void synthetic_trace_by_nvtx(void **state)
{
	struct synth_params sp;
	synth_defaults(&sp);
	snprintf(sp.nvtx, sizeof sp.nvtx, "step");
	sp.iterations = 4;
	struct trace *t = synth_trace("nvtx_synth.db", &sp);
	struct iter_result r;
	detect(t, "auto", &r);
	assert_int_equal(r.method, ITER_BY_NVTX);
	assert_string_equal(r.nvtx_name, "step");
	assert_int_equal(r.n_iters, 4);
	/* Iteration 0 has the optimizer's one-time kernels: 1 and 2 are the
	 * same, and 2 is the latest with a successor. */
	assert_int_equal(r.iters[1].n, r.iters[2].n);
	assert_true(r.iters[0].n > r.iters[1].n);
	assert_int_equal(r.chosen, 2);
	assert_true(r.steady);
	assert_int_equal(r.n_differ, 0);
	iter_result_free(&r);
	/* Iteration 1 asked for: its predecessor has more kernels, and every
	 * position past iteration 1's end counts as differing. */
	detect(t, "1", &r);
	assert_false(r.steady);
	assert_true(r.n_differ >= r.iters[0].n - r.iters[1].n);
	assert_true(r.first_differ <= r.iters[1].n);
	iter_result_free(&r);
	trace_free(t);
}

/* PyTorch's AdamW kernels can differ in ID from one iteration to the next
 * (stale tensor-list slots): with no steady iteration, the latest that has
 * a successor is planned, never the last, whose allocations run into the
 * tail. */
static void no_steady_iteration(void **state)
{
	struct synth_params sp;
	synth_defaults(&sp);
	snprintf(sp.nvtx, sizeof sp.nvtx, "iteration");
	sp.iterations = 5;
	struct trace *t = synth_trace("unsteady.db", &sp);
	struct iter_result r;
	detect(t, "auto", &r);
	assert_int_equal(r.n_iters, 5);
	for (size_t i = 0; i < r.n_iters; i++)
		t->kernels[r.iters[i].first + 1].exec_id = 0xabc0 + i;
	iter_result_free(&r);
	detect(t, "auto", &r);
	assert_int_equal(r.chosen, 3);
	assert_false(r.steady);
	assert_int_equal(r.n_differ, 1); /* for the report: which position */
	assert_int_equal(r.first_differ, 1);
	iter_result_free(&r);
	trace_free(t);
}

static void whole_trace_when_nothing_repeats(void **state)
{
	struct synth_params sp;
	synth_defaults(&sp);
	sp.iterations = 1;
	sp.warmup_kernels = 0;
	struct trace *t = synth_trace("once.db", &sp);
	struct iter_result r;
	detect(t, "auto", &r);
	assert_int_equal(r.method, ITER_WHOLE);
	assert_int_equal(r.n_iters, 1);
	assert_int_equal(r.iters[0].n, t->n_kernels);
	iter_result_free(&r);
	trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(period_of_a_plain_loop),
		cmocka_unit_test(period_after_warmup),
		cmocka_unit_test(period_with_a_different_first_iteration),
		cmocka_unit_test(identical_layers_are_not_the_period),
		cmocka_unit_test(trailing_partial_iteration),
		cmocka_unit_test(no_repetition),
		cmocka_unit_test(options_parse),
		cmocka_unit_test(synthetic_trace_by_period),
		cmocka_unit_test(synthetic_trace_by_nvtx),
		cmocka_unit_test(no_steady_iteration),
		cmocka_unit_test(whole_trace_when_nothing_repeats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
