/*
 * Unit tests for the planner's analysis on a hand-made trace whose answers
 * are known exactly: trace loading and its errors (missing table, newer
 * schema, not a trace), iteration detection (period and NVTX), the
 * iteration's tensors, access sets and recall, and vitality. Kernel shape
 * IDs are checked on a real trace, whose optimizer kernels' execution IDs
 * drift between iterations.
 *
 * The program: 4 iterations of 4 kernels (execution IDs 11..14), one kernel
 * every millisecond, 100 us each. W (4 MiB) is allocated first and used by
 * kernels 0 and 2 of each iteration; A (2 MiB, one per iteration, always at
 * the same address) is allocated before kernel 1 and freed after kernel 3,
 * and used by kernels 1 and 3. On-demand migrations: W's two blocks and A's
 * block in iteration 0 (inside the arguments), and optionally one in
 * iteration 2 during kernel 2 at A's address (outside its arguments).
 */
#include "testutil.h"

#include <sqlite3.h>

#include "execid.h"
#include "plan/access.h"
#include "plan/planner.h"
#include "plan/iter.h"
#include "plan/tensor.h"
#include "plan/trace_load.h"
#include "plan/vital.h"
#include "plan.h"
#include "testplan.h"
#include "trace_schema.h"

#define MS 1000000LL
#define W_ADDR 0x100000000ULL
#define A_ADDR 0x200000000ULL
#define E_ADDR 0x300000000ULL

struct hand_opts {
	bool stray;            /* the migration outside the arguments */
	const char *nvtx;      /* range name per iteration, or NULL */
	const char *drop;      /* a table to drop, or NULL */
	int user_version;      /* 0: leave the schema's */
	bool empty;            /* a zero-byte allocation that kernel 0 of every
				  iteration names (the arena gives it 512 B) */
	bool graphs;           /* three kernels a graph ran, and one kernel row
				  without seq as older traces held them */
	bool before_graphs;    /* a version-1 trace: no graph_kernel table */
	const char *framework_cache; /* meta framework_cache, or NULL for none */
	const char *device_reset_ns; /* meta device_reset_ns, or NULL for none */
};

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

/* Runs sql, one statement or more, on the trace at path. */
static void edit_trace(const char *path, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	exec_sql(db, sql);
	sqlite3_close(db);
}

static struct trace *load_or_fail(const char *path)
{
	char err[512];
	struct trace *t = trace_load(path, err, sizeof err);
	if (!t)
		fail_msg("%s", err);
	return t;
}

/* Loading path fails, with an error that names it and says what. */
static void load_refused(const char *path, const char *what)
{
	char err[512];
	assert_null(trace_load(path, err, sizeof err));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, what));
}

static void write_hand_trace(const char *path, const struct hand_opts *o)
{
	unlink(path);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char err[256];
	assert_int_equal(trace_schema_create(db, err, sizeof err), 0);
	char sql[512];
	exec_sql(db, "BEGIN");
	exec_sql(db, "INSERT INTO string(id, value) VALUES (1, 'k0'), (2, 'k1'), (3, 'k2'), (4, 'k3')");
	exec_sql(db, "INSERT INTO meta(key, value) VALUES ('device_memory', '1073741824'), "
		     "('status', 'complete'), ('command', 'hand-made')");
	snprintf(sql, sizeof sql, "INSERT INTO alloc(id, address, size, reserved, api, alloc_ns) "
		 "VALUES (1, %llu, %d, %d, 'cudaMalloc', 1000)", W_ADDR, 4 << 20, 4 << 20);
	exec_sql(db, sql);
	if (o->empty) {
		snprintf(sql, sizeof sql, "INSERT INTO alloc(id, address, size, reserved, api, alloc_ns) "
			 "VALUES (9, %llu, 0, 512, 'cudaMalloc', 1000)", E_ADDR);
		exec_sql(db, sql);
	}
	for (int i = 0; i < 4; i++) {
		for (int j = 0; j < 4; j++) {
			long long g = 4 * i + j, start = (g + 1) * MS;
			snprintf(sql, sizeof sql,
				 "INSERT INTO kernel(correlation_id, seq, exec_id, name_id, grid_x, "
				 "grid_y, grid_z, block_x, block_y, block_z, shared_mem, launch_ns, "
				 "start_ns, end_ns) VALUES (%lld, %lld, %d, %d, 1, 1, 1, 32, 1, 1, 0, "
				 "%lld, %lld, %lld)",
				 g + 100, g, 11 + j, 1 + j, start - 10000, start, start + 100000);
			exec_sql(db, sql);
			snprintf(sql, sizeof sql, "INSERT INTO kernel_arg VALUES (%lld, 0, %d, 0)",
				 g + 100, j % 2 ? 2 + i : 1);
			exec_sql(db, sql);
			if (o->empty && j == 0) {
				snprintf(sql, sizeof sql, "INSERT INTO kernel_arg VALUES (%lld, 8, 9, 0)", g + 100);
				exec_sql(db, sql);
			}
		}
		long long base = (4 * i + 1) * MS;
		snprintf(sql, sizeof sql, "INSERT INTO alloc(id, address, size, reserved, api, "
			 "alloc_ns, free_ns) VALUES (%d, %llu, %d, %d, 'cudaMalloc', %lld, %lld)",
			 2 + i, A_ADDR, 2 << 20, 2 << 20, base + MS - 20000 - 10000,
			 base + 3 * MS + 5000);
		exec_sql(db, sql);
		if (o->nvtx) {
			snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO string(id, value) VALUES "
				 "(%d, '%s %d')", 10 + i, o->nvtx, i);
			exec_sql(db, sql);
			snprintf(sql, sizeof sql, "INSERT INTO nvtx_range(name_id, start_ns, end_ns) "
				 "VALUES (%d, %lld, %lld)", 10 + i, base - 50000, base + 4 * MS - 50000);
			exec_sql(db, sql);
		}
	}
	/* Iteration 0: W's two blocks during kernel 0, A's block during kernel 1. */
	snprintf(sql, sizeof sql, "INSERT INTO migration(start_ns, end_ns, address, bytes, direction, "
		 "cause) VALUES (%lld, %lld, %llu, 65536, 'htod', 'fault'), (%lld, %lld, %llu, 65536, "
		 "'htod', 'fault'), (%lld, %lld, %llu, 65536, 'htod', 'fault')",
		 MS + 10000, MS + 11000, W_ADDR, MS + 20000, MS + 21000, W_ADDR + (2 << 20),
		 2 * MS + 10000, 2 * MS + 11000, A_ADDR);
	exec_sql(db, sql);
	if (o->stray) {
		/* Iteration 2, kernel 2 (global 10) touches A without naming it. */
		snprintf(sql, sizeof sql, "INSERT INTO migration(start_ns, end_ns, address, bytes, "
			 "direction, cause) VALUES (%lld, %lld, %llu, 65536, 'htod', 'fault')",
			 11 * MS + 10000, 11 * MS + 11000, A_ADDR + 4096);
		exec_sql(db, sql);
	}
	if (o->framework_cache) {
		snprintf(sql, sizeof sql, "INSERT INTO meta(key, value) VALUES ('framework_cache', '%s')",
			 o->framework_cache);
		exec_sql(db, sql);
	}
	if (o->device_reset_ns) {
		snprintf(sql, sizeof sql, "INSERT INTO meta(key, value) VALUES ('device_reset_ns', '%s')",
			 o->device_reset_ns);
		exec_sql(db, sql);
	}
	if (o->graphs && !o->before_graphs)
		exec_sql(db, "INSERT INTO graph_kernel(correlation_id, graph_id, graph_node_id, name_id, grid_x, "
			     "grid_y, grid_z, block_x, block_y, block_z, shared_mem, stream_id, start_ns, end_ns) "
			     "VALUES (900, 1, 1, 1, 1, 1, 1, 32, 1, 1, 0, 7, 20000000, 20001000), "
			     "(900, 1, 2, 2, 1, 1, 1, 32, 1, 1, 0, 7, 20002000, 20003000), "
			     "(900, 1, 3, 3, 1, 1, 1, 32, 1, 1, 0, 7, 20004000, 20005000)");
	if (o->graphs)
		exec_sql(db, "INSERT INTO kernel(correlation_id, name_id, grid_x, grid_y, grid_z, block_x, "
			     "block_y, block_z, shared_mem, start_ns, end_ns) "
			     "VALUES (901, 1, 1, 1, 1, 32, 1, 1, 0, 21000000, 21001000)");
	exec_sql(db, "COMMIT");
	if (o->before_graphs)
		exec_sql(db, "DROP TABLE graph_kernel; PRAGMA user_version = 1");
	if (o->drop) {
		snprintf(sql, sizeof sql, "DROP VIEW IF EXISTS kernel_migration; DROP TABLE %s", o->drop);
		exec_sql(db, sql);
	}
	if (o->user_version) {
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", o->user_version);
		exec_sql(db, sql);
	}
	sqlite3_close(db);
}

/* Everything up to vitality for one hand-made trace. */
struct analysis {
	struct trace *t;
	struct iter_result it;
	struct tensor_set ts;
	struct access_set a;
	struct vital v;
};

static void analyse(const char *name, const struct hand_opts *o, const struct iter_options *io,
		    struct analysis *an)
{
	char path[512], err[512];
	test_path(path, sizeof path, name);
	write_hand_trace(path, o);
	an->t = load_or_fail(path);
	struct iter_options def;
	iter_options_parse("auto", &def);
	if (iter_detect(an->t, io ? io : &def, &an->it, err, sizeof err) ||
	    tensor_build(an->t, &an->it, &an->ts, err, sizeof err) ||
	    access_build(an->t, &an->ts, &an->a, err, sizeof err) ||
	    vital_build(an->t, &an->ts, &an->a, &an->v, err, sizeof err))
		fail_msg("%s", err);
}

static void release(struct analysis *an)
{
	vital_free(&an->v);
	access_set_free(&an->a);
	tensor_set_free(&an->ts);
	iter_result_free(&an->it);
	trace_free(an->t);
}

static void loads_and_finds_the_period(void **state)
{
	struct hand_opts o = { 0 };
	struct analysis an;
	analyse("period.db", &o, NULL, &an);
	assert_int_equal(an.t->n_kernels, 16);
	assert_int_equal(an.t->n_allocs, 5);
	assert_int_equal(an.t->device_memory, 1 << 30);
	assert_int_equal(an.it.method, ITER_BY_PERIOD);
	assert_int_equal(an.it.period, 4);
	assert_int_equal(an.it.n_iters, 4);
	assert_int_equal(an.it.warmup, 0);
	assert_int_equal(an.it.chosen, 2);
	assert_true(an.it.steady);
	release(&an);
}

/* Kernels graphs ran are counted and left out of the plan's sequence:
 * graph_kernel's rows in a version-2 trace, where a kernel row without seq
 * is a kernel no launch callback showed; in a version-1 trace, which
 * lacks graph_kernel, the kernel rows without seq. */
static void graph_kernels_counted_not_planned(void **state)
{
	struct hand_opts o = { .graphs = true };
	struct analysis an;
	analyse("graphs.db", &o, NULL, &an);
	assert_int_equal(an.t->graph_kernels, 3);
	assert_int_equal(an.t->unlaunched_kernels, 1);
	assert_int_equal(an.t->n_kernels, 16);
	assert_int_equal(an.it.period, 4);
	release(&an);

	o.before_graphs = true;
	analyse("version-1.db", &o, NULL, &an);
	assert_int_equal(an.t->graph_kernels, 1);
	assert_int_equal(an.t->unlaunched_kernels, 0);
	assert_int_equal(an.t->n_kernels, 16);
	release(&an);

	/* The table decides, not the number: a version-1 trace of session 43
	 * has graph_kernel and the new kernel table. */
	o = (struct hand_opts){ .graphs = true, .user_version = 1 };
	analyse("version-1-graphs.db", &o, NULL, &an);
	assert_int_equal(an.t->graph_kernels, 3);
	assert_int_equal(an.t->unlaunched_kernels, 1);
	release(&an);
}

/* The kernels launched after the program reset the device ran in memory
 * the recorder did not see: counted, not planned, one without a launch
 * time among them too; so are the migrations and faults after it. The
 * reset here comes at kernel 12's launch (its GPU start, 13 ms, less
 * 10 us). */
static void kernels_after_a_device_reset_counted_not_planned(void **state)
{
	char path[512], err[512];
	test_path(path, sizeof path, "reset.db");
	write_hand_trace(path, &(struct hand_opts){ .device_reset_ns = "12990000", .stray = true });
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	exec_sql(db, "UPDATE kernel SET launch_ns = NULL WHERE seq = 14");
	exec_sql(db, "INSERT INTO migration(start_ns, end_ns, address, bytes, direction, cause) "
		     "VALUES (14000000, 14001000, 8589934592, 65536, 'htod', 'fault')");
	exec_sql(db, "INSERT INTO fault(start_ns, end_ns, address, access, groups) "
		     "VALUES (11000000, 11000100, 4294967296, 'read', 1), (14000000, 14000100, 4294967296, 'read', 1)");
	/* A memset placed by its correlation id and one by its time, before
	 * the reset and after it; an NVTX range each side of it. */
	exec_sql(db, "INSERT INTO memset(correlation_id, start_ns, end_ns, bytes, value, stream_id) "
		     "VALUES (105, 5000000, 5000100, 64, 0, 1), (113, 14000000, 14000100, 64, 0, 1), "
		     "(NULL, 6000000, 6000100, 64, 0, 1), (NULL, 15000000, 15000100, 64, 0, 1)");
	exec_sql(db, "INSERT INTO string(id, value) VALUES (20, 'step')");
	exec_sql(db, "INSERT INTO nvtx_range(name_id, start_ns, end_ns) VALUES (20, 1000, 2000), (20, 13000000, 13001000)");
	sqlite3_close(db);
	struct trace *t = load_or_fail(path);
	assert_int_equal(t->device_reset_ns, 12990000);
	assert_int_equal(t->after_reset_kernels, 4);
	assert_int_equal(t->n_kernels, 12);
	assert_int_equal(t->n_fault_migrations, 4); /* iteration 0's three, and the stray one at 11 ms */
	assert_int_equal(t->n_faults, 1);
	assert_int_equal(t->n_write_pos, 1);
	assert_int_equal(t->n_write_ns, 1);
	assert_int_equal(t->n_nvtx, 1);
	trace_free(t);

	/* A reset before every launch leaves nothing to plan, and says why. */
	test_path(path, sizeof path, "reset-first.db");
	write_hand_trace(path, &(struct hand_opts){ .device_reset_ns = "1" });
	t = load_or_fail(path);
	assert_int_equal(t->n_kernels, 0);
	assert_int_equal(t->after_reset_kernels, 16);
	struct iter_options io;
	struct iter_result it;
	iter_options_parse("auto", &io);
	assert_int_not_equal(iter_detect(t, &io, &it, err, sizeof err), 0);
	assert_non_null(strstr(err, "every kernel was launched after the program reset the device"));
	trace_free(t);

	test_path(path, sizeof path, "reset-bad.db");
	write_hand_trace(path, &(struct hand_opts){ .device_reset_ns = "soon" });
	load_refused(path, "meta device_reset_ns 'soon' is not a time in ns");
}

/* A program on two GPUs: the kernels whose stream is in another context
 * than the arena's ran on the other device and are counted, not planned,
 * with their arguments; a kernel whose stream is unknown (no stream row,
 * or none at all) is kept. Traces without meta.arena_context_id keep
 * every kernel, as before. */
static void kernels_of_another_context_counted_not_planned(void **state)
{
	char path[512], err[512];
	test_path(path, sizeof path, "contexts.db");
	write_hand_trace(path, &(struct hand_opts){ 0 });
	/* k3 (every iteration's last kernel) on stream 2, context 2; the rest
	 * on stream 1 but iteration 0's k0, without a stream, and k1, on a
	 * stream with no row. */
	edit_trace(path, "INSERT INTO stream(id, context_id) VALUES (1, 1), (2, 2);"
			 "UPDATE kernel SET stream_id = CASE WHEN name_id = 4 THEN 2 ELSE 1 END;"
			 "UPDATE kernel SET stream_id = NULL WHERE seq = 0;"
			 "UPDATE kernel SET stream_id = 9 WHERE seq = 1");
	struct trace *t = load_or_fail(path);
	assert_int_equal(t->arena_context_id, -1);
	assert_int_equal(t->n_kernels, 16);
	assert_int_equal(t->other_context_kernels, 0);
	trace_free(t);

	edit_trace(path, "INSERT INTO meta(key, value) VALUES ('arena_context_id', '1')");
	t = load_or_fail(path);
	assert_int_equal(t->arena_context_id, 1);
	assert_int_equal(t->n_kernels, 12);
	assert_int_equal(t->other_context_kernels, 4);
	for (size_t i = 0; i < t->n_kernels; i++)
		assert_int_not_equal(t->kernels[i].name, 4);
	/* k3's arguments (the iteration's allocation) went with it. */
	assert_int_equal(t->n_args, 12);
	trace_free(t);

	/* Every kernel in another context: nothing to plan, and why. */
	edit_trace(path, "UPDATE kernel SET stream_id = 2");
	t = load_or_fail(path);
	assert_int_equal(t->n_kernels, 0);
	assert_int_equal(t->other_context_kernels, 16);
	struct iter_options io;
	struct iter_result it;
	iter_options_parse("auto", &io);
	assert_int_not_equal(iter_detect(t, &io, &it, err, sizeof err), 0);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "every kernel ran in another CUDA context than the one umkit's memory is in"));
	trace_free(t);

	/* A context ID that is not one is refused, naming the file. */
	edit_trace(path, "UPDATE meta SET value = 'gpu1' WHERE key = 'arena_context_id'");
	load_refused(path, "meta arena_context_id 'gpu1' is not a CUPTI context ID");

	/* After a device reset the device's context is a new one: the
	 * kernels launched then count as after the reset, not as another
	 * context's. */
	test_path(path, sizeof path, "contexts-reset.db");
	write_hand_trace(path, &(struct hand_opts){ .device_reset_ns = "12990000" });
	edit_trace(path, "INSERT INTO stream(id, context_id) VALUES (1, 1), (2, 2);"
			 "UPDATE kernel SET stream_id = CASE WHEN seq >= 12 THEN 2 ELSE 1 END;"
			 "INSERT INTO meta(key, value) VALUES ('arena_context_id', '1')");
	t = load_or_fail(path);
	assert_int_equal(t->after_reset_kernels, 4);
	assert_int_equal(t->other_context_kernels, 0);
	assert_int_equal(t->n_kernels, 12);
	trace_free(t);
	/* Launch order decides, not each launch's clock (two threads' clocks
	 * may disagree): a kernel launched after the first launch past the
	 * reset counts as after it, though its clock says before. */
	edit_trace(path, "UPDATE kernel SET launch_ns = 1000 WHERE seq = 13");
	t = load_or_fail(path);
	assert_int_equal(t->after_reset_kernels, 4);
	assert_int_equal(t->other_context_kernels, 0);
	assert_int_equal(t->n_kernels, 12);
	trace_free(t);

	/* A stream's context that is no integer: refused, naming the column,
	 * where it is read; a trace that names no arena context never reads
	 * it. */
	edit_trace(path, "UPDATE stream SET context_id = 'gpu0' WHERE id = 1");
	load_refused(path, "a row of kernel has stream.context_id 'gpu0', not an integer");
	edit_trace(path, "DELETE FROM meta WHERE key = 'arena_context_id'");
	t = load_or_fail(path);
	assert_int_equal(t->n_kernels, 12);
	trace_free(t);
}

/* The program's own managed allocations (alloc.api TRACE_API_MANAGED) are
 * known by their ordinals, and no other is taken for one. */
static void managed_allocations_known_by_ordinal(void **state)
{
	char path[512];
	test_path(path, sizeof path, "managed.db");
	write_hand_trace(path, &(struct hand_opts){ 0 });
	edit_trace(path, "UPDATE alloc SET api = '" TRACE_API_MANAGED "' WHERE id IN (1, 4)");
	struct trace *t = load_or_fail(path);
	assert_int_equal(t->n_allocs, 5);
	assert_int_equal(t->n_managed_allocs, 2);
	for (size_t i = 0; i < t->n_allocs; i++)
		assert_int_equal(trace_host_writes(t, &t->allocs[i]), t->allocs[i].id == 1 || t->allocs[i].id == 4);
	trace_free(t);
}

static void tensors_have_origins_and_lifetimes(void **state)
{
	struct hand_opts o = { 0 };
	struct analysis an;
	analyse("tensors.db", &o, NULL, &an);
	assert_int_equal(an.ts.n_pos, 4);
	assert_int_equal(an.ts.n_persistent, 1);
	assert_int_equal(an.ts.n_iteration, 1);
	const struct tensor *w = &an.ts.t[0], *a = &an.ts.t[1];
	assert_int_equal(w->origin, PLAN_ALLOC_PERSISTENT);
	assert_int_equal(w->ordinal, 1);
	assert_int_equal(w->live_len, 4);
	assert_false(w->freed);
	assert_true(w->resident_at_start);
	assert_int_equal(a->origin, PLAN_ALLOC_ITERATION);
	assert_int_equal(a->ordinal, 1);
	assert_int_equal(a->size, 2 << 20);
	assert_int_equal(a->alloc_pos, 1);
	assert_int_equal(a->live_len, 3); /* kernels 1, 2, 3; freed before the next kernel 0 */
	assert_true(a->freed);
	assert_int_equal(tensor_free_pos(&an.ts, a), 0);
	assert_int_equal(an.ts.alloc_sizes[0], 2 << 20);
	release(&an);
}

/* A zero-byte allocation (the arena gives it a 512-byte slot) holds no
 * data and no op moves it, so it takes no room: at a capacity of exactly
 * what kernel 0 needs besides it, every kernel fits and none is over. */
static void empty_allocations_take_no_room(void **state)
{
	struct hand_opts o = { .empty = true };
	struct analysis an;
	analyse("empty.db", &o, NULL, &an);
	size_t empty = an.ts.n;
	for (size_t i = 0; i < an.ts.n; i++)
		if (an.ts.t[i].size == 0)
			empty = i;
	assert_true(empty < an.ts.n);
	assert_int_equal(an.ts.t[empty].bytes, 0);
	assert_int_equal(an.a.ws_bytes[0], 4 << 20);
	release(&an);

	char path[512];
	test_path(path, sizeof path, "empty.db");
	struct planner *p = test_plan_full(path, 4 << 20, 0, 0);
	assert_int_equal(p->sched.n_unfit, 0);
	assert_int_equal(p->sched.over, 0);
	planner_free(p);
}

static void access_sets_and_recall(void **state)
{
	struct hand_opts o = { .stray = true };
	struct analysis an;
	analyse("access.db", &o, NULL, &an);
	const struct access_set *a = &an.a;
	/* Kernel 2 gained A from the stray migration. */
	uint32_t want_n[4] = { 1, 1, 2, 1 };
	for (uint32_t k = 0; k < 4; k++)
		assert_int_equal(a->first[k + 1] - a->first[k], want_n[k]);
	assert_int_equal(a->tensor[a->first[0]], 0);
	assert_int_equal(a->tensor[a->first[1]], 1);
	assert_int_equal(a->tensor[a->first[2]], 0);
	assert_int_equal(a->tensor[a->first[2] + 1], 1);
	assert_int_equal(a->observed_added, 1);
	assert_int_equal(a->ws_bytes[2], 6 << 20);
	assert_int_equal(a->ws_blocks[0], 2);
	/* Three of four (kernel, block) pairs lie in the arguments. */
	assert_int_equal(a->fault_pairs, 4);
	assert_int_equal(a->fault_pairs_covered, 3);
	assert_true(access_recall(a) > 0.749 && access_recall(a) < 0.751);
	release(&an);
}

static void vitality_periods_and_deaths(void **state)
{
	struct hand_opts o = { 0 };
	struct analysis an;
	analyse("vital.db", &o, NULL, &an);
	const struct vital *v = &an.v;
	assert_int_equal(v->cycle_ns, 4 * MS);
	assert_int_equal(v->start_ns[2], 2 * MS);
	assert_int_equal(v->end_ns[2], 2 * MS + 100000);
	/* W: 0 -> 2 and 2 -> 0 (wrapping); A: 1 -> 3. All idle 1.9 ms. */
	assert_int_equal(v->n_periods, 3);
	int w_gaps = 0, a_gaps = 0;
	for (size_t i = 0; i < v->n_periods; i++) {
		const struct vital_period *p = &v->periods[i];
		assert_int_equal(p->kind, VITAL_GAP);
		assert_int_equal(p->len, 1);
		assert_int_equal(p->idle_ns, 1900000);
		if (p->tensor == 0) {
			w_gaps++;
			assert_true((p->from == 0 && p->to == 2 && p->evict_at == 1) ||
				    (p->from == 2 && p->to == 0 && p->evict_at == 3));
		} else {
			a_gaps++;
			assert_int_equal(p->from, 1);
			assert_int_equal(p->to, 3);
		}
	}
	assert_int_equal(w_gaps, 2);
	assert_int_equal(a_gaps, 1);
	assert_int_equal(v->deaths, 1);
	assert_int_equal(v->tv[1].first_use, 1);
	assert_int_equal(v->tv[1].last_use, 3);
	assert_int_equal(v->tensor_hist[vital_bucket(1900000)], 3);
	assert_int_equal(vital_bucket(1900000), 3); /* < 10 ms */
	/* Blocks: W's 2 with W's two gaps each; A's 1 with two cyclic gaps, as
	 * a block is idle from A's last use to the next instance's first. */
	assert_int_equal(v->n_blocks, 3);
	assert_int_equal(v->block_hist[3], 6);
	release(&an);
}

static void observed_access_closes_a_gap(void **state)
{
	struct hand_opts o = { .stray = true };
	struct analysis an;
	analyse("vital_stray.db", &o, NULL, &an);
	/* A is now used at 1, 2 and 3: no inactive kernel between uses. */
	for (size_t i = 0; i < an.v.n_periods; i++)
		assert_int_equal(an.v.periods[i].tensor, 0);
	assert_int_equal(an.v.tv[1].n_uses, 3);
	release(&an);
}

static void nvtx_ranges_define_iterations(void **state)
{
	struct hand_opts o = { .nvtx = "train_step" };
	struct analysis an;
	analyse("nvtx.db", &o, NULL, &an);
	assert_int_equal(an.it.method, ITER_BY_NVTX);
	assert_string_equal(an.it.nvtx_name, "train_step");
	assert_int_equal(an.it.n_iters, 4);
	assert_int_equal(an.it.iters[1].first, 4);
	assert_int_equal(an.it.iters[1].n, 4);
	assert_int_equal(an.it.chosen, 2);
	assert_true(an.it.steady);
	release(&an);

	struct iter_options io;
	assert_int_equal(iter_options_parse("nvtx:train_step", &io), 0);
	analyse("nvtx2.db", &o, &io, &an);
	assert_int_equal(an.it.method, ITER_BY_NVTX);
	release(&an);

	assert_int_equal(iter_options_parse("1", &io), 0);
	analyse("nvtx3.db", &o, &io, &an);
	assert_int_equal(an.it.chosen, 1);
	release(&an);
}

static void iteration_errors_are_named(void **state)
{
	struct hand_opts o = { .nvtx = "step" };
	char path[512], err[512];
	test_path(path, sizeof path, "itererr.db");
	write_hand_trace(path, &o);
	struct trace *t = trace_load(path, err, sizeof err);
	assert_non_null(t);
	struct iter_options io;
	struct iter_result r;
	assert_int_equal(iter_options_parse("nvtx:forward", &io), 0);
	assert_int_equal(iter_detect(t, &io, &r, err, sizeof err), -1);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "'forward'"));
	assert_int_equal(iter_options_parse("9", &io), 0);
	assert_int_equal(iter_detect(t, &io, &r, err, sizeof err), -1);
	assert_non_null(strstr(err, "iteration 9"));
	trace_free(t);
}

static void missing_table_is_named(void **state)
{
	struct hand_opts o = { .drop = "migration" };
	char path[512];
	test_path(path, sizeof path, "missing.db");
	write_hand_trace(path, &o);
	load_refused(path, "migration");
}

static void newer_schema_is_named(void **state)
{
	struct hand_opts o = { .user_version = TRACE_SCHEMA_VERSION + 1 };
	char path[512];
	test_path(path, sizeof path, "newer.db");
	write_hand_trace(path, &o);
	load_refused(path, "newer");
}

static void not_a_trace_is_named(void **state)
{
	char path[512];
	test_path(path, sizeof path, "junk.db");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("this is not a database, just some text long enough to have a header\n", f);
	fclose(f);
	load_refused(path, "");
	test_path(path, sizeof path, "absent.db");
	load_refused(path, "");
}

/* A string table rebuilt by hand (no primary key) may hold an id that is
 * no integer, read as 0 out of the lookups' order, or one id twice: the
 * kernels they name were planned under the name "?" or either string's,
 * shape IDs the program's launches never match. Refused, naming the file. */
static void bad_string_ids_are_named(void **state)
{
	char path[512];
	test_path(path, sizeof path, "string-ids.db");
	write_hand_trace(path, &(struct hand_opts){ 0 });
	edit_trace(path, "PRAGMA legacy_alter_table = ON; CREATE TABLE s2 AS SELECT * FROM string; "
			 "DROP TABLE string; ALTER TABLE s2 RENAME TO string");
	trace_free(load_or_fail(path));
	edit_trace(path, "UPDATE string SET id = 'two' WHERE id = 2");
	load_refused(path, "a row of string has id 'two', not an integer: not a trace umrec wrote");
	edit_trace(path, "UPDATE string SET id = 2 WHERE id = 'two'; INSERT INTO string VALUES (3, 'k2 again')");
	load_refused(path, "string 3 appears more than once: not a trace umrec wrote");
}

/* The planner keeps a name as a 32-bit string id: a kernel's or an NVTX
 * range's name_id past it was read cut to another string's id (2^32 + 2
 * as 2, k1), the kernel planned under that name and shape. Refused,
 * naming the file; a negative id likewise. */
static void name_ids_past_32_bits_are_named(void **state)
{
	char path[512];
	test_path(path, sizeof path, "name-ids.db");
	write_hand_trace(path, &(struct hand_opts){ .nvtx = "step" });
	edit_trace(path, "UPDATE kernel SET name_id = 4294967298 WHERE correlation_id = 100");
	load_refused(path, "a row of kernel has name_id 4294967298, not a string id: not a trace umrec wrote");
	edit_trace(path, "UPDATE kernel SET name_id = -1 WHERE correlation_id = 100");
	load_refused(path, "a row of kernel has name_id -1, not a string id: not a trace umrec wrote");
	edit_trace(path, "UPDATE kernel SET name_id = 1 WHERE correlation_id = 100;"
			 "UPDATE nvtx_range SET name_id = 4294967306 WHERE name_id = 10");
	load_refused(path, "a row of nvtx_range has name_id 4294967306, not a string id: not a trace umrec wrote");
	edit_trace(path, "UPDATE nvtx_range SET name_id = 10 WHERE name_id = 4294967306");
	struct trace *t = load_or_fail(path);
	assert_string_equal(trace_string(t, t->kernels[0].name), "k0");
	trace_free(t);
}

/* The report's UM traffic adds up the migrations' bytes: a negative count
 * (a table rebuilt by hand) was added as 2^64 less it, the sum wrapped
 * (-1 to the host printed as 16.0 EiB, one to the GPU took a byte off
 * it), and so did rows that together pass 2^64. Refused, naming the
 * file. */
static void migration_bytes_out_of_range_are_named(void **state)
{
	char path[512];
	test_path(path, sizeof path, "migration-bytes.db");
	write_hand_trace(path, &(struct hand_opts){ 0 });
	struct trace *t = load_or_fail(path);
	assert_int_equal(t->htod_bytes, 3 * 65536);
	assert_int_equal(t->fault_bytes, 3 * 65536);
	assert_int_equal(t->dtoh_bytes, 0);
	trace_free(t);
	edit_trace(path, "INSERT INTO migration(start_ns, end_ns, address, bytes, direction, cause) "
			 "VALUES (30000000, 30001000, 4294967296, -1, 'dtoh', 'eviction')");
	load_refused(path, "a row of migration has bytes -1, below 0: not a trace umrec wrote");
	edit_trace(path, "UPDATE migration SET bytes = 1 << 61 WHERE bytes = -1");
	load_refused(path, "a row of migration has bytes 2305843009213693952, more than 2^60: not a trace umrec wrote");
	/* 2^60 bytes 15 times to the host add up; a 16th is 2^64 in all,
	 * which wrapped to 0. */
	edit_trace(path, "DELETE FROM migration WHERE direction = 'dtoh';"
			 "WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 14) "
			 "INSERT INTO migration(start_ns, end_ns, address, bytes, direction, cause) "
			 "SELECT 30000000 + n, 30001000 + n, 4294967296, 1 << 60, 'dtoh', 'eviction' FROM g");
	t = load_or_fail(path);
	assert_true(t->dtoh_bytes == 15 * ((uint64_t)1 << 60));
	trace_free(t);
	edit_trace(path, "INSERT INTO migration(start_ns, end_ns, address, bytes, direction, cause) "
			 "VALUES (31000000, 31001000, 4294967296, 1 << 60, 'dtoh', 'eviction')");
	load_refused(path, "the migrations to the host move 2^64 bytes or more in all: not a trace umrec wrote");
}

/* A kernel table rebuilt by hand (its UNIQUE on seq lost) may give two
 * kernels one seq: their launch order is not known, yet both were planned,
 * in whatever order the sort left them. Refused, naming the file, also
 * where one of the two ran in another context than the arena's (counted,
 * not kept) or after the device's reset. */
static void repeated_kernel_seqs_are_named(void **state)
{
	char path[512];
	test_path(path, sizeof path, "seq-twice.db");
	write_hand_trace(path, &(struct hand_opts){ 0 });
	edit_trace(path, "PRAGMA legacy_alter_table = ON; CREATE TABLE k2 AS SELECT * FROM kernel; "
			 "DROP TABLE kernel; ALTER TABLE k2 RENAME TO kernel");
	trace_free(load_or_fail(path));
	edit_trace(path, "UPDATE kernel SET seq = 5 WHERE seq = 6");
	load_refused(path, "kernel seq 5 appears more than once: not a trace umrec wrote");
	/* The other one in another context. */
	edit_trace(path, "INSERT INTO stream(id, context_id) VALUES (1, 1), (2, 2);"
			 "UPDATE kernel SET stream_id = CASE WHEN correlation_id = 106 THEN 2 ELSE 1 END;"
			 "INSERT INTO meta(key, value) VALUES ('arena_context_id', '1')");
	load_refused(path, "kernel seq 5 appears more than once: not a trace umrec wrote");
	/* Both after the reset. */
	edit_trace(path, "UPDATE kernel SET stream_id = 1; UPDATE kernel SET seq = 14 WHERE seq = 15;"
			 "UPDATE kernel SET seq = 6 WHERE correlation_id = 106;"
			 "INSERT INTO meta(key, value) VALUES ('device_reset_ns', '12990000')");
	load_refused(path, "kernel seq 14 appears more than once: not a trace umrec wrote");
}

/* A meta table that cannot be read (its page damaged; the tables the
 * planner reads besides are whole) is an error naming the file, not a
 * trace without device memory, reset or arena context: planned so, the
 * capacity would have been the unplanned peak and the kernels after a
 * reset or on another GPU planned as the arena's. */
static void unreadable_meta_is_named(void **state)
{
	char path[512];
	test_path(path, sizeof path, "meta-damaged.db");
	write_hand_trace(path, &(struct hand_opts){ .device_reset_ns = "12990000" });
	sqlite3 *db;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT (SELECT rootpage FROM sqlite_master WHERE name = 'meta'), "
					    "(SELECT page_size FROM pragma_page_size)", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	long root = sqlite3_column_int(st, 0), page = sqlite3_column_int(st, 1);
	sqlite3_finalize(st);
	sqlite3_close(db);
	assert_true(root > 1 && page >= 512);
	char junk[512];
	memset(junk, 0xff, sizeof junk);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (root - 1) * page, SEEK_SET), 0);
	assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
	fclose(f);
	load_refused(path, "reading meta device_memory failed: database disk image is malformed");
}

/* Each kernel of the plan follows the iteration's allocations made at or
 * before its launch: counted here from the trace's times alone. */
static void allocations_before_each_kernel(void **state)
{
	char path[512];
	test_fixture(path, sizeof path, "h100_bert_large.db");
	struct planner *pl = test_plan(path, 0);
	const struct trace *t = pl->trace;
	const struct plan_signature *sig = &pl->plan->signature;
	const struct iter_span *it = &pl->iter.iters[pl->iter.chosen];
	int64_t t0 = t->kernels[it->first].launch_ns;
	assert_non_null(sig->alloc_before);
	for (uint32_t k = 0; k < sig->n_kernels; k++) {
		uint64_t n = 0;
		for (size_t i = 0; i < t->n_allocs; i++)
			n += t->allocs[i].alloc_ns >= t0 &&
			     t->allocs[i].alloc_ns <= t->kernels[it->first + k].launch_ns;
		assert_int_equal(sig->alloc_before[k], n);
	}
	/* Most are made after the first kernel, and the count grows. */
	assert_true(sig->alloc_before[sig->n_kernels - 1] > sig->n_alloc_sizes / 2);
	assert_true(sig->alloc_before[1] < sig->alloc_before[sig->n_kernels - 1]);
	planner_free(pl);
}

/* Every kernel's shape ID is execid_shape_of its row (name, grid, block,
 * shared memory); on the ViT fixture the launches whose execution IDs
 * differ from the iteration before keep their shapes, and the plan carries
 * the planned iteration's shapes. */
static void shape_ids_from_the_kernel_rows(void **state)
{
	char path[512], err[512];
	test_fixture(path, sizeof path, "h100_vit_varying_ids.db");
	struct planner_options o;
	planner_options_default(&o);
	struct planner *pl;
	if (planner_run(path, &o, &pl, err, sizeof err))
		fail_msg("%s", err);
	const struct trace *t = pl->trace;
	sqlite3 *db;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT s.value, grid_x, grid_y, grid_z, block_x, block_y, "
					    "block_z, shared_mem FROM kernel JOIN string s ON s.id = name_id "
					    "WHERE seq IS NOT NULL ORDER BY seq", -1, &st, NULL),
			 SQLITE_OK);
	size_t k = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t v[7];
		for (int i = 0; i < 7; i++)
			v[i] = (uint32_t)sqlite3_column_int64(st, 1 + i);
		struct execid_launch l = { (const char *)sqlite3_column_text(st, 0), 0, { v[0], v[1], v[2] },
					   { v[3], v[4], v[5] }, v[6], NULL, 0 };
		assert_true(k < t->n_kernels);
		assert_true(t->kernels[k++].shape_id == execid_shape_of(&l));
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	assert_int_equal(k, t->n_kernels);

	const struct iter_span *it = &pl->iter.iters[pl->iter.chosen];
	assert_true(pl->iter.chosen > 0);
	size_t drifted = 0;
	for (size_t i = 0; i < it->n; i++) {
		const struct trace_kernel *now = &t->kernels[it->first + i], *before = now - it->n;
		if (now->exec_id != before->exec_id) {
			drifted++;
			assert_true(now->shape_id == before->shape_id);
		}
		assert_true(pl->plan->signature.shape_ids[i] == now->shape_id);
	}
	assert_true(drifted > 0);
	planner_free(pl);
}

/* meta framework_cache reaches the plan's provenance; absent (traces from
 * before umkit wrote it) it is off; any value but 0 or 1 is refused. */
static void framework_cache_from_the_meta(void **state)
{
	const struct {
		const char *meta;
		bool on;
	} cases[] = { { NULL, false }, { "0", false }, { "1", true } };
	char path[512], err[512];
	test_path(path, sizeof path, "cache.db");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		write_hand_trace(path, &(struct hand_opts){ .framework_cache = cases[i].meta });
		struct planner_options o;
		planner_options_default(&o);
		struct planner *pl;
		if (planner_run(path, &o, &pl, err, sizeof err))
			fail_msg("%s", err);
		assert_int_equal(pl->trace->framework_cache, cases[i].on);
		assert_int_equal(pl->plan->provenance.framework_cache, cases[i].on);
		planner_free(pl);
	}
	write_hand_trace(path, &(struct hand_opts){ .framework_cache = "on" });
	load_refused(path, "meta framework_cache 'on' is neither 0 nor 1");
}

/* The histogram buckets of idle time: decades from 10 us, each its
 * upper bound excluded, named as the report prints them. */
static void idle_time_buckets(void **state)
{
	static const struct {
		uint64_t ns;
		int bucket;
	} cases[] = { { 0, 0 },	     { 9999, 0 },	  { 10000, 1 },	      { 99999, 1 },
		      { 100000, 2 }, { 999999, 2 },	  { 1000000, 3 },     { 9999999, 3 },
		      { 10000000, 4 }, { 99999999, 4 },	  { 100000000, 5 },   { 999999999, 5 },
		      { 1000000000, 6 }, { UINT64_MAX, 6 } };
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		if (vital_bucket(cases[i].ns) != cases[i].bucket)
			fail_msg("%llu ns in bucket %d, not %d", (unsigned long long)cases[i].ns,
				 vital_bucket(cases[i].ns), cases[i].bucket);
	assert_string_equal(vital_bucket_name(0), "<10us");
	assert_string_equal(vital_bucket_name(1), "<100us");
	assert_string_equal(vital_bucket_name(VITAL_BUCKETS - 1), ">=1s");
	assert_string_equal(vital_bucket_name(VITAL_BUCKETS), "?");
	assert_string_equal(vital_bucket_name(-1), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loads_and_finds_the_period),
		cmocka_unit_test(graph_kernels_counted_not_planned),
		cmocka_unit_test(kernels_after_a_device_reset_counted_not_planned),
		cmocka_unit_test(kernels_of_another_context_counted_not_planned),
		cmocka_unit_test(managed_allocations_known_by_ordinal),
		cmocka_unit_test(framework_cache_from_the_meta),
		cmocka_unit_test(tensors_have_origins_and_lifetimes),
		cmocka_unit_test(empty_allocations_take_no_room),
		cmocka_unit_test(access_sets_and_recall),
		cmocka_unit_test(vitality_periods_and_deaths),
		cmocka_unit_test(idle_time_buckets),
		cmocka_unit_test(observed_access_closes_a_gap),
		cmocka_unit_test(nvtx_ranges_define_iterations),
		cmocka_unit_test(iteration_errors_are_named),
		cmocka_unit_test(missing_table_is_named),
		cmocka_unit_test(newer_schema_is_named),
		cmocka_unit_test(not_a_trace_is_named),
		cmocka_unit_test(unreadable_meta_is_named),
		cmocka_unit_test(bad_string_ids_are_named),
		cmocka_unit_test(repeated_kernel_seqs_are_named),
		cmocka_unit_test(name_ids_past_32_bits_are_named),
		cmocka_unit_test(migration_bytes_out_of_range_are_named),
		cmocka_unit_test(shape_ids_from_the_kernel_rows),
		cmocka_unit_test(allocations_before_each_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
