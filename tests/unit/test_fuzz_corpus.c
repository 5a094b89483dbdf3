/* Replays the fuzzers' corpora (tests/fuzz/README.md): inputs that reach
 * the paths each fuzzer found, so that CI, under the sanitizers too, keeps
 * what the fuzzers once checked. Plans (tests/fuzz/corpus/plan/): each
 * input loads or is refused, as its file's name says, and none crashes.
 * Traces (tests/fuzz/corpus/trace/): each edited trace is planned into a
 * plan that loads back, or refused with an error, as its name says. */
#include "testutil.h"

#include "../fuzz/plan_input.h"
#include "../fuzz/trace_input.h"

/* What a corpus file's name says its input does: "planned-", "loaded-"
 * and "seed-" ones make a plan, "refused-" ones are refused. */
static bool named_to_plan(const char *path)
{
	const char *name = strrchr(path, '/') + 1;
	return strncmp(name, "refused-", 8) != 0;
}

static void plan_corpus_loads_or_is_refused(void **state)
{
	(void)state;
	char path[512], err[512];
	struct trace *t = trace_load(test_fixture(path, sizeof path, "h100_train_sim.db"), err, sizeof err);
	assert_non_null(t);
	glob_t g;
	assert_int_equal(glob("tests/fuzz/corpus/plan/*", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t n;
		uint8_t *data = test_read_file(g.gl_pathv[i], &n);
		if (plan_input_run(data, n, t) != named_to_plan(g.gl_pathv[i]))
			fail_msg("%s: %s", g.gl_pathv[i], named_to_plan(g.gl_pathv[i]) ? "refused" : "loaded");
		free(data);
	}
	globfree(&g);
	trace_free(t);
}

static void trace_corpus_planned_or_refused(void **state)
{
	(void)state;
	char path[512], scratch[512];
	size_t image_len;
	uint8_t *image = test_read_file(test_fixture(path, sizeof path, "h100_mlp.db"), &image_len);
	test_path(scratch, sizeof scratch, "edited-trace.db");
	glob_t g;
	assert_int_equal(glob("tests/fuzz/corpus/trace/*", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t n;
		uint8_t *data = test_read_file(g.gl_pathv[i], &n);
		if (trace_input_run(data, n, image, image_len, scratch) != named_to_plan(g.gl_pathv[i]))
			fail_msg("%s: %s", g.gl_pathv[i], named_to_plan(g.gl_pathv[i]) ? "refused" : "planned");
		free(data);
	}
	globfree(&g);
	free(image);
	unlink(scratch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_corpus_loads_or_is_refused),
		cmocka_unit_test(trace_corpus_planned_or_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
