/*
 * Unit tests for the replay statistics file (replay/stats.c): the JSON
 * parses (with cJSON, here only: the writer itself uses none), has every
 * key docs/replay.md lists with the values given, escapes strings, and a
 * failed write is reported and leaves no file; the exit summary's median
 * agrees with the file's.
 */
#include "testutil.h"

#include <signal.h>
#include <sys/resource.h>

#include <cjson/cJSON.h>

#include "replay/stats.h"

static cJSON *write_and_parse(const char *policy, const struct engine_stats *s, const uint64_t *it,
			      size_t n, const struct replay_measured *m)
{
	char path[512];
	FILE *f = fopen(test_path(path, sizeof path, "stats.json"), "w+");
	assert_non_null(f);
	assert_int_equal(replay_stats_write_json(f, policy, s, it, n, m), 0);
	long len = ftell(f);
	rewind(f);
	char *text = calloc(1, (size_t)len + 1);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	cJSON *j = cJSON_Parse(text);
	if (!j)
		fail_msg("not JSON:\n%s", text);
	free(text);
	return j;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", key);
	return v->valuedouble;
}

static void keys_and_values(void **state)
{
	struct engine_stats s = { 0 };
	s.launches = 1200;
	s.matched = 1100;
	s.shaped = 37;
	s.resynced = 60;
	s.lost = 40;
	s.ring_moves = 23;
	s.iterations = 3;
	for (int k = 0; k < 4; k++) {
		s.ops[k] = 10 + (uint64_t)k;
		s.bytes[k] = ((uint64_t)k + 1) << 21;
	}
	s.budget_evictions = 7;
	s.discards_beside_evictions = 5;
	s.budget_overruns = 1;
	s.refault_blocks = 21;
	s.refault_budget_blocks = 13;
	s.refault_shared_blocks = 5;
	s.unread_evicted_blocks = 17;
	s.unread_evicted_budget_blocks = 7;
	s.skipped_discards = 2;
	s.corr_launches = 40;
	s.host_allocs = 3;
	s.host_bytes = (uint64_t)5 << 31;
	s.gated_launches = 31;
	s.late_gated_launches = 14;
	s.unissued_blocks = 12;
	s.modelled_peak_bytes = (uint64_t)6 << 30;
	s.started_idle = true;
	s.woke_at_alloc = 77;
	s.wake_deferrals = 4;
	const uint64_t it[3] = { 300, 100, 200 };
	const struct replay_iteration per_it[3] = {
		{ .fault_migrations = 5, .speculative_migrations = 19, .htod_bytes = 1 << 20, .callback_ns = 900,
		  .resynced = 2, .lost = 30, .refault_blocks = 8, .unissued_blocks = 6,
		  .unread_evicted_blocks = 9 },
		{ .dtoh_bytes = 2 << 20, .callback_ns = 700, .allocator_ns = 650, .htod_busy_ns = 11, .dtoh_busy_ns = 22,
		  .kernel_busy_ns = 33 },
		{ .fault_migrations = 1, .htod_bytes = 4096, .callback_ns = 800, .lost = 1 },
	};
	struct replay_measured m = { .wall_ns = 123456789, .counted = TRAFFIC_FROM_WAKE, .htod_bytes = 1 << 30, .dtoh_bytes = 1 << 29,
				     .fault_migrations = 6, .fault_bytes = 6 << 16, .fault_records = 2,
				     .speculative_migrations = 21, .speculative_bytes = 21 << 16,
				     .peak_residency_bytes = (uint64_t)5 << 30,
				     .budget_bytes = (uint64_t)8 << 30, .dropped_discards = 7, .fresh_prefetched = 5, .failed_driver_calls = 2, .dropped_records = 9, .n_iterations = 3,
				     .iterations = per_it, .callback_ns = 4242, .discard_waits = 9,
				     .driver_calls = { 1, 2, 3, 4 }, .driver_call_ns = { 100, 200, 300, 400 } };
	m.gate_waits = 17;
	m.gates_unissued = 4;
	m.migration_queue_peak = 23;
	m.gate_ns = 3100;
	m.issue_waits = 8;
	m.issue_waits_expired = 1;
	m.issue_wait_ns = 2600;
	m.room_waits = 11;
	m.room_waits_expired = 2;
	m.room_wait_ns = 4700;
	m.discard_prefetches_ahead = 23;
	m.discard_prefetches_ahead_in_part = 7;
	m.discards_ahead = 9;
	m.executor_ns = 3900;
	m.discard_wait_ns = 2900;
	m.markers = 640;
	m.marker_ns = 51000;
	m.allocator.allocs = 1500;
	m.allocator.frees = 1400;
	m.allocator.ns = 777000;
	m.allocator.fence_waits = 12;
	m.allocator.fence_wait_ns = 55000;
	m.allocator.fence_orders = 41;
	m.allocator.fence_refusals = 3;
	m.allocator.last_resort_waits = 2;
	m.allocator.runtime_allocs = 4;
	m.allocator.runtime_bytes = 8192;
	m.allocator.driver_allocs = 5;
	m.allocator.driver_bytes = 1 << 21;
	m.allocator.driver_peak_bytes = 1 << 20;
	m.allocator.driver_managed_allocs = 6;
	m.allocator.driver_managed_bytes = 3 << 20;
	m.allocator.driver_managed_peak_bytes = 3 << 19;
	m.allocator.one_stream = true;
	const struct fault_source src[2] = {
		{ .origin = PLAN_ALLOC_ITERATION, .ordinal = 12, .alloc_id = 345, .size = 3 << 20,
		  .plan_alloc = 7, .migrations = 4, .bytes = 1 << 18 },
		{ .origin = PLAN_ALLOC_PERSISTENT, .ordinal = 2, .alloc_id = 2, .size = 4096,
		  .plan_alloc = -1, .migrations = 1, .bytes = 4096 },
	};
	m.fault_window_migrations = 6;
	m.fault_totals = (struct fault_totals){ .sources = 3, .unattributed = 1, .by_launch = 5, .owner_changed = 2 };
	m.fault_sources = src;
	m.n_fault_sources = 2;
	const struct lost_id lost[1] = { { 0xabcdef0123456789ULL, 44 } };
	m.lost_totals = (struct lost_totals){ .launches = 61, .distinct = 9 };
	m.lost_kernels = lost;
	m.n_lost_kernels = 1;
	cJSON *j = write_and_parse("plan", &s, it, 3, &m);
	assert_string_equal(cJSON_GetObjectItem(j, "format")->valuestring, "umkit-replay-stats");
	assert_int_equal(num(j, "format_version"), 1);
	assert_string_equal(cJSON_GetObjectItem(j, "umkit_version")->valuestring, UMKIT_VERSION);
	assert_string_equal(cJSON_GetObjectItem(j, "policy")->valuestring, "plan");

	const cJSON *e = cJSON_GetObjectItem(j, "engine");
	assert_int_equal(num(e, "launches"), 1200);
	assert_int_equal(num(e, "matched"), 1100);
	assert_int_equal(num(e, "matched_by_shape"), 37);
	assert_int_equal(num(e, "resynced"), 60);
	assert_int_equal(num(e, "lost"), 40);
	assert_int_equal(num(e, "ring_moves"), 23);
	assert_int_equal(num(e, "iterations"), 3);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(e, "signature_mismatch")));
	const char *kinds[4] = { "prefetch", "evict", "discard", "discard_prefetch" };
	const cJSON *ops = cJSON_GetObjectItem(e, "ops");
	for (int k = 0; k < 4; k++) {
		const cJSON *o = cJSON_GetObjectItem(ops, kinds[k]);
		assert_int_equal(num(o, "calls"), 10 + k);
		assert_int_equal(num(o, "bytes"), (k + 1) << 21);
	}
	assert_int_equal(num(e, "budget_evictions"), 7);
	assert_int_equal(num(e, "discards_beside_evictions"), 5);
	assert_int_equal(num(e, "budget_overruns"), 1);
	assert_int_equal(num(e, "refault_blocks"), 21);
	assert_int_equal(num(e, "refault_budget_blocks"), 13);
	assert_int_equal(num(e, "refault_shared_blocks"), 5);
	assert_int_equal(num(e, "unread_evicted_blocks"), 17);
	assert_int_equal(num(e, "unread_evicted_budget_blocks"), 7);
	assert_int_equal(num(e, "skipped_discards"), 2);
	assert_int_equal(num(e, "corr_launches"), 40);
	assert_int_equal(num(e, "placed_on_host"), 3);
	assert_true(num(e, "placed_on_host_bytes") == (double)((uint64_t)5 << 31));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "started_idle")));
	assert_int_equal(num(e, "woke_at_alloc"), 77);
	assert_int_equal(num(e, "wake_deferrals"), 4);
	assert_int_equal(num(e, "gated_launches"), 31);
	assert_int_equal(num(e, "late_gated_launches"), 14);
	assert_int_equal(num(e, "unissued_blocks"), 12);
	assert_true(num(e, "modelled_peak_bytes") == (double)((uint64_t)6 << 30));

	const cJSON *a = cJSON_GetObjectItem(j, "iteration_ns");
	assert_int_equal(cJSON_GetArraySize(a), 3);
	assert_int_equal(cJSON_GetArrayItem(a, 0)->valuedouble, 300);
	assert_int_equal(num(j, "iteration_median_ns"), 200);

	const cJSON *me = cJSON_GetObjectItem(j, "measured");
	assert_int_equal(num(me, "wall_ns"), 123456789);
	assert_string_equal(cJSON_GetObjectItem(me, "traffic_counted")->valuestring, "from the wake");
	assert_int_equal(num(me, "htod_bytes"), 1 << 30);
	assert_int_equal(num(me, "dtoh_bytes"), 1 << 29);
	assert_int_equal(num(me, "fault_migrations"), 6);
	assert_int_equal(num(me, "fault_bytes"), 6 << 16);
	assert_int_equal(num(me, "fault_records"), 2);
	assert_int_equal(num(me, "speculative_migrations"), 21);
	assert_int_equal(num(me, "speculative_bytes"), 21 << 16);
	const cJSON *fs = cJSON_GetObjectItem(me, "fault_sources");
	assert_int_equal(num(fs, "migrations"), 6);
	assert_int_equal(num(fs, "unattributed"), 1);
	assert_int_equal(num(fs, "by_launch"), 5);
	assert_int_equal(num(fs, "owner_changed"), 2);
	assert_int_equal(num(fs, "sources"), 3);
	const cJSON *top = cJSON_GetObjectItem(fs, "top");
	assert_int_equal(cJSON_GetArraySize(top), 2);
	const cJSON *t0 = cJSON_GetArrayItem(top, 0), *t1 = cJSON_GetArrayItem(top, 1);
	assert_string_equal(cJSON_GetObjectItem(t0, "origin")->valuestring, "iteration");
	assert_int_equal(num(t0, "ordinal"), 12);
	assert_int_equal(num(t0, "alloc_id"), 345);
	assert_int_equal(num(t0, "size"), 3 << 20);
	assert_int_equal(num(t0, "plan_alloc"), 7);
	assert_int_equal(num(t0, "migrations"), 4);
	assert_int_equal(num(t0, "bytes"), 1 << 18);
	assert_string_equal(cJSON_GetObjectItem(t1, "origin")->valuestring, "persistent");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(t1, "plan_alloc")));
	const cJSON *lk = cJSON_GetObjectItem(me, "lost_kernels");
	assert_int_equal(num(lk, "launches"), 61);
	assert_int_equal(num(lk, "distinct"), 9);
	const cJSON *l0 = cJSON_GetArrayItem(cJSON_GetObjectItem(lk, "top"), 0);
	assert_string_equal(cJSON_GetObjectItem(l0, "exec_id")->valuestring, "0xabcdef0123456789");
	assert_int_equal(num(l0, "launches"), 44);
	assert_true(num(me, "peak_residency_bytes") == (double)((uint64_t)5 << 30));
	assert_true(num(me, "budget_bytes") == (double)((uint64_t)8 << 30));
	assert_true(num(me, "dropped_discards") == 7);
	assert_true(num(me, "fresh_prefetched") == 5);
	assert_true(num(me, "failed_driver_calls") == 2);
	assert_true(num(me, "dropped_records") == 9);
	const cJSON *host = cJSON_GetObjectItem(me, "host");
	assert_int_equal(num(host, "callback_ns"), 4242);
	assert_int_equal(num(host, "discard_waits"), 9);
	assert_int_equal(num(host, "discard_wait_ns"), 2900);
	assert_int_equal(num(host, "executor_ns"), 3900);
	const cJSON *markers = cJSON_GetObjectItem(host, "markers");
	assert_int_equal(num(markers, "recorded"), 640);
	assert_int_equal(num(markers, "ns"), 51000);
	assert_int_equal(num(host, "migration_queue_peak"), 23);
	assert_int_equal(num(host, "room_waits"), 11);
	assert_int_equal(num(host, "room_waits_expired"), 2);
	assert_int_equal(num(host, "room_wait_ns"), 4700);
	assert_int_equal(num(host, "discard_prefetches_ahead"), 23);
	assert_int_equal(num(host, "discard_prefetches_ahead_in_part"), 7);
	assert_int_equal(num(host, "discards_ahead"), 9);
	const cJSON *gates = cJSON_GetObjectItem(host, "prefetch_gates");
	assert_int_equal(num(gates, "waits"), 17);
	assert_int_equal(num(gates, "unissued"), 4);
	assert_int_equal(num(gates, "ns"), 3100);
	assert_int_equal(num(gates, "issue_waits"), 8);
	assert_int_equal(num(gates, "issue_waits_expired"), 1);
	assert_int_equal(num(gates, "issue_wait_ns"), 2600);
	const cJSON *alloc = cJSON_GetObjectItem(host, "allocator");
	assert_int_equal(num(alloc, "allocs"), 1500);
	assert_int_equal(num(alloc, "frees"), 1400);
	assert_int_equal(num(alloc, "ns"), 777000);
	assert_int_equal(num(alloc, "fence_waits"), 12);
	assert_int_equal(num(alloc, "fence_wait_ns"), 55000);
	assert_int_equal(num(alloc, "fence_orders"), 41);
	assert_int_equal(num(alloc, "fence_refusals"), 3);
	assert_int_equal(num(alloc, "last_resort_waits"), 2);
	assert_int_equal(num(alloc, "runtime_allocs"), 4);
	assert_int_equal(num(alloc, "runtime_bytes"), 8192);
	assert_int_equal(num(alloc, "driver_allocs"), 5);
	assert_int_equal(num(alloc, "driver_bytes"), 1 << 21);
	assert_int_equal(num(alloc, "driver_peak_bytes"), 1 << 20);
	assert_int_equal(num(alloc, "driver_managed_allocs"), 6);
	assert_int_equal(num(alloc, "driver_managed_bytes"), 3 << 20);
	assert_int_equal(num(alloc, "driver_managed_peak_bytes"), 3 << 19);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(alloc, "one_stream")));
	const cJSON *calls = cJSON_GetObjectItem(host, "driver_calls");
	for (int k = 0; k < 4; k++) {
		const cJSON *c = cJSON_GetObjectItem(calls, kinds[k]);
		assert_int_equal(num(c, "calls"), k + 1);
		assert_int_equal(num(c, "ns"), 100 * (k + 1));
	}
	const cJSON *per = cJSON_GetObjectItem(me, "iterations");
	assert_int_equal(cJSON_GetArraySize(per), 3);
	const cJSON *second = cJSON_GetArrayItem(per, 1);
	assert_int_equal(num(second, "fault_migrations"), 0);
	assert_int_equal(num(second, "dtoh_bytes"), 2 << 20);
	assert_int_equal(num(second, "callback_ns"), 700);
	assert_int_equal(num(second, "allocator_ns"), 650);
	assert_int_equal(num(second, "htod_busy_ns"), 11);
	assert_int_equal(num(second, "dtoh_busy_ns"), 22);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(second, "kernel_busy_ns")));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(me, "kernel_times")));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(me, "stopped_at_graph")));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(me, "stopped_at_device_reset")));
	assert_int_equal(num(me, "other_context_launches"), 0);
	const cJSON *first = cJSON_GetArrayItem(per, 0);
	assert_int_equal(num(first, "fault_migrations"), 5);
	assert_int_equal(num(first, "speculative_migrations"), 19);
	assert_int_equal(num(first, "resynced"), 2);
	assert_int_equal(num(first, "lost"), 30);
	assert_int_equal(num(first, "refault_blocks"), 8);
	assert_int_equal(num(first, "unissued_blocks"), 6);
	assert_int_equal(num(first, "unread_evicted_blocks"), 9);
	assert_int_equal(num(cJSON_GetArrayItem(per, 1), "refault_blocks"), 0);
	assert_int_equal(num(cJSON_GetArrayItem(per, 2), "htod_bytes"), 4096);
	assert_int_equal(num(cJSON_GetArrayItem(per, 2), "lost"), 1);
	cJSON_Delete(j);

	/* With kernel times on, the kernels' busy time is a number. */
	m.kernels_timed = true;
	m.stopped_at_graph = true;
	m.stopped_at_reset = true;
	m.other_context_launches = 42;
	j = write_and_parse("plan", &s, it, 3, &m);
	me = cJSON_GetObjectItem(j, "measured");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(me, "kernel_times")));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(me, "stopped_at_graph")));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(me, "stopped_at_device_reset")));
	assert_int_equal(num(me, "other_context_launches"), 42);
	assert_int_equal(num(cJSON_GetArrayItem(cJSON_GetObjectItem(me, "iterations"), 1), "kernel_busy_ns"), 33);
	cJSON_Delete(j);
}

static void empty_run_and_no_measurements(void **state)
{
	struct engine_stats s = { 0 };
	s.signature_mismatch = 1;
	cJSON *j = write_and_parse("we\"ird\\\n", &s, NULL, 0, NULL);
	assert_string_equal(cJSON_GetObjectItem(j, "policy")->valuestring, "we\"ird\\\n");
	const cJSON *e = cJSON_GetObjectItem(j, "engine");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "signature_mismatch")));
	assert_int_equal(num(e, "placed_on_host"), 0);
	assert_int_equal(num(e, "placed_on_host_bytes"), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "iteration_ns")), 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "iteration_median_ns")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "measured")));
	cJSON_Delete(j);

	struct replay_measured m = { .wall_ns = 1 }; /* no per-iteration counters */
	j = write_and_parse("ondemand", &s, (const uint64_t[]){ 5, 9 }, 2, &m);
	assert_int_equal(num(j, "iteration_median_ns"), 9);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "measured"),
								 "iterations")),
			 0);
	const cJSON *fs = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "measured"), "fault_sources");
	assert_int_equal(num(fs, "migrations"), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fs, "top")), 0);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "measured"), "traffic_counted")->valuestring,
			    "whole run");
	cJSON_Delete(j);
}

/* The exit summary's median says what iteration_median_ns says: none
 * without an iteration time, where the line read "median 0.00 ms". */
static void summary_median_as_the_file(void **state)
{
	char text[48];
	assert_string_equal(replay_stats_median_text(text, sizeof text, NULL, 0), "no median");
	assert_string_equal(replay_stats_median_text(text, sizeof text, (const uint64_t[]){ 5000000, 12345678 }, 2),
			    "median 12.35 ms");
}

static void write_failure_is_reported(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	assert_non_null(f);
	struct engine_stats s = { 0 };
	assert_int_equal(replay_stats_write_json(f, "ideal", &s, NULL, 0, NULL), -1);
	fclose(f);
}

/* A file that may not grow (a full disk, as RLIMIT_FSIZE makes it): the
 * error names the file, and nothing is left there, not even the temporary,
 * where a file cut short would read as this run's stats. */
static void failed_file_write_leaves_nothing(void **state)
{
	char path[512], err[1024], pattern[600];
	test_path(path, sizeof path, "full.json");
	unlink(path);
	struct engine_stats s = { 0 };
	struct rlimit old;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &(struct rlimit){ 0, old.rlim_max }), 0);
	int rc = replay_stats_write_file(path, "plan", &s, (const uint64_t[]){ 3 }, 1, NULL, err, sizeof err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, prev);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err, path));
	assert_int_equal(access(path, F_OK), -1);
	snprintf(pattern, sizeof pattern, "%s.tmp.*", path);
	glob_t g;
	assert_int_equal(glob(pattern, 0, NULL, &g), GLOB_NOMATCH);

	/* With room, the file is whole, its median the upper one. */
	assert_int_equal(replay_stats_write_file(path, "plan", &s, (const uint64_t[]){ 9, 3, 5, 7 }, 4, NULL, err,
						 sizeof err),
			 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char text[4096];
	text[fread(text, 1, sizeof text - 1, f)] = '\0';
	fclose(f);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	assert_int_equal(num(j, "iteration_median_ns"), 7);
	cJSON_Delete(j);
	uint64_t median = 0;
	assert_false(replay_stats_median(NULL, 0, &median));
	assert_true(replay_stats_median((const uint64_t[]){ 4, 1, 2 }, 3, &median));
	assert_int_equal(median, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys_and_values),
		cmocka_unit_test(empty_run_and_no_measurements),
		cmocka_unit_test(summary_median_as_the_file),
		cmocka_unit_test(write_failure_is_reported),
		cmocka_unit_test(failed_file_write_leaves_nothing),
	};
	return cmocka_run_group_tests_name("replay_stats", tests, NULL, NULL);
}
