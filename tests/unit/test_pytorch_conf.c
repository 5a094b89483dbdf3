/*
 * Unit tests for common/pytorch_conf.c: reading a key's value from
 * PyTorch's allocator settings, and turning expandable segments off.
 */
#include "testutil.h"

#include <stdlib.h>

#include "pytorch_conf.h"

static void value_is_the_last_top_level_one(void **state)
{
	char v[32];
	assert_true(pytorch_conf_value("backend:cudaMallocAsync", "backend", v, sizeof v));
	assert_string_equal(v, "cudaMallocAsync");
	assert_true(pytorch_conf_value(" max_split_size_mb : 128 , backend : native ", "backend", v, sizeof v));
	assert_string_equal(v, "native");
	assert_true(pytorch_conf_value("expandable_segments:True,expandable_segments:False", "expandable_segments", v,
				       sizeof v));
	assert_string_equal(v, "False");
	/* A bracketed value's words are not keys, nor is a value a key. */
	assert_true(pytorch_conf_value("roundup_power2_divisions:[256:1,backend:x,>:8],backend:native", "backend", v,
				       sizeof v));
	assert_string_equal(v, "native");
	assert_false(pytorch_conf_value("roundup_power2_divisions:[backend:x]", "backend", v, sizeof v));
	assert_false(pytorch_conf_value("garbage_collection_threshold:backend", "backend", v, sizeof v));
	/* Absent, a prefix of another key, bracketed, too long, or no conf. */
	assert_false(pytorch_conf_value("max_split_size_mb:128", "backend", v, sizeof v));
	assert_false(pytorch_conf_value("backends:native", "backend", v, sizeof v));
	assert_false(pytorch_conf_value("backend:[native]", "backend", v, sizeof v));
	assert_false(pytorch_conf_value("backend:cudaMallocAsync", "backend", v, 8));
	assert_false(pytorch_conf_value(NULL, "backend", v, sizeof v));
	assert_false(pytorch_conf_value("", "backend", v, sizeof v));
}

static void expandable_is_true_only(void **state)
{
	assert_true(pytorch_conf_expandable("expandable_segments:True"));
	assert_true(pytorch_conf_expandable("max_split_size_mb:64, expandable_segments : True"));
	assert_false(pytorch_conf_expandable("expandable_segments:False"));
	assert_false(pytorch_conf_expandable("expandable_segments:true")); /* PyTorch refuses it */
	assert_false(pytorch_conf_expandable("expandable_segments:True,expandable_segments:False"));
	assert_false(pytorch_conf_expandable(NULL));
}

static void env_setting_names_the_first_variable(void **state)
{
	unsetenv("PYTORCH_ALLOC_CONF");
	unsetenv("PYTORCH_CUDA_ALLOC_CONF");
	assert_null(pytorch_conf_env_setting("backend", "cudaMallocAsync"));
	setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:64,backend:cudaMallocAsync", 1);
	assert_string_equal(pytorch_conf_env_setting("backend", "cudaMallocAsync"), "PYTORCH_CUDA_ALLOC_CONF");
	assert_null(pytorch_conf_env_setting("backend", "native"));
	setenv("PYTORCH_ALLOC_CONF", "backend:cudaMallocAsync", 1);
	assert_string_equal(pytorch_conf_env_setting("backend", "cudaMallocAsync"), "PYTORCH_ALLOC_CONF");
	/* A value longer than any the lookup holds matches nothing. */
	setenv("PYTORCH_ALLOC_CONF", "backend:cudaMallocAsyncxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 1);
	assert_string_equal(pytorch_conf_env_setting("backend", "cudaMallocAsync"), "PYTORCH_CUDA_ALLOC_CONF");
	unsetenv("PYTORCH_ALLOC_CONF");
	unsetenv("PYTORCH_CUDA_ALLOC_CONF");
}

static void expandable_off_changes_only_those_values(void **state)
{
	static const char *const cases[][2] = {
		{ "expandable_segments:True", "expandable_segments:False" },
		{ "expandable_segments : True ,max_split_size_mb:64", "expandable_segments : False ,max_split_size_mb:64" },
		{ "roundup_power2_divisions:[256:1,>:8],expandable_segments:True,expandable_segments:True",
		  "roundup_power2_divisions:[256:1,>:8],expandable_segments:False,expandable_segments:False" },
		{ "pinned_use_cuda_host_register:True", "pinned_use_cuda_host_register:True" },
		{ "expandable_segments:False", "expandable_segments:False" },
		{ "", "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *off = pytorch_conf_expandable_off(cases[i][0]);
		assert_non_null(off);
		assert_string_equal(off, cases[i][1]);
		assert_false(pytorch_conf_expandable(off));
		free(off);
	}
}

/* PyTorch's tokenizer drops every white space character, so a tab or a
 * line break around the words (a setting written over several lines) is
 * no part of them: each of these turns expandable segments on. */
static void whitespace_other_than_space_does_not_count(void **state)
{
	static const char *const on[] = {
		"expandable_segments:True\n",
		"expandable_segments:\tTrue",
		"max_split_size_mb:128,\nexpandable_segments:True",
		"expandable_segments:True\r\n",
	};
	for (size_t i = 0; i < sizeof on / sizeof *on; i++) {
		assert_true(pytorch_conf_expandable(on[i]));
		char *off = pytorch_conf_expandable_off(on[i]);
		assert_non_null(off);
		assert_false(pytorch_conf_expandable(off));
		free(off);
	}
}

/* PyTorch drops the white space inside a word as well ("Tr ue" is its
 * "True"): such settings turn expandable segments on, and are turned off
 * whole; a value is read without it. */
static void whitespace_inside_a_word_does_not_count(void **state)
{
	static const char *const cases[][2] = {
		{ "expandable_segments:Tr ue", "expandable_segments:False" },
		{ "expandable _segments : T\tr u e ,backend:native", "expandable _segments : False ,backend:native" },
		{ "expandable_segments:T rue,expandable_segments:True", "expandable_segments:False,expandable_segments:False" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		assert_true(pytorch_conf_expandable(cases[i][0]));
		char *off = pytorch_conf_expandable_off(cases[i][0]);
		assert_non_null(off);
		assert_string_equal(off, cases[i][1]);
		assert_false(pytorch_conf_expandable(off));
		free(off);
	}
	char v[16];
	assert_true(pytorch_conf_value("backend: cudaMalloc Async ", "backend", v, sizeof v));
	assert_string_equal(v, "cudaMallocAsync");
	assert_false(pytorch_conf_value("backend:cudaMalloc Async", "backend", v, 15)); /* 15 bytes and '\0' */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(value_is_the_last_top_level_one),
		cmocka_unit_test(expandable_is_true_only),
		cmocka_unit_test(env_setting_names_the_first_variable),
		cmocka_unit_test(expandable_off_changes_only_those_values),
		cmocka_unit_test(whitespace_other_than_space_does_not_count),
		cmocka_unit_test(whitespace_inside_a_word_does_not_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
