/*
 * Unit tests for the trace writer's batch that SQLite rolls back part-way
 * (record/trace_writer_thread.c, commit): a failed write of the WAL when
 * the page cache spills, made by a VFS that wraps the default one, loses
 * the rows written before the failure; the rows committed after it, in the
 * same batch, must not name a stream or a string that has no row, nor
 * give arguments to a launch that has none.
 */
#include "testutil.h"

#include <stdatomic.h>
#include <string.h>

#include <sqlite3.h>

#include "record/trace_writer.h"
#include "record/trace_writer_int.h"
#include "sql_trace.h"

static sqlite3_vfs *real_vfs;
static sqlite3_vfs shim_vfs;
static sqlite3_io_methods wal_methods;
static int (*orig_write)(sqlite3_file *, const void *, int, sqlite3_int64);
static atomic_int fail_left;
static atomic_int failed;

static int shim_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 off)
{
	if (atomic_load(&fail_left) > 0 && atomic_fetch_sub(&fail_left, 1) > 0) {
		atomic_fetch_add(&failed, 1);
		return SQLITE_IOERR_WRITE;
	}
	return orig_write(f, b, n, off);
}

static int shim_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out)
{
	int rc = real_vfs->xOpen(real_vfs, name, f, flags, out);
	if (rc == SQLITE_OK && (flags & SQLITE_OPEN_WAL) && f->pMethods) {
		if (!orig_write) {
			wal_methods = *f->pMethods;
			orig_write = wal_methods.xWrite;
			wal_methods.xWrite = shim_write;
		}
		f->pMethods = &wal_methods;
	}
	return rc;
}

/* Makes the failing VFS the default, for the writer opened next. */
static int shim_register(void **state)
{
	real_vfs = sqlite3_vfs_find(NULL);
	shim_vfs = *real_vfs;
	shim_vfs.zName = "failing-wal";
	shim_vfs.xOpen = shim_open;
	atomic_store(&failed, 0);
	return sqlite3_vfs_register(&shim_vfs, 1) == SQLITE_OK ? 0 : -1;
}

static int shim_unregister(void **state)
{
	atomic_store(&fail_left, 0);
	return sqlite3_vfs_unregister(&shim_vfs) == SQLITE_OK ? 0 : -1;
}

/* A writer that commits a batch only when batch_events are queued (or at
 * the close), with a small page cache: the batch spills into the WAL
 * before COMMIT. */
static trace_writer *open_spilling(char *path, size_t len, const char *name, size_t batch_events)
{
	char err[512];
	test_path(path, len, name);
	struct trace_writer_options opt = { .flush_interval_ms = 60000, .batch_events = batch_events,
					    .max_queued = 1 << 21 };
	trace_writer *w = trace_writer_open(path, &opt, err, sizeof err);
	if (!w)
		fail_msg("%s", err);
	assert_int_equal(sqlite3_exec(w->db, "PRAGMA cache_size = 10", NULL, NULL, NULL), SQLITE_OK);
	return w;
}

static void kernel(trace_writer *w, uint32_t corr, int64_t name, uint32_t stream)
{
	struct trace_kernel_activity k = { .correlation_id = corr, .name_id = name, .stream_id = stream,
					   .context_id = 1, .start_ns = 10 * corr, .end_ns = 10 * corr + 5 };
	trace_writer_kernel(w, &k);
}

/* Queues string "k", kernel 1 on stream 14, 5000 allocations and kernel 2
 * on stream 14 again: 5003 events, the second kernel the one the first
 * WAL write after it fails from. Returns k's id. */
static int64_t queue_kernels_around_allocs(trace_writer *w)
{
	int64_t k = trace_writer_intern(w, "k");
	kernel(w, 1, k, 14); /* stream 14's row is written here ... */
	for (uint64_t id = 1; id <= 5000; id++) {
		struct trace_alloc a = { .id = id, .address = id << 21, .size = 1 << 20, .reserved = 1 << 20,
					 .api = "cudaMalloc", .alloc_ns = id };
		trace_writer_alloc(w, &a); /* ... and lost with these when a spill fails */
	}
	atomic_store(&fail_left, 1);
	kernel(w, 2, k, 14); /* committed after the rollback */
	return k;
}

static void stream_rows_survive_a_partial_rollback(void **state)
{
	char path[512], err[512];
	trace_writer *w = open_spilling(path, sizeof path, "partial.db", 1 << 20);
	queue_kernels_around_allocs(w);
	int rc = trace_writer_close(w, 1, err, sizeof err);
	print_message("close: %d (%s); WAL writes failed: %d\n", rc, err, atomic_load(&failed));

	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	const char *sql = "SELECT (SELECT group_concat(correlation_id) FROM kernel), "
			  "(SELECT count(*) FROM alloc), (SELECT count(*) FROM stream WHERE id = 14), "
			  "(SELECT count(*) FROM kernel WHERE stream_id NOT IN (SELECT id FROM stream))";
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	print_message("kernels %s, allocs %lld, stream 14 rows %lld, kernels naming no stream row %lld\n",
		      (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1),
		      sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
	long long dangling = sqlite3_column_int64(st, 3);
	sqlite3_finalize(st);
	sqlite3_close(db);
	assert_true(atomic_load(&failed) > 0);
	assert_int_equal(dangling, 0);
}

/* The string a rolled-back part of a batch took is written again in the
 * transaction that goes on, not only with the next batch: a recording
 * killed before that one leaves no kernel naming a missing string. */
static void strings_survive_a_partial_rollback(void **state)
{
	char path[512], err[512];
	trace_writer *w = open_spilling(path, sizeof path, "strings.db", 5003);
	queue_kernels_around_allocs(w); /* its last event wakes the writer */
	struct trace_writer_stats s = { 0 };
	for (int i = 0; i < 1000 && s.batches == 0; i++) {
		usleep(10000);
		trace_writer_get_stats(w, &s);
	}
	assert_int_equal(s.batches, 1);

	/* What a recording killed now leaves: the batch committed, none after. */
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	long long kernels = sql_int(db, "SELECT count(*) FROM kernel");
	long long unnamed = sql_int(db, "SELECT count(*) FROM kernel WHERE name_id NOT IN (SELECT id FROM string)");
	sqlite3_close(db);
	trace_writer_close(w, 1, err, sizeof err);
	print_message("kernels %lld, naming no string row %lld; WAL writes failed: %d\n", kernels, unnamed,
		      atomic_load(&failed));
	assert_true(atomic_load(&failed) > 0);
	assert_true(kernels > 0);
	assert_int_equal(unnamed, 0);
}

#define LAUNCHES 200
#define ARGS 64

/* The arguments of a launch that a rolled-back part of a batch took, which
 * follow it into the transaction that goes on, go with it: a launch commits
 * with its arguments or not at all. */
static void arguments_go_with_their_launch(void **state)
{
	char path[512], err[512];
	trace_writer *w = open_spilling(path, sizeof path, "args.db", 1 << 20);
	int64_t k = trace_writer_intern(w, "k");
	struct trace_alloc a = { .id = 1, .address = 1 << 21, .size = 1 << 20, .reserved = 1 << 20,
				 .api = "cudaMalloc", .alloc_ns = 1 };
	trace_writer_alloc(w, &a);
	struct trace_kernel_arg args[ARGS];
	for (uint32_t i = 0; i < ARGS; i++)
		args[i] = (struct trace_kernel_arg){ 8 * i, 1, 64 * i };
	atomic_store(&fail_left, 1);
	for (uint32_t c = 1; c <= LAUNCHES; c++) {
		struct trace_launch l = { .correlation_id = c, .seq = c - 1, .name_id = k, .grid = { 1, 1, 1 },
					  .block = { 1, 1, 1 }, .launch_ns = 10 * c, .args = args, .nargs = ARGS };
		trace_writer_launch(w, &l);
	}
	int rc = trace_writer_close(w, 1, err, sizeof err);
	print_message("close: %d (%s); WAL writes failed: %d\n", rc, err, atomic_load(&failed));

	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	long long kernels = sql_int(db, "SELECT count(*) FROM kernel");
	long long orphans = sql_int(db, "SELECT count(*) FROM kernel_arg "
				      "WHERE correlation_id NOT IN (SELECT correlation_id FROM kernel)");
	char sql[160];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM kernel k WHERE (SELECT count(*) FROM kernel_arg a "
		 "WHERE a.correlation_id = k.correlation_id) != %d", ARGS);
	long long partial = sql_int(db, sql);
	sqlite3_close(db);
	print_message("kernels %lld of %d, arguments without their kernel %lld, kernels missing arguments %lld\n",
		      kernels, LAUNCHES, orphans, partial);
	assert_true(atomic_load(&failed) > 0);
	assert_true(kernels > 0 && kernels < LAUNCHES); /* some went with the rollback */
	assert_int_equal(orphans, 0);
	assert_int_equal(partial, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(stream_rows_survive_a_partial_rollback, shim_register,
						shim_unregister),
		cmocka_unit_test_setup_teardown(strings_survive_a_partial_rollback, shim_register,
						shim_unregister),
		cmocka_unit_test_setup_teardown(arguments_go_with_their_launch, shim_register, shim_unregister),
	};
	return cmocka_run_group_tests_name("trace_writer_rollback", tests, NULL, NULL);
}
