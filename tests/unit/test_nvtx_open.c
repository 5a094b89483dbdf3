/*
 * Unit tests for nvtx_open: push/pop nesting per thread, start/end ranges
 * across threads, and the ranges still open at the end of a recording.
 */
#include "testutil.h"

#include "record/nvtx_open.h"

static struct trace_nvtx range(int64_t name, uint32_t thread, uint64_t start)
{
	return (struct trace_nvtx){ name, thread, start, 0 };
}

/* A pop closes the newest range its own thread pushed, whatever other
 * threads pushed since; a pop with nothing pushed on its thread (the
 * range opened before the recording) closes nothing. */
static void pops_close_their_threads_newest(void **state)
{
	nvtx_open *o = nvtx_open_create();
	assert_non_null(o);
	struct trace_nvtx r;
	assert_false(nvtx_open_pop(o, 1, 5, &r));
	assert_true(nvtx_open_push(o, &(struct trace_nvtx){ 10, 1, 100, 0 }));
	assert_true(nvtx_open_push(o, &(struct trace_nvtx){ 20, 2, 110, 0 }));
	assert_true(nvtx_open_push(o, &(struct trace_nvtx){ 11, 1, 120, 0 }));
	assert_true(nvtx_open_pop(o, 1, 130, &r));
	assert_int_equal(r.name_id, 11);
	assert_int_equal(r.start_ns, 120);
	assert_int_equal(r.end_ns, 130);
	assert_true(nvtx_open_pop(o, 1, 140, &r));
	assert_int_equal(r.name_id, 10);
	assert_int_equal(r.end_ns, 140);
	assert_false(nvtx_open_pop(o, 1, 150, &r));
	assert_true(nvtx_open_pop(o, 2, 160, &r));
	assert_int_equal(r.name_id, 20);
	assert_int_equal(r.thread_id, 2);
	nvtx_open_destroy(o);
}

/* A start/end range is found by its ID from any thread, and a pop never
 * closes one, nor an end a pushed range. */
static void ends_match_ids_not_threads(void **state)
{
	nvtx_open *o = nvtx_open_create();
	struct trace_nvtx r = range(30, 1, 100);
	assert_true(nvtx_open_start(o, 7, &r));
	r = range(31, 1, 110);
	assert_true(nvtx_open_push(o, &r));
	assert_false(nvtx_open_end(o, 8, 120, &r));
	assert_true(nvtx_open_end(o, 7, 130, &r));
	assert_int_equal(r.name_id, 30);
	assert_int_equal(r.thread_id, 1);
	assert_int_equal(r.end_ns, 130);
	assert_false(nvtx_open_end(o, 7, 140, &r));
	assert_true(nvtx_open_pop(o, 1, 150, &r));
	assert_int_equal(r.name_id, 31);
	assert_false(nvtx_open_pop(o, 1, 160, &r));
	nvtx_open_destroy(o);
}

struct drained {
	struct trace_nvtx r[8];
	int n;
};

static void collect(void *ctx, const struct trace_nvtx *r)
{
	struct drained *d = ctx;
	assert_true(d->n < 8);
	d->r[d->n++] = *r;
}

/* At the end every range still open comes out once, oldest first, never
 * closed (end 0); a thousand nested pushes are all kept. */
static void drain_gives_the_open_ranges_oldest_first(void **state)
{
	nvtx_open *o = nvtx_open_create();
	struct trace_nvtx r = range(1, 1, 100);
	nvtx_open_push(o, &r);
	r = range(2, 2, 110);
	nvtx_open_start(o, 5, &r);
	r = range(3, 1, 120);
	nvtx_open_push(o, &r);
	assert_true(nvtx_open_pop(o, 1, 130, &r));
	struct drained d = { .n = 0 };
	nvtx_open_drain(o, collect, &d);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.r[0].name_id, 1);
	assert_int_equal(d.r[1].name_id, 2);
	assert_int_equal(d.r[0].end_ns, 0);
	assert_int_equal(d.r[1].end_ns, 0);
	d.n = 0;
	nvtx_open_drain(o, collect, &d);
	assert_int_equal(d.n, 0);

	for (int i = 0; i < 1000; i++) {
		r = range(i, 3, (uint64_t)i);
		assert_true(nvtx_open_push(o, &r));
	}
	for (int i = 999; i >= 0; i--) {
		assert_true(nvtx_open_pop(o, 3, 2000, &r));
		assert_int_equal(r.name_id, i);
	}
	nvtx_open_destroy(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pops_close_their_threads_newest),
		cmocka_unit_test(ends_match_ids_not_threads),
		cmocka_unit_test(drain_gives_the_open_ranges_oldest_first),
	};
	return cmocka_run_group_tests_name("nvtx_open", tests, NULL, NULL);
}
