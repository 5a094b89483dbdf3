/* Replays the fuzzers' corpora (tests/fuzz/README.md): inputs that reach
 * the paths each fuzzer found, so that CI, under the sanitizers too, keeps
 * what the fuzzers once checked. Plans (tests/fuzz/corpus/plan/): every
 * input loads or is refused, and none crashes. Traces
 * (tests/fuzz/corpus/trace/): every edited trace is planned into a valid
 * plan or refused with an error. */
#include "testutil.h"

#include "../fuzz/plan_input.h"
#include "../fuzz/trace_input.h"

static uint8_t *read_all(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long len = ftell(f);
	assert_true(len >= 0);
	rewind(f);
	uint8_t *data = malloc((size_t)len + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return data;
}

static void plan_corpus_loads_or_is_refused(void **state)
{
	(void)state;
	char path[512], err[512];
	struct trace *t = trace_load(test_fixture(path, sizeof path, "h100_train_sim.db"), err, sizeof err);
	assert_non_null(t);
	glob_t g;
	assert_int_equal(glob("tests/fuzz/corpus/plan/*", 0, NULL, &g), 0);
	size_t loaded = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t n;
		uint8_t *data = read_all(g.gl_pathv[i], &n);
		loaded += plan_input_run(data, n, t);
		free(data);
	}
	/* Both kinds, or the corpus (or the harness) lost what it was for. */
	assert_true(loaded > 0);
	assert_true(loaded < g.gl_pathc);
	globfree(&g);
	trace_free(t);
}

static void trace_corpus_planned_or_refused(void **state)
{
	(void)state;
	char path[512], scratch[512];
	size_t image_len;
	uint8_t *image = read_all(test_fixture(path, sizeof path, "h100_mlp.db"), &image_len);
	const char *tmp = getenv("TMPDIR");
	snprintf(scratch, sizeof scratch, "%s/fuzz-trace-%d.db", tmp ? tmp : "/tmp", (int)getpid());
	glob_t g;
	assert_int_equal(glob("tests/fuzz/corpus/trace/*", 0, NULL, &g), 0);
	size_t planned = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t n;
		uint8_t *data = read_all(g.gl_pathv[i], &n);
		planned += trace_input_run(data, n, image, image_len, scratch);
		free(data);
	}
	assert_true(planned > 0);
	assert_true(planned < g.gl_pathc);
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
