/*
 * Unit tests for iteration detection: the period search on plain execution-
 * ID sequences (warm-up, a different first iteration, identical layers, a
 * trailing partial iteration, no repetition), --iteration parsing, and
 * detection on synthetic traces with and without NVTX ranges, and persistent
 * buffers used in rotation.
 */
#include "testutil.h"

#include "plan/iter.h"
#include "plan/synth.h"
#include "plan/trace_load.h"
#include "sql_trace.h"

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

/* The usual names match in any case: "Step" is "step". */
static void synthetic_trace_by_nvtx(void **state)
{
	for (int upper = 0; upper < 2; upper++) {
		struct synth_params sp;
		synth_defaults(&sp);
		snprintf(sp.nvtx, sizeof sp.nvtx, upper ? "Step" : "step");
		sp.iterations = 4;
		struct trace *t = synth_trace("nvtx_synth.db", &sp);
		struct iter_result r;
		detect(t, "auto", &r);
		assert_int_equal(r.method, ITER_BY_NVTX);
		assert_string_equal(r.nvtx_name, "step");
		assert_int_equal(r.n_iters, 4);
		/* Iteration 0 has the optimizer's one-time kernels: 1 and 2
		 * are the same, and 2 is the latest with a successor. */
		assert_int_equal(r.iters[1].n, r.iters[2].n);
		assert_true(r.iters[0].n > r.iters[1].n);
		assert_int_equal(r.chosen, 2);
		assert_true(r.steady);
		assert_int_equal(r.n_differ, 0);
		iter_result_free(&r);
		/* Iteration 1 asked for: its predecessor has more kernels, and
		 * every position past iteration 1's end counts as differing. */
		detect(t, "1", &r);
		assert_false(r.steady);
		assert_true(r.n_differ >= r.iters[0].n - r.iters[1].n);
		assert_true(r.first_differ <= r.iters[1].n);
		iter_result_free(&r);
		trace_free(t);
	}
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

/*
 * A trace in memory of `launches` launches of one kernel (one execution
 * ID), launch i touching an accumulator every launch shares (allocation
 * 0, the first made) and persistent buffer i % ring (allocations 1 ..
 * ring, same-sized; all allocated before the first launch, never freed)
 * and, with fresh, also a scratch allocation of its own made just before
 * it and freed just after it. stray_at (if below launches) touches buffer
 * 0 as well.
 */
struct ring {
	struct trace t;
	struct trace_kernel k[256];
	struct trace_alloc a[1 + 8 + 256];
	uint32_t arg_first[257], arg_alloc[4 * 256];
};

static void ring_trace(struct ring *r, size_t ring, size_t launches, bool fresh, size_t stray_at)
{
	memset(r, 0, sizeof *r);
	assert_true(launches <= 256 && ring <= 8);
	struct trace *t = &r->t;
	t->path = "ring.db";
	t->kernels = r->k;
	t->allocs = r->a;
	t->arg_first = r->arg_first;
	t->arg_alloc = r->arg_alloc;
	for (size_t b = 0; b <= ring; b++)
		r->a[t->n_allocs++] = (struct trace_alloc){ .id = b + 1, .size = 1 << 20,
							    .alloc_ns = 0, .free_ns = TRACE_NS_NEVER };
	for (size_t i = 0; i < launches; i++) {
		int64_t at = 1000 * (int64_t)(i + 1);
		r->k[i] = (struct trace_kernel){ .exec_id = 42, .launch_ns = at, .shape_id = 7 };
		r->arg_first[i] = (uint32_t)t->n_args;
		r->arg_alloc[t->n_args++] = 0;
		if (i == stray_at && i % ring != 0)
			r->arg_alloc[t->n_args++] = 1;
		r->arg_alloc[t->n_args++] = (uint32_t)(1 + i % ring);
		if (fresh) {
			r->a[t->n_allocs] = (struct trace_alloc){ .id = t->n_allocs + 1, .size = 4096,
								   .alloc_ns = at - 10, .free_ns = at + 10 };
			r->arg_alloc[t->n_args++] = (uint32_t)t->n_allocs++;
		}
	}
	t->n_kernels = launches;
	r->arg_first[launches] = (uint32_t)t->n_args;
}

/* A loop over four same-sized buffers in turn repeats its execution IDs at
 * every launch but its memory once around the ring: the period is the
 * ring's, or the plan would use one buffer and leave three idle. */
static void ring_of_buffers_is_the_period(void **state)
{
	static struct ring r;
	for (int fresh = 0; fresh <= 1; fresh++) {
		ring_trace(&r, 4, 80, fresh, SIZE_MAX);
		struct iter_result it;
		detect(&r.t, "auto", &it);
		assert_int_equal(it.method, ITER_BY_PERIOD);
		assert_int_equal(it.period, 4);
		assert_int_equal(it.rotation, 4);
		assert_int_equal(it.n_iters, 20);
		assert_true(it.steady);
		/* Each step's key is its own buffer, which tells the replayer
		 * where in the ring a launch is; not the accumulator, which
		 * every step uses and which comes first. */
		assert_non_null(it.ring_keys);
		for (size_t j = 0; j < 4; j++)
			assert_int_equal(it.ring_keys[j], r.a[1 + (it.iters[0].first + j) % 4].id);
		iter_result_free(&it);
	}
	/* One buffer used throughout: the IDs' own period stands. */
	ring_trace(&r, 1, 80, true, SIZE_MAX);
	struct iter_result it;
	detect(&r.t, "auto", &it);
	assert_int_equal(it.period, 1);
	assert_int_equal(it.rotation, 1);
	assert_null(it.ring_keys);
	iter_result_free(&it);
}

/* Memory that repeats at no multiple of the IDs' period (one stray access)
 * leaves the period as the IDs give it. */
static void ring_not_found_keeps_the_ids_period(void **state)
{
	static struct ring r;
	struct iter_result it;
	ring_trace(&r, 4, 80, false, 41);
	detect(&r.t, "auto", &it);
	assert_int_equal(it.period, 1);
	assert_int_equal(it.rotation, 1);
	iter_result_free(&it);
	/* Fewer than two turns of the ring: no evidence of it. */
	ring_trace(&r, 4, 7, false, SIZE_MAX);
	detect(&r.t, "auto", &it);
	assert_int_equal(it.period, 1);
	iter_result_free(&it);
}

/* Two 'batch' ranges made before the first launch (a loader filling its
 * queue) hold no kernel: automatic detection finds the period of the IDs,
 * which repeat every 4 kernels, where it took the name with the most
 * ranges and refused the trace ("the NVTX ranges named 'batch' contain no
 * kernels"). */
static void auto_nvtx_without_kernels_falls_back_to_the_period(void **state)
{
	static const char rows[] =
		"PRAGMA user_version = 1;"
		"INSERT OR REPLACE INTO meta VALUES ('status', 'complete'), ('device_memory', '1073741824');"
		"INSERT INTO string VALUES (1, 'k0'), (2, 'k1'), (3, 'k2'), (4, 'k3'), (5, 'batch');"
		"INSERT INTO alloc(id, address, size, reserved, api, alloc_ns)"
		"  VALUES (1, 4294967296, 4194304, 4194304, 'cudaMalloc', 10);"
		"WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 23)"
		"INSERT INTO kernel(correlation_id, seq, exec_id, name_id, grid_x, grid_y, grid_z, block_x, block_y,"
		"  block_z, shared_mem, launch_ns, start_ns, end_ns)"
		"  SELECT 100 + n, n, 11 + n % 4, 1 + n % 4, 1, 1, 1, 32, 1, 1, 0, (n + 1) * 1000,"
		"  (n + 1) * 1000 + 10, (n + 1) * 1000 + 500 FROM g;"
		"INSERT INTO kernel_arg SELECT 100 + seq, 0, 1, 0 FROM kernel;"
		"INSERT INTO nvtx_range VALUES (1, 5, 1, 100, 200), (2, 5, 1, 300, 400);";
	char path[512], err[512];
	write_sql_trace(test_path(path, sizeof path, "nvtx_empty.db"), rows);
	struct trace *t = trace_load(path, err, sizeof err);
	if (!t)
		fail_msg("%s", err);
	struct iter_result r;
	detect(t, "auto", &r);
	assert_int_equal(r.method, ITER_BY_PERIOD);
	assert_int_equal(r.period, 4);
	iter_result_free(&r);
	trace_free(t);
}

/* 24 kernels whose IDs repeat every 4, launched a microsecond apart, and
 * one NVTX range around each kernel named string 5, `name`. */
static struct trace *one_range_per_kernel(const char *file, const char *name)
{
	char rows[2048], path[512], err[512];
	snprintf(rows, sizeof rows,
		 "PRAGMA user_version = 1;"
		 "INSERT OR REPLACE INTO meta VALUES ('status', 'complete'), ('device_memory', '1073741824');"
		 "INSERT INTO string VALUES (1, 'k0'), (2, 'k1'), (3, 'k2'), (4, 'k3'), (5, '%s');"
		 "INSERT INTO alloc(id, address, size, reserved, api, alloc_ns)"
		 "  VALUES (1, 4294967296, 4194304, 4194304, 'cudaMalloc', 10);"
		 "WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 23)"
		 "INSERT INTO kernel(correlation_id, seq, exec_id, name_id, grid_x, grid_y, grid_z, block_x, block_y,"
		 "  block_z, shared_mem, launch_ns, start_ns, end_ns)"
		 "  SELECT 100 + n, n, 11 + n %% 4, 1 + n %% 4, 1, 1, 1, 32, 1, 1, 0, (n + 1) * 1000,"
		 "  (n + 1) * 1000 + 10, (n + 1) * 1000 + 500 FROM g;"
		 "INSERT INTO kernel_arg SELECT 100 + seq, 0, 1, 0 FROM kernel;"
		 "INSERT INTO nvtx_range SELECT seq + 1, 5, 1, (seq + 1) * 1000 - 100, (seq + 1) * 1000 + 600"
		 "  FROM kernel;",
		 name);
	write_sql_trace(test_path(path, sizeof path, file), rows);
	struct trace *t = trace_load(path, err, sizeof err);
	if (!t)
		fail_msg("%s", err);
	return t;
}

/* A marker name matches as a word: a range named batch_norm is a layer's,
 * not a batch, and iteration_count or stepper no iteration. Ranges of one
 * kernel each under those names were taken for 24 iterations of one
 * kernel; the period of the IDs is 4. The name followed by a non-letter
 * is still the marker: step_3, step 3, ProfilerStep#3. */
static void marker_names_match_as_words(void **state)
{
	static const char *const not_markers[] = { "batch_norm", "iteration_count", "Step_fn", "stepper",
						   "iter_loop" };
	for (size_t i = 0; i < sizeof not_markers / sizeof *not_markers; i++) {
		struct trace *t = one_range_per_kernel("nvtx_words.db", not_markers[i]);
		struct iter_result r;
		detect(t, "auto", &r);
		if (r.method != ITER_BY_PERIOD)
			fail_msg("%s taken for '%s'", not_markers[i], r.nvtx_name);
		assert_int_equal(r.period, 4);
		iter_result_free(&r);
		trace_free(t);
	}
	static const char *const markers[] = { "step_3", "step 3", "ProfilerStep#3", "batch" };
	for (size_t i = 0; i < sizeof markers / sizeof *markers; i++) {
		struct trace *t = one_range_per_kernel("nvtx_words.db", markers[i]);
		struct iter_result r;
		detect(t, "auto", &r);
		if (r.method != ITER_BY_NVTX)
			fail_msg("%s not taken for a marker", markers[i]);
		assert_int_equal(r.n_iters, 24);
		iter_result_free(&r);
		trace_free(t);
	}
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
		cmocka_unit_test(ring_of_buffers_is_the_period),
		cmocka_unit_test(ring_not_found_keeps_the_ids_period),
		cmocka_unit_test(auto_nvtx_without_kernels_falls_back_to_the_period),
		cmocka_unit_test(marker_names_match_as_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
