/* Unit tests for trace_schema: creating a trace and the planner's validator. */
#include "testutil.h"

#include <signal.h>
#include <time.h>
#include <sys/wait.h>

#include <sqlite3.h>

#include "trace_schema.h"

/* A new file holding the schema, with sql run after it (may be NULL). */
static const char *make_trace(char *path, size_t len, const char *name, const char *sql)
{
	char err[256];
	sqlite3 *db;
	test_path(path, len, name);
	unlink(path);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(trace_schema_create(db, err, sizeof err), 0);
	if (sql)
		assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	return path;
}

/* Runs the validator on path, expecting failure; returns the message. */
static const char *open_fails(const char *path, char *err, size_t len)
{
	sqlite3 *db = (sqlite3 *)1;
	err[0] = '\0';
	assert_int_equal(trace_schema_open(path, &db, err, len), -1);
	assert_null(db);
	assert_non_null(strstr(err, path)); /* every message names the file */
	return err;
}

static void fresh_trace_validates(void **state)
{
	char path[512], err[256] = "", value[64];
	sqlite3 *db;
	make_trace(path, sizeof path, "fresh.db", NULL);
	assert_int_equal(trace_schema_open(path, &db, err, sizeof err), 0);
	assert_string_equal(err, "");
	assert_int_equal(trace_schema_meta(db, "schema_version", value, sizeof value), 1);
	assert_int_equal(atoi(value), TRACE_SCHEMA_VERSION);

	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), TRACE_SCHEMA_VERSION);
	sqlite3_finalize(st);

	/* Read-only: the planner must never change a trace. */
	assert_int_not_equal(sqlite3_exec(db, "INSERT INTO meta VALUES ('x', 'y')", NULL, NULL, NULL),
			     SQLITE_OK);
	sqlite3_close(db);
}

/* Leaves path (a trace) as a recording killed mid-transaction does, with a
 * hot rollback journal beside it. */
static void kill_mid_transaction(const char *path)
{
	char journal[600];
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *db;
		if (sqlite3_open(path, &db) != SQLITE_OK ||
		    sqlite3_exec(db, "PRAGMA journal_mode = DELETE; PRAGMA cache_size = 1; BEGIN; "
				     "INSERT INTO meta VALUES ('hot', zeroblob(200000)); "
				     "INSERT INTO meta VALUES ('hot2', zeroblob(200000))",
				 NULL, NULL, NULL) != SQLITE_OK)
			_exit(1);
		kill(getpid(), SIGKILL);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	snprintf(journal, sizeof journal, "%s-journal", path);
	assert_int_equal(access(journal, F_OK), 0);
}

/* A recording killed while it switched the trace out of WAL mode leaves a
 * hot rollback journal, which a read-only connection cannot roll back:
 * the open rolls it back, and the trace is as before the interrupted
 * transaction. */
static void hot_journal_rolled_back(void **state)
{
	char path[512], journal[600], err[256] = "", value[16];
	make_trace(path, sizeof path, "hot.db", NULL);
	kill_mid_transaction(path);
	snprintf(journal, sizeof journal, "%s-journal", path);

	sqlite3 *db;
	assert_int_equal(trace_schema_open(path, &db, err, sizeof err), 0);
	assert_int_equal(trace_schema_meta(db, "hot", value, sizeof value), 0);
	sqlite3_close(db);
	assert_int_not_equal(access(journal, F_OK), 0);
}

/* A database made by running sql in a new file. */
static const char *make_database(char *path, size_t len, const char *name, const char *sql)
{
	sqlite3 *db;
	test_path(path, len, name);
	unlink(path);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	return path;
}

/* What umrec -o may replace: traces of any version, killed ones included,
 * and databases with no table; never another database, nor a trace
 * another process holds locked (a recording writing it, a reader inside a
 * transaction), which is told apart as in use. */
static void replaceable_only_traces(void **state)
{
	char path[512];
	make_trace(path, sizeof path, "r-fresh.db", NULL);
	assert_int_equal(trace_schema_replaceable(path), TRACE_REPLACEABLE);
	make_trace(path, sizeof path, "r-v7.db", "PRAGMA user_version = 7");
	assert_int_equal(trace_schema_replaceable(path), TRACE_REPLACEABLE);
	make_trace(path, sizeof path, "r-hot.db", NULL);
	kill_mid_transaction(path);
	assert_int_equal(trace_schema_replaceable(path), TRACE_REPLACEABLE);
	make_database(path, sizeof path, "r-none.db", "CREATE TABLE t(x); DROP TABLE t");
	assert_int_equal(trace_schema_replaceable(path), TRACE_REPLACEABLE);

	make_database(path, sizeof path, "r-other.db", "CREATE TABLE t(x)");
	assert_int_equal(trace_schema_replaceable(path), TRACE_NOT_A_TRACE);
	make_database(path, sizeof path, "r-meta.db", "CREATE TABLE meta(key, value)");
	assert_int_equal(trace_schema_replaceable(path), TRACE_NOT_A_TRACE);
	test_path(path, sizeof path, "r-missing.db");
	unlink(path);
	assert_int_equal(trace_schema_replaceable(path), TRACE_NOT_A_TRACE);
	make_database(path, sizeof path, "r-view.db", "CREATE VIEW v AS SELECT 1");
	assert_int_equal(trace_schema_replaceable(path), TRACE_NOT_A_TRACE);

	/* A recording writes in WAL mode, where readers never wait: open by
	 * another connection, even between its transactions, it is in use. */
	sqlite3 *writer;
	make_trace(path, sizeof path, "r-busy.db", "PRAGMA journal_mode = WAL");
	assert_int_equal(sqlite3_open(path, &writer), SQLITE_OK);
	assert_int_equal(sqlite3_exec(writer, "INSERT INTO meta VALUES ('k', 'v')", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(trace_schema_replaceable(path), TRACE_IN_USE);
	assert_int_equal(sqlite3_exec(writer, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(trace_schema_replaceable(path), TRACE_IN_USE);
	assert_int_equal(sqlite3_exec(writer, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(writer);
	assert_int_equal(trace_schema_replaceable(path), TRACE_REPLACEABLE);

	/* In rollback mode, a writer's transaction holds it too. */
	make_trace(path, sizeof path, "r-locked.db", NULL);
	assert_int_equal(sqlite3_open(path, &writer), SQLITE_OK);
	assert_int_equal(sqlite3_exec(writer, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(trace_schema_replaceable(path), TRACE_IN_USE);
	sqlite3_close(writer);

	/* So does a reader's (a sqlite3 shell after BEGIN; SELECT), with
	 * only a shared lock. Judging the file changes nothing in it, in use
	 * or not. */
	sqlite3 *reader;
	size_t len, now_len;
	make_trace(path, sizeof path, "r-read.db", NULL);
	void *before = test_read_file(path, &len);
	assert_int_equal(sqlite3_open(path, &reader), SQLITE_OK);
	assert_int_equal(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM meta", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(trace_schema_replaceable(path), TRACE_IN_USE);
	sqlite3_close(reader);
	void *now = test_read_file(path, &now_len);
	assert_true(now_len == len && memcmp(now, before, len) == 0);
	free(now);
	assert_int_equal(trace_schema_replaceable(path), TRACE_REPLACEABLE);
	now = test_read_file(path, &now_len);
	assert_true(now_len == len && memcmp(now, before, len) == 0);
	free(now);
	free(before);
}

/* A trace another process holds locked past TRACE_BUSY_TIMEOUT_MS cannot
 * be read: once that wait is over, the message names the file and says it
 * is in use, not that it is not a trace. */
static void open_says_a_locked_trace_is_in_use(void **state)
{
	char path[512], err[512] = "";
	sqlite3 *writer, *db = NULL;
	struct timespec t0, t1;
	make_trace(path, sizeof path, "locked.db", NULL);
	assert_int_equal(sqlite3_open(path, &writer), SQLITE_OK);
	assert_int_equal(sqlite3_exec(writer, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(trace_schema_open(path, &db, err, sizeof err), -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long long waited_ms = (t1.tv_sec - t0.tv_sec) * 1000LL + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_in_range(waited_ms, TRACE_BUSY_TIMEOUT_MS - 100, TRACE_BUSY_TIMEOUT_MS * 2);
	assert_null(db);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "in use by another process, which holds it locked"));
	sqlite3_close(writer);
	assert_int_equal(trace_schema_open(path, &db, err, sizeof err), 0);
	sqlite3_close(db);
}

static void schema_has_every_object(void **state)
{
	static const char *const names[] = {
		"meta", "string", "stream", "kernel", "alloc", "kernel_arg", "migration",
		"fault", "nvtx_range", "memcpy", "memset", "kernel_named", "kernel_access",
		"kernel_blocks", "nvtx_kernels", "kernel_migration", "kernel_launch", "graph_kernel",
	};
	sqlite3 *db;
	char err[256];
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(trace_schema_create(db, err, sizeof err), 0);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		sqlite3_stmt *st;
		assert_int_equal(sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = ?",
						    -1, &st, NULL),
				 SQLITE_OK);
		sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_ROW)
			fail_msg("schema lacks %s", names[i]);
		sqlite3_finalize(st);
	}
	/* A second create fails cleanly and leaves the database as it was. */
	assert_int_equal(trace_schema_create(db, err, sizeof err), -1);
	assert_non_null(strstr(err, "already exists"));
	assert_int_equal(sqlite3_get_autocommit(db), 1);
	sqlite3_close(db);
}

static void missing_table_named(void **state)
{
	char path[512], err[256];
	make_trace(path, sizeof path, "no-memset.db", "DROP TABLE memset");
	open_fails(path, err, sizeof err);
	assert_non_null(strstr(err, "missing table memset"));

	make_trace(path, sizeof path, "no-view.db", "DROP VIEW kernel_blocks");
	open_fails(path, err, sizeof err);
	assert_non_null(strstr(err, "missing view kernel_blocks"));
}

/* A version-1 trace lacks graph_kernel, which version 2 added: it opens,
 * and readers find the table missing; a version-2 trace without it is
 * refused. */
static void table_a_later_version_added(void **state)
{
	char path[512], err[256] = "";
	sqlite3 *db;
	uint64_t n = 99;
	make_trace(path, sizeof path, "v1.db", "DROP TABLE graph_kernel; PRAGMA user_version = 1");
	assert_int_equal(trace_schema_open(path, &db, err, sizeof err), 0);
	assert_false(trace_schema_has_table(db, "graph_kernel"));
	assert_int_equal(trace_schema_count(db, "graph_kernel", &n), 0);
	assert_int_equal(n, 0);
	assert_true(trace_schema_has_table(db, "KERNEL"));
	assert_false(trace_schema_has_table(db, "kernel_named")); /* a view */
	assert_int_equal(trace_schema_count(db, "kernel", &n), 0);
	assert_int_equal(n, 0);
	sqlite3_close(db);

	make_trace(path, sizeof path, "v2-no-graphs.db", "DROP TABLE graph_kernel");
	open_fails(path, err, sizeof err);
	assert_non_null(strstr(err, "missing table graph_kernel"));

	make_trace(path, sizeof path, "graphs-no-column.db", "ALTER TABLE graph_kernel DROP COLUMN graph_node_id");
	open_fails(path, err, sizeof err);
	assert_non_null(strstr(err, "graph_node_id"));
}

static void missing_column_named(void **state)
{
	char path[512], err[256];
	make_trace(path, sizeof path, "no-column.db", "ALTER TABLE memcpy DROP COLUMN stream_id");
	open_fails(path, err, sizeof err);
	assert_non_null(strstr(err, "table memcpy has no column stream_id"));
}

static void newer_version_named(void **state)
{
	char path[512], err[256], want[600];
	make_trace(path, sizeof path, "v7.db", "PRAGMA user_version = 7");
	open_fails(path, err, sizeof err);
	snprintf(want, sizeof want, "%s: schema version 7 is newer than this umkit understands (%d)",
		 path, TRACE_SCHEMA_VERSION);
	assert_string_equal(err, want);
}

static void other_sqlite_database_refused(void **state)
{
	char path[512], err[256];
	sqlite3 *db;
	test_path(path, sizeof path, "other.db");
	unlink(path);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	open_fails(path, err, sizeof err);
	assert_non_null(strstr(err, "not a umkit trace"));
}

static void not_a_database_named(void **state)
{
	char path[512], err[256];
	test_path(path, sizeof path, "text.db");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 200; i++)
		fputs("this is a text file, not a trace\n", f);
	fclose(f);
	open_fails(path, err, sizeof err);
	assert_non_null(strstr(err, "not a SQLite database"));
}

static void missing_file_named(void **state)
{
	char path[512], err[256];
	test_path(path, sizeof path, "does-not-exist.db");
	open_fails(path, err, sizeof err);
	assert_non_null(strstr(err, "No such file or directory"));

	test_path(path, sizeof path, "");
	open_fails(path, err, sizeof err);
	assert_non_null(strstr(err, "Is a directory"));
}

static void meta_values(void **state)
{
	char path[512], err[256], value[9];
	sqlite3 *db;
	make_trace(path, sizeof path, "meta.db",
		   "INSERT INTO meta VALUES ('status', 'complete'), ('nothing', NULL),"
		   "('command', 'python train.py --epochs 3')");
	assert_int_equal(trace_schema_open(path, &db, err, sizeof err), 0);
	assert_int_equal(trace_schema_meta(db, "status", value, sizeof value), 1);
	assert_string_equal(value, "complete");
	assert_int_equal(trace_schema_meta(db, "nothing", value, sizeof value), 1);
	assert_string_equal(value, "");
	assert_int_equal(trace_schema_meta(db, "command", value, sizeof value), 1);
	assert_string_equal(value, "python t"); /* truncated to the buffer */
	strcpy(value, "junk");
	assert_int_equal(trace_schema_meta(db, "absent", value, sizeof value), 0);
	assert_string_equal(value, "");
	sqlite3_close(db);
}

/* kernel_blocks counts the distinct 2 MiB blocks of a kernel's
 * allocations: two small ones in one block count once, and the block
 * numbers of a span may start inside the one before. */
static void kernel_blocks_counts_shared_blocks_once(void **state)
{
	char path[512], err[256];
	sqlite3 *db;
	make_trace(path, sizeof path, "blocks.db",
		   "INSERT INTO string VALUES (1, 'k');"
		   "INSERT INTO kernel(correlation_id, seq, exec_id, name_id, grid_x, grid_y, grid_z,"
		   " block_x, block_y, block_z, shared_mem, launch_ns, start_ns, end_ns) VALUES"
		   " (10, 0, 1, 1, 1, 1, 1, 32, 1, 1, 0, 0, 1, 2), (11, 1, 1, 1, 1, 1, 1, 32, 1, 1, 0, 3, 4, 5),"
		   " (12, 2, 1, 1, 1, 1, 1, 32, 1, 1, 0, 6, 7, 8);"
		   /* blocks 1, 1, 1-4 (starting in block 1), 8 */
		   "INSERT INTO alloc(id, address, size, reserved, api, alloc_ns) VALUES"
		   " (1, 2097152, 1048576, 1048576, 'cudaMalloc', 0),"
		   " (2, 3145728, 524288, 524288, 'cudaMalloc', 0),"
		   " (3, 3670016, 6291456, 6291456, 'cudaMalloc', 0),"
		   " (4, 16777216, 2097152, 2097152, 'cudaMalloc', 0);"
		   "INSERT INTO kernel_arg VALUES (10, 0, 1, 0), (10, 1, 2, 0), (10, 2, 3, 0),"
		   " (12, 0, 1, 0), (12, 1, 4, 0);");
	assert_int_equal(trace_schema_open(path, &db, err, sizeof err), 0);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT allocations, blocks FROM kernel_blocks ORDER BY seq",
					    -1, &st, NULL), SQLITE_OK);
	const int want[3][2] = { { 3, 4 }, { 0, 0 }, { 2, 2 } };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(st, 0), want[i][0]);
		assert_int_equal(sqlite3_column_int(st, 1), want[i][1]);
	}
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fresh_trace_validates),
		cmocka_unit_test(hot_journal_rolled_back),
		cmocka_unit_test(replaceable_only_traces),
		cmocka_unit_test(open_says_a_locked_trace_is_in_use),
		cmocka_unit_test(schema_has_every_object),
		cmocka_unit_test(missing_table_named),
		cmocka_unit_test(table_a_later_version_added),
		cmocka_unit_test(missing_column_named),
		cmocka_unit_test(newer_version_named),
		cmocka_unit_test(other_sqlite_database_refused),
		cmocka_unit_test(not_a_database_named),
		cmocka_unit_test(missing_file_named),
		cmocka_unit_test(meta_values),
		cmocka_unit_test(kernel_blocks_counts_shared_blocks_once),
	};
	return cmocka_run_group_tests_name("trace_schema", tests, NULL, NULL);
}
