/*
 * Unit tests for `umplan --dump` (plan/plan_json.c): the JSON has every
 * part of the plan under the documented keys, parses back with cJSON, and
 * keeps 64-bit values exact.
 */
#include "testutil.h"

#include <cjson/cJSON.h>

#include "plan/json_value.h"
#include "plan/plan_json.h"
#include "plan_sample.h"

static cJSON *dump(const struct plan *p)
{
	char *text = plan_json_text(p);
	assert_non_null(text);
	assert_int_equal(text[strlen(text) - 1], '\n');
	cJSON *root = cJSON_Parse(text);
	free(text);
	assert_non_null(root);
	return root;
}

static cJSON *get(const cJSON *o, const char *key)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v)
		fail_msg("missing key \"%s\"", key);
	return v;
}

static double num(const cJSON *o, const char *key)
{
	cJSON *v = get(o, key);
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static const char *text(const cJSON *o, const char *key)
{
	cJSON *v = get(o, key);
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static void dump_has_everything(void **state)
{
	struct plan *p = sample_plan();
	cJSON *root = dump(p);

	assert_int_equal(num(root, "format_version"), PLANFILE_VERSION);
	const cJSON *pv = get(root, "provenance");
	assert_string_equal(text(pv, "umkit_version"), "0.1.0");
	assert_string_equal(text(pv, "trace_path"), "/data/trace.db");
	assert_string_equal(text(pv, "trace_command"), "python train.py --epochs 1");
	assert_string_equal(text(pv, "iteration_method"), "nvtx");
	assert_int_equal(num(pv, "trace_iteration"), 2);
	assert_int_equal(num(pv, "trace_iterations"), 5);

	const cJSON *as = get(root, "assumptions");
	assert_true(num(as, "capacity_bytes") == 6.0 * MIB);
	assert_true(num(as, "htod_bytes_per_s") == 50e9);
	assert_true(num(as, "dtoh_bytes_per_s") == 8e9);
	assert_int_equal(num(as, "call_cost_ns"), 12000);
	assert_true(num(as, "block_size") == 2.0 * MIB);
	const cJSON *pd = get(root, "predictions");
	assert_true(num(pd, "peak_residency_bytes") == 6.0 * MIB);
	assert_true(num(pd, "prefetch_bytes") == 9.0 * MIB);
	assert_true(num(pd, "evict_bytes") == 4.0 * MIB);
	assert_true(num(pd, "discard_bytes") == 3.0 * MIB);
	assert_int_equal(num(pd, "iteration_ns"), 1234567);

	const cJSON *sig = get(root, "signature");
	char hex[24];
	snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)p->signature.hash);
	assert_string_equal(text(sig, "hash"), hex);
	assert_int_equal(num(sig, "n_kernels"), 6);
	const cJSON *ids = get(sig, "exec_ids");
	assert_int_equal(cJSON_GetArraySize(ids), 6);
	assert_string_equal(cJSON_GetArrayItem(ids, 5)->valuestring, "0xf00000000000000f");
	const cJSON *sizes = get(sig, "alloc_sizes");
	assert_int_equal(cJSON_GetArraySize(sizes), 2);
	assert_true(cJSON_GetArrayItem(sizes, 1)->valuedouble == MIB + 512);
	const cJSON *before = get(sig, "alloc_before");
	assert_int_equal(cJSON_GetArraySize(before), 6);
	for (int k = 0; k < 6; k++)
		assert_int_equal(cJSON_GetArrayItem(before, k)->valuedouble, sample_alloc_before[k]);
	assert_int_equal(num(sig, "ring_steps"), 2);
	const cJSON *keys = get(sig, "ring_keys");
	assert_int_equal(cJSON_GetArraySize(keys), 6);
	for (int k = 0; k < 6; k++)
		assert_int_equal(cJSON_GetArrayItem(keys, k)->valuedouble, sample_ring_keys[k]);

	assert_int_equal(num(root, "n_allocs"), 4);
	const cJSON *allocs = get(root, "allocs");
	assert_int_equal(cJSON_GetArraySize(allocs), 4);
	const cJSON *a2 = cJSON_GetArrayItem(allocs, 2);
	assert_int_equal(num(a2, "index"), 2);
	assert_string_equal(text(a2, "origin"), "iteration");
	assert_int_equal(num(a2, "ordinal"), 1);
	assert_true(num(a2, "size") == 3.0 * MIB);
	assert_string_equal(text(cJSON_GetArrayItem(allocs, 0), "origin"), "persistent");

	assert_int_equal(num(root, "n_ops"), 6);
	const cJSON *ops = get(root, "ops");
	assert_int_equal(cJSON_GetArraySize(ops), 6);
	/* ops[0]: the evict at 0 with nothing to wait for; ops[1]: prefetch. */
	const cJSON *o0 = cJSON_GetArrayItem(ops, 0), *o1 = cJSON_GetArrayItem(ops, 1);
	assert_string_equal(text(o0, "kind"), "evict");
	assert_true(cJSON_IsNull(get(o0, "after")));
	assert_true(cJSON_IsNull(get(o0, "deadline")));
	assert_int_equal(num(o0, "alloc"), 1);
	assert_true(num(o0, "offset") == 2.0 * MIB);
	assert_string_equal(text(o1, "kind"), "prefetch");
	assert_int_equal(num(o1, "position"), 0);
	assert_int_equal(num(o1, "deadline"), 1);
	assert_true(num(o1, "bytes") == 4.0 * MIB);
	const char *kinds[6];
	for (int i = 0; i < 6; i++)
		kinds[i] = text(cJSON_GetArrayItem(ops, i), "kind");
	assert_string_equal(kinds[3], "discard");
	assert_string_equal(kinds[4], "discard_prefetch");
	const cJSON *host = get(root, "host");
	assert_true(cJSON_IsArray(host));
	assert_int_equal(cJSON_GetArraySize(host), 0);

	const cJSON *corr = get(root, "correlation");
	const cJSON *cfg = get(corr, "config");
	assert_int_equal(num(cfg, "rows"), 8);
	assert_int_equal(num(cfg, "ways"), 2);
	assert_int_equal(num(cfg, "successors"), 4);
	assert_true(cJSON_IsTrue(get(cfg, "wrap")));
	const cJSON *sum = get(corr, "summary");
	struct corr_stats st;
	corr_get_stats(p->corr, &st);
	assert_int_equal(num(sum, "exec_entries"), st.exec_entries);
	assert_int_equal(num(sum, "rows_used"), st.rows_used);
	assert_int_equal(num(sum, "block_lists"), 3);
	assert_int_equal(num(sum, "block_entries"), st.block_entries);
	num(sum, "successor_links");
	num(sum, "exec_evictions");
	num(sum, "blocks_dropped");
	const cJSON *et = get(corr, "exec_table");
	assert_int_equal(cJSON_GetArraySize(et), (int)st.exec_entries);
	/* K1 (0x2000...2) appears twice: followed by K2 and, later, K4. */
	bool found = false;
	for (int i = 0; i < cJSON_GetArraySize(et); i++) {
		const cJSON *e = cJSON_GetArrayItem(et, i);
		if (strcmp(text(e, "exec_id"), "0x2000000000000002") != 0)
			continue;
		found = true;
		const cJSON *succ = get(e, "successors");
		assert_int_equal(cJSON_GetArraySize(succ), 2);
		assert_string_equal(cJSON_GetArrayItem(succ, 0)->valuestring, "0x5000000000000005");
		assert_string_equal(cJSON_GetArrayItem(succ, 1)->valuestring, "0x3000000000000003");
		assert_int_equal(num(e, "set"), 0x2000000000000002ULL % 8);
		num(e, "way");
		num(e, "last_seen");
	}
	assert_true(found);
	const cJSON *bt = get(corr, "block_tables");
	assert_int_equal(cJSON_GetArraySize(bt), 3);
	const cJSON *b1 = cJSON_GetArrayItem(bt, 1);
	assert_string_equal(text(b1, "exec_id"), "0x2000000000000002");
	const cJSON *blocks = get(b1, "blocks");
	/* K1's two executions: (1,0) (2,1), then (1,1) (3,0); (2,1) not again. */
	assert_int_equal(cJSON_GetArraySize(blocks), 4);
	const cJSON *last = cJSON_GetArrayItem(blocks, 3);
	assert_int_equal(cJSON_GetArrayItem(last, 0)->valueint, 3);
	assert_int_equal(cJSON_GetArrayItem(last, 1)->valueint, 0);

	cJSON_Delete(root);
	plan_destroy(p);
}

static void big_values_stay_exact(void **state)
{
	struct plan *p = sample_plan();
	p->predict.iteration_ns = UINT64_MAX - 1;
	free(p->provenance.trace_command);
	p->provenance.trace_command = NULL;
	corr_destroy(p->corr);
	p->corr = NULL;
	/* 16 digits, which cJSON prints rounded to 15 where they read back
	 * within a relative DBL_EPSILON: 9.00719925474099e+15. */
	p->assume.capacity_bytes = ((uint64_t)1 << 53) - 1;
	p->predict.evict_bytes = 8999999999999999;
	cJSON *root = dump(p);
	assert_string_equal(text(get(root, "predictions"), "iteration_ns"), "18446744073709551614");
	assert_true((uint64_t)num(get(root, "assumptions"), "capacity_bytes") == ((uint64_t)1 << 53) - 1);
	assert_true((uint64_t)num(get(root, "predictions"), "evict_bytes") == 8999999999999999);
	assert_string_equal(text(get(root, "provenance"), "trace_command"), "");
	assert_true(cJSON_IsNull(get(root, "correlation")));
	cJSON_Delete(root);
	plan_destroy(p);
}

/* The shared values (plan/json_value.h) at their edges: 2^53 is the last
 * count a double keeps exactly, and a byte that starts no UTF-8 sequence
 * becomes U+FFFD. */
static void json_values_at_their_edges(void **state)
{
	uint64_t edge = (uint64_t)1 << 53;
	cJSON *at = json_u64(edge), *past = json_u64(edge + 1);
	assert_string_equal(cJSON_GetStringValue(past), "9007199254740993");
	/* As printed: every digit, never cJSON's 15 (9.00719925474099e+15). */
	cJSON *below = json_u64(edge - 1), *small = json_u64(999999999999999);
	char *at_text = cJSON_PrintUnformatted(at), *below_text = cJSON_PrintUnformatted(below);
	char *small_text = cJSON_PrintUnformatted(small);
	assert_string_equal(at_text, "9007199254740992");
	assert_string_equal(below_text, "9007199254740991");
	assert_string_equal(small_text, "999999999999999");
	assert_true(cJSON_IsNumber(small));
	cJSON_free(at_text);
	cJSON_free(below_text);
	cJSON_free(small_text);
	cJSON_Delete(below);
	cJSON_Delete(small);
	cJSON *bad = json_text("a\xff" "b"), *none = json_text(NULL);
	assert_string_equal(cJSON_GetStringValue(bad), "a\xef\xbf\xbd" "b");
	assert_string_equal(cJSON_GetStringValue(none), "");
	cJSON_Delete(at);
	cJSON_Delete(past);
	cJSON_Delete(bad);
	cJSON_Delete(none);
}

static void dump_shows_host(void **state)
{
	struct plan *p = sample_host_plan();
	cJSON *root = dump(p);
	assert_int_equal(num(root, "n_allocs"), 6);
	const cJSON *host = get(root, "host");
	assert_int_equal(cJSON_GetArraySize(host), 2);
	assert_int_equal(cJSON_GetArrayItem(host, 0)->valueint, 4);
	assert_int_equal(cJSON_GetArrayItem(host, 1)->valueint, 5);
	cJSON_Delete(root);
	plan_destroy(p);
}

/* The dump of a loaded plan is the dump of the plan that was saved. */
static void dump_survives_round_trip(void **state)
{
	struct plan *p = sample_host_plan();
	size_t len;
	char err[256];
	unsigned char *img = sample_image(p, &len);
	struct plan *q = plan_load_mem(img, len, "plan.bin", err, sizeof err);
	if (!q)
		fail_msg("%s", err);
	char *a = plan_json_text(p), *b = plan_json_text(q);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(img);
	plan_destroy(p);
	plan_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dump_has_everything),
		cmocka_unit_test(big_values_stay_exact),
		cmocka_unit_test(json_values_at_their_edges),
		cmocka_unit_test(dump_shows_host),
		cmocka_unit_test(dump_survives_round_trip),
	};
	return cmocka_run_group_tests_name("plan_json", tests, NULL, NULL);
}
