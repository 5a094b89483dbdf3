/*
 * Unit test for the trace writer's batch that SQLite rolls back part-way
 * (record/trace_writer_thread.c, commit): a failed write of the WAL when
 * the page cache spills, made by a VFS that wraps the default one, loses
 * the stream rows written before the failure; the kernel rows committed
 * after it, in the same batch, must not name a stream that has no row.
 */
#include "testutil.h"

#include <stdatomic.h>
#include <string.h>

#include <sqlite3.h>

#include "record/trace_writer.h"
#include "record/trace_writer_int.h"

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

static void kernel(trace_writer *w, uint32_t corr, int64_t name, uint32_t stream)
{
	struct trace_kernel_activity k = { .correlation_id = corr, .name_id = name, .stream_id = stream,
					   .context_id = 1, .start_ns = 10 * corr, .end_ns = 10 * corr + 5 };
	trace_writer_kernel(w, &k);
}

static void stream_rows_survive_a_partial_rollback(void **state)
{
	char path[512], err[512];
	real_vfs = sqlite3_vfs_find(NULL);
	shim_vfs = *real_vfs;
	shim_vfs.zName = "failing-wal";
	shim_vfs.xOpen = shim_open;
	assert_int_equal(sqlite3_vfs_register(&shim_vfs, 1), SQLITE_OK);

	test_path(path, sizeof path, "partial.db");
	struct trace_writer_options opt = { .flush_interval_ms = 60000, .batch_events = 1 << 20,
					    .max_queued = 1 << 21 };
	trace_writer *w = trace_writer_open(path, &opt, err, sizeof err);
	if (!w)
		fail_msg("%s", err);
	/* A small page cache: the batch spills into the WAL before COMMIT. */
	assert_int_equal(sqlite3_exec(w->db, "PRAGMA cache_size = 10", NULL, NULL, NULL), SQLITE_OK);
	int64_t k = trace_writer_intern(w, "k");
	kernel(w, 1, k, 14); /* stream 14's row is written here ... */
	for (uint64_t id = 1; id <= 5000; id++) {
		struct trace_alloc a = { .id = id, .address = id << 21, .size = 1 << 20, .reserved = 1 << 20,
					 .api = "cudaMalloc", .alloc_ns = id };
		trace_writer_alloc(w, &a); /* ... and lost with these when a spill fails */
	}
	kernel(w, 2, k, 14); /* committed after the rollback */
	atomic_store(&fail_left, 1);
	int rc = trace_writer_close(w, 1, err, sizeof err);
	print_message("close: %d (%s); WAL writes failed: %d\n", rc, err, atomic_load(&failed));
	sqlite3_vfs_unregister(&shim_vfs);

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stream_rows_survive_a_partial_rollback),
	};
	return cmocka_run_group_tests_name("trace_writer_rollback", tests, NULL, NULL);
}
