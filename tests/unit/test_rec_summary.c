/*
 * Unit tests for record/rec_summary.c on small traces made with the real
 * schema: a complete one, one left by a killed recorder (WAL not
 * checkpointed), an empty one, a missing file and a foreign file.
 */
#include "testutil.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <sqlite3.h>

#include "record/rec_summary.h"
#include "record/trace_writer.h"
#include "trace_schema.h"

static const char rows_sql[] =
	"INSERT INTO string VALUES (1, 'gemm'), (2, 'step');"
	"INSERT INTO kernel (correlation_id, seq, name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z,"
	" shared_mem) VALUES (10, 0, 1, 1, 1, 1, 32, 1, 1, 0), (11, 1, 1, 1, 1, 1, 32, 1, 1, 0),"
	" (12, 2, 1, 1, 1, 1, 32, 1, 1, 0);"
	"INSERT INTO alloc (id, address, size, reserved, api, alloc_ns, free_ns, live_at_exit) VALUES"
	" (1, 4194304, 100, 2097152, 'cudaMalloc', 1, 5, 0), (2, 6291456, 100, 2097152, 'cudaMalloc', 2, 6, 0),"
	" (3, 8388608, 100, 2097152, 'cudaMalloc', 3, NULL, 1);"
	"INSERT INTO migration (start_ns, end_ns, address, bytes, direction, cause) VALUES"
	" (1, 2, 4194304, 2097152, 'htod', 'fault'), (3, 4, 6291456, 1048576, 'htod', 'prefetch'),"
	" (5, 6, 4194304, 4096, 'dtoh', 'eviction'), (7, 8, 4194304, 65536, 'dtoh', 'fault');"
	"INSERT INTO fault (start_ns, end_ns, address, access, groups) VALUES (1, 1, 4194304, 'read', 1),"
	" (2, 2, 4194400, 'write', 1);"
	"INSERT INTO nvtx_range (name_id, start_ns, end_ns) VALUES (2, 0, 10);"
	"INSERT INTO graph_kernel (correlation_id, graph_id, graph_node_id, name_id, grid_x, grid_y, grid_z,"
	" block_x, block_y, block_z, shared_mem, stream_id, start_ns, end_ns) VALUES"
	" (20, 1, 1, 1, 1, 1, 1, 32, 1, 1, 0, 7, 11, 12), (20, 1, 2, 1, 1, 1, 1, 32, 1, 1, 0, 7, 13, 14);"
	"INSERT INTO meta VALUES ('captured_launches', '2');"
	"INSERT INTO meta VALUES ('messages_not_kept', '4');";

/* Creates a trace at path with the schema, meta.status = status and, when
 * with_rows, the rows above. */
static void make_trace(const char *path, const char *status, int with_rows)
{
	sqlite3 *db;
	char err[512], sql[256];
	unlink(path);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(trace_schema_create(db, err, sizeof err), 0);
	snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO meta VALUES ('status', '%s')", status);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	if (with_rows) {
		assert_int_equal(sqlite3_exec(db, rows_sql, NULL, NULL, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_exec(db, "INSERT INTO meta VALUES ('dropped_records', '5')", NULL, NULL,
					      NULL),
				 SQLITE_OK);
	}
	sqlite3_close(db);
}

/* Runs sql on the trace at path, then reads and formats it again. */
static void reread_after(const char *path, const char *sql, struct rec_summary *s, char *text, size_t len)
{
	sqlite3 *db;
	char err[512];
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(rec_summary_read(path, s, err, sizeof err), 0);
	rec_summary_format(s, path, 0, text, len);
}

static void summary_counts_a_complete_trace(void **state)
{
	char path[512], err[512], text[2048];
	test_path(path, sizeof path, "complete.db");
	make_trace(path, "complete", 1);

	struct rec_summary s;
	assert_int_equal(rec_summary_read(path, &s, err, sizeof err), 0);
	assert_string_equal(s.status, "complete");
	assert_int_equal(s.kernels, 3);
	assert_int_equal(s.allocs, 3);
	assert_int_equal(s.allocs_freed, 2);
	assert_int_equal(s.allocs_live, 1);
	assert_int_equal(s.migrations, 4);
	assert_int_equal(s.htod_bytes, 3 << 20);
	assert_int_equal(s.dtoh_bytes, 4096 + 65536);
	assert_int_equal(s.fault_bytes, 2 << 20); /* HtoD on demand only */
	assert_int_equal(s.faults, 2);
	assert_int_equal(s.nvtx_ranges, 1);
	assert_int_equal(s.dropped_records, 5);
	assert_int_equal(s.graph_kernels, 2);
	assert_int_equal(s.captured_launches, 2);
	assert_int_equal(s.messages_not_kept, 4);
	assert_true(s.disk_bytes > 0);
	assert_null(rec_summary_problem(&s, false));

	rec_summary_format(&s, path, 12300000000ULL, text, sizeof text);
	assert_non_null(strstr(text, path));
	assert_non_null(strstr(text, "complete"));
	assert_non_null(strstr(text, "12.3 s"));
	assert_non_null(strstr(text, "kernels      3"));
	assert_non_null(strstr(text, "allocations  3 (2 freed, 1 live at exit)"));
	assert_non_null(strstr(text, "migrations   4: 3.00 MiB to the GPU (2.00 MiB on demand), 68.00 KiB to the host"));
	assert_non_null(strstr(text, "faults       2 records"));
	assert_non_null(strstr(text, "NVTX ranges  1 (4 named '" TRACE_WRITER_MESSAGE_NOT_KEPT "')"));
	assert_non_null(strstr(text, "dropped      5"));
	assert_non_null(strstr(text, "CUDA graphs  2 kernels run from graphs (not planned), 2 launches captured"));
	assert_int_not_equal(text[strlen(text) - 1], '\n');
	assert_null(strstr(text, "device reset"));
	assert_false(s.device_reset);
	assert_int_equal(s.runtime_allocs, 0);
	assert_null(strstr(text, "not served"));

	/* A program that reset the device after its second kernel's launch. */
	reread_after(path, "UPDATE kernel SET launch_ns = seq * 4 + 1;"
			   "INSERT INTO meta VALUES ('device_reset_ns', '7')", &s, text, sizeof text);
	assert_true(s.device_reset);
	assert_int_equal(s.kernels_after_reset, 1);
	assert_non_null(strstr(text, "device reset the program reset the device: its memory from then on is not "
				     "recorded, and the 1 kernels launched after it are not planned"));

	/* A program on two GPUs: the kernel on a stream of another context
	 * than the arena's is counted; a trace without the key counts none.
	 * The one launched after the reset (seq 2) ran in the device's new
	 * context, and counts as after the reset alone. */
	assert_int_equal(s.other_context_kernels, 0);
	assert_null(strstr(text, "another CUDA context"));
	reread_after(path, "INSERT INTO stream(id, context_id) VALUES (31, 1), (32, 2);"
			   "UPDATE kernel SET stream_id = CASE WHEN seq >= 1 THEN 32 ELSE 31 END;"
			   "INSERT INTO meta VALUES ('arena_context_id', '1')", &s, text, sizeof text);
	assert_int_equal(s.kernels_after_reset, 1);
	assert_int_equal(s.other_context_kernels, 1);
	assert_non_null(strstr(text, "contexts     1 kernels launched in another CUDA context than the arena's, "
				     "another GPU's or one the program made (not planned)"));

	/* Memory the runtime served instead of the arena. */
	reread_after(path, "INSERT INTO meta VALUES ('runtime_allocs', '3');"
			   "INSERT INTO meta VALUES ('runtime_alloc_bytes', '12582912')", &s, text, sizeof text);
	assert_int_equal(s.runtime_allocs, 3);
	assert_non_null(strstr(text, "not served   3 allocations (12.00 MiB) the runtime served in the arena's "
				     "stead: not umkit's, not recorded"));

	/* Memory got through the driver, past the shim. */
	reread_after(path, "INSERT INTO meta VALUES ('driver_allocs', '2');"
			   "INSERT INTO meta VALUES ('driver_alloc_bytes', '41943040')", &s, text, sizeof text);
	assert_int_equal(s.driver_allocs, 2);
	assert_int_equal(s.driver_alloc_bytes, 41943040);
	assert_non_null(strstr(text, "not served   2 allocations (40.00 MiB) made through the driver, past "
				     "umkit's allocator: not umkit's, not recorded"));
	reread_after(path, "INSERT INTO meta VALUES ('driver_alloc_peak_bytes', '33554432')", &s, text, sizeof text);
	assert_int_equal(s.driver_alloc_peak_bytes, 33554432);
	assert_non_null(strstr(text, "not served   2 allocations (40.00 MiB) made through the driver, past "
				     "umkit's allocator, at most 32.00 MiB held at once: not umkit's, not recorded"));
	assert_null(strstr(text, "managed memory"));

	/* Managed memory got so, on a line of its own. */
	reread_after(path, "INSERT INTO meta VALUES ('driver_managed_allocs', '3');"
			   "INSERT INTO meta VALUES ('driver_managed_alloc_bytes', '12582912');"
			   "INSERT INTO meta VALUES ('driver_managed_alloc_peak_bytes', '8388608')", &s, text, sizeof text);
	assert_int_equal(s.driver_managed_allocs, 3);
	assert_int_equal(s.driver_managed_alloc_bytes, 12582912);
	assert_int_equal(s.driver_managed_alloc_peak_bytes, 8388608);
	assert_non_null(strstr(text, "not served   2 allocations (40.00 MiB) made through the driver, past "
				     "umkit's allocator, at most 32.00 MiB held at once: not umkit's, not recorded\n"
				     "  not served   3 allocations (12.00 MiB) of managed memory made through the driver, "
				     "past umkit's allocator, at most 8.00 MiB held at once: not recorded, not planned"));

	/* A small buffer truncates cleanly. */
	char tiny[16];
	rec_summary_format(&s, path, 0, tiny, sizeof tiny);
	assert_true(strlen(tiny) < sizeof tiny);
}

static void summary_reads_a_killed_recording(void **state)
{
	char path[512], wal[600], err[512];
	test_path(path, sizeof path, "killed.db");
	snprintf(wal, sizeof wal, "%s-wal", path);
	unlink(path);
	unlink(wal);
	/* A recorder killed mid-run: WAL mode, committed rows, never closed. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *db;
		char e[512];
		if (sqlite3_open(path, &db) != SQLITE_OK ||
		    sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL) != SQLITE_OK ||
		    trace_schema_create(db, e, sizeof e) != 0 ||
		    sqlite3_exec(db, "INSERT OR REPLACE INTO meta VALUES ('status', 'recording')", NULL, NULL, NULL) ||
		    sqlite3_exec(db, rows_sql, NULL, NULL, NULL) != SQLITE_OK)
			_exit(1);
		_exit(0);
	}
	int ws;
	waitpid(pid, &ws, 0);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	assert_int_equal(access(wal, F_OK), 0);

	struct rec_summary s;
	assert_int_equal(rec_summary_read(path, &s, err, sizeof err), 0);
	assert_string_equal(s.status, "recording");
	assert_int_equal(s.kernels, 3);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(s.disk_bytes > (uint64_t)st.st_size); /* the -wal counts */
	/* The killed child's trace: umrec knows from the signal. */
	const char *problem = rec_summary_problem(&s, true);
	assert_non_null(problem);
	assert_non_null(strstr(problem, "incomplete (status=recording): the program was killed"));
	/* The same trace after an exit with no signal: _exit, not killed. */
	problem = rec_summary_problem(&s, false);
	assert_non_null(problem);
	assert_non_null(strstr(problem, "incomplete (status=recording): the program exited without running its "
				       "exit handlers (_exit"));
}

static void summary_flags_an_empty_trace(void **state)
{
	char path[512], err[512];
	test_path(path, sizeof path, "empty.db");
	make_trace(path, "complete", 0);
	struct rec_summary s;
	assert_int_equal(rec_summary_read(path, &s, err, sizeof err), 0);
	assert_int_equal(s.kernels, 0);
	assert_int_equal(s.dropped_records, 0);
	assert_int_equal(s.graph_kernels, 0);
	char text[2048];
	assert_null(strstr(rec_summary_format(&s, path, 0, text, sizeof text), "CUDA graphs"));

	/* A version-1 trace has no graph_kernel table: it reads, none counted. */
	reread_after(path, "DROP TABLE graph_kernel; PRAGMA user_version = 1", &s, text, sizeof text);
	assert_int_equal(s.graph_kernels, 0);
	assert_null(strstr(text, "CUDA graphs"));
	assert_string_equal(rec_summary_problem(&s, false), "no CUDA activity was recorded: did the program use the GPU?");
}

/* A program whose kernels all ran from CUDA graphs, on memory umkit did not
 * serve, has no kernel or alloc row: its graph_kernel rows are activity
 * all the same, and the summary must not ask whether it used the GPU. */
static void summary_graph_kernels_are_activity(void **state)
{
	char path[512];
	test_path(path, sizeof path, "graphs_only.db");
	make_trace(path, "complete", 0);
	struct rec_summary s;
	char text[2048];
	reread_after(path,
		     "INSERT INTO string VALUES (1, 'gemm');"
		     "INSERT INTO graph_kernel (correlation_id, graph_id, graph_node_id, name_id, grid_x, grid_y,"
		     " grid_z, block_x, block_y, block_z, shared_mem, stream_id, start_ns, end_ns) VALUES"
		     " (20, 1, 1, 1, 1, 1, 1, 32, 1, 1, 0, 7, 11, 12)",
		     &s, text, sizeof text);
	assert_int_equal(s.kernels, 0);
	assert_int_equal(s.allocs, 0);
	assert_int_equal(s.graph_kernels, 1);
	assert_non_null(strstr(text, "CUDA graphs  1 kernels run from graphs"));
	assert_null(rec_summary_problem(&s, false));
}

static void summary_missing_and_foreign_files(void **state)
{
	char path[512], err[512] = "";
	struct rec_summary s;
	test_path(path, sizeof path, "never-written.db");
	unlink(path);
	assert_int_equal(rec_summary_read(path, &s, err, sizeof err), 1);

	/* Claimed by the recorder, never opened: nothing recorded; but an
	 * empty file beside a log holds a trace still in its log. */
	test_path(path, sizeof path, "claimed.db");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(rec_summary_read(path, &s, err, sizeof err), 1);
	char wal[600];
	snprintf(wal, sizeof wal, "%s-wal", path);
	f = fopen(wal, "w");
	assert_non_null(f);
	fputs("not a real log", f);
	fclose(f);
	assert_int_equal(rec_summary_read(path, &s, err, sizeof err), -1);
	unlink(wal);
	unlink(path);

	test_path(path, sizeof path, "foreign.db");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("hello, not a database\n", f);
	fclose(f);
	assert_int_equal(rec_summary_read(path, &s, err, sizeof err), -1);
	assert_non_null(strstr(err, path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(summary_counts_a_complete_trace),
		cmocka_unit_test(summary_reads_a_killed_recording),
		cmocka_unit_test(summary_flags_an_empty_trace),
		cmocka_unit_test(summary_graph_kernels_are_activity),
		cmocka_unit_test(summary_missing_and_foreign_files),
	};
	return cmocka_run_group_tests_name("rec_summary", tests, NULL, NULL);
}
