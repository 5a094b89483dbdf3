/* rec_summary.c: the end-of-recording summary (see rec_summary.h). */
#include "rec_summary.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "size.h"
#include "trace_schema.h"
#include "trace_writer.h"

/* Runs a one-row query and stores its integer columns (NULL reads as 0). */
static int query_row(sqlite3 *db, const char *sql, uint64_t *const cols[], int ncols)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < ncols; i++)
			*cols[i] = (uint64_t)sqlite3_column_int64(st, i);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : -1;
}

/* The count meta.key holds; 0 when absent. */
static uint64_t meta_count(sqlite3 *db, const char *key)
{
	char value[32];
	return trace_schema_meta(db, key, value, sizeof value) == 1 ? strtoull(value, NULL, 10) : 0;
}

int rec_summary_read(const char *path, struct rec_summary *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	struct stat st, wal_st;
	char wal[PATH_MAX];
	snprintf(wal, sizeof wal, "%s-wal", path);
	if (stat(path, &st) != 0) {
		if (errno == ENOENT)
			return 1;
	} else if (S_ISREG(st.st_mode) && st.st_size == 0 && (stat(wal, &wal_st) != 0 || wal_st.st_size == 0)) {
		/* Empty, with no log beside it: the file the recorder claimed,
		 * never opened as a trace (its opening failed, or the run ended
		 * first). */
		return 1;
	}

	sqlite3 *db;
	if (trace_schema_open(path, &db, err, errlen) != 0)
		return -1;
	trace_schema_meta(db, "status", out->status, sizeof out->status);
	out->dropped_records = meta_count(db, "dropped_records");
	out->captured_launches = meta_count(db, "captured_launches");
	out->runtime_allocs = meta_count(db, "runtime_allocs");
	out->runtime_alloc_bytes = meta_count(db, "runtime_alloc_bytes");
	out->driver_allocs = meta_count(db, "driver_allocs");
	out->driver_alloc_bytes = meta_count(db, "driver_alloc_bytes");
	out->driver_alloc_peak_bytes = meta_count(db, "driver_alloc_peak_bytes");
	out->driver_managed_allocs = meta_count(db, "driver_managed_allocs");
	out->driver_managed_alloc_bytes = meta_count(db, "driver_managed_alloc_bytes");
	out->driver_managed_alloc_peak_bytes = meta_count(db, "driver_managed_alloc_peak_bytes");
	out->messages_not_kept = meta_count(db, "messages_not_kept");

	static const char alloc_sql[] = "SELECT count(*), count(free_ns), sum(live_at_exit) FROM alloc";
	static const char migration_sql[] =
		"SELECT count(*), sum(CASE WHEN direction = 'htod' THEN bytes END),"
		" sum(CASE WHEN direction = 'dtoh' THEN bytes END),"
		" sum(CASE WHEN direction = 'htod' AND cause = 'fault' THEN bytes END) FROM migration";
	const struct {
		const char *sql;
		uint64_t *cols[4];
		int ncols;
	} queries[] = {
		{ "SELECT count(*) FROM kernel", { &out->kernels }, 1 },
		{ alloc_sql, { &out->allocs, &out->allocs_freed, &out->allocs_live }, 3 },
		{ migration_sql, { &out->migrations, &out->htod_bytes, &out->dtoh_bytes, &out->fault_bytes }, 4 },
		{ "SELECT count(*) FROM fault", { &out->faults }, 1 },
		{ "SELECT count(*) FROM nvtx_range", { &out->nvtx_ranges }, 1 },
	};
	for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++)
		if (query_row(db, queries[i].sql, queries[i].cols, queries[i].ncols) != 0)
			goto failed;
	if (trace_schema_count(db, "graph_kernel", &out->graph_kernels) != 0)
		goto failed;
	char value[32], sql[192];
	long long reset_ns = LLONG_MAX;
	if (trace_schema_meta(db, "device_reset_ns", value, sizeof value) == 1) {
		out->device_reset = true;
		reset_ns = strtoll(value, NULL, 10);
		snprintf(sql, sizeof sql, "SELECT count(*) FROM kernel WHERE launch_ns >= %lld", reset_ns);
		if (query_row(db, sql, (uint64_t *const[]){ &out->kernels_after_reset }, 1) != 0)
			goto failed;
	}
	/* Before the reset: the device's context after it is a new one. */
	if (trace_schema_meta(db, "arena_context_id", value, sizeof value) == 1) {
		snprintf(sql, sizeof sql, "SELECT count(*) FROM kernel k JOIN stream s ON s.id = k.stream_id "
			 "WHERE k.seq IS NOT NULL AND s.context_id != %lld AND k.launch_ns < %lld",
			 strtoll(value, NULL, 10), reset_ns);
		if (query_row(db, sql, (uint64_t *const[]){ &out->other_context_kernels }, 1) != 0)
			goto failed;
	}
	sqlite3_close(db);

	/* Until a checkpoint, most of the trace may sit in the -wal file. */
	out->disk_bytes = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
	if (stat(wal, &st) == 0)
		out->disk_bytes += (uint64_t)st.st_size;
	return 0;
failed:
	snprintf(err, errlen, "%s: %s", path, trace_schema_errmsg(db));
	sqlite3_close(db);
	return -1;
}

const char *rec_summary_problem(const struct rec_summary *s, bool killed)
{
	/* Where no signal ended the command, the recording process ran no
	 * exit handler (_exit), or it was a child of the command that was
	 * killed while the command went on. */
	if (strcmp(s->status, "recording") == 0)
		return killed ? "the trace is incomplete (status=recording): the program was killed before the "
				"recorder finished; it holds what was recorded up to then"
			      : "the trace is incomplete (status=recording): the program exited without running "
				"its exit handlers (_exit, as Python's os._exit does), or a process of it was "
				"killed, before the recorder finished; it holds what was recorded up to then";
	if (strcmp(s->status, "failed") == 0)
		return "the recorder could not set up CUPTI (its message above says why, as does "
		       "meta.error): nothing was recorded";
	if (strcmp(s->status, "complete") != 0)
		return "the trace has no valid status: it was not finished by libumrec";
	/* The kernels CUDA graphs ran are activity too: a program may run
	 * all its kernels from graphs, on memory umkit does not serve. */
	if (s->kernels == 0 && s->graph_kernels == 0 && s->allocs == 0 && s->migrations == 0)
		return "no CUDA activity was recorded: did the program use the GPU?";
	return NULL;
}

static const char *format_elapsed(uint64_t ns, char *buf, size_t len)
{
	double s = (double)ns / 1e9;
	unsigned long whole = (unsigned long)s;
	if (s < 60)
		snprintf(buf, len, "%.1f s", s);
	else if (whole < 3600)
		snprintf(buf, len, "%lu min %02lu s", whole / 60, whole % 60);
	else
		snprintf(buf, len, "%lu h %02lu min", whole / 3600, whole / 60 % 60);
	return buf;
}

/* snprintf that appends to buf and never runs past its end. */
static void add(char *buf, size_t len, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	if (*used >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

const char *rec_summary_format(const struct rec_summary *s, const char *path, uint64_t elapsed_ns, char *buf,
			       size_t len)
{
	char disk[32], time[32], htod[32], dtoh[32], fault[32], runtime[32], driver[32], managed_peak[32];
	size_t used = 0;
	if (len == 0)
		return buf;
	buf[0] = '\0';
	add(buf, len, &used, "trace %s: %s, %s on disk, recorded in %s", path, s->status[0] ? s->status : "no status",
	    um_size_format(s->disk_bytes, disk, sizeof disk), format_elapsed(elapsed_ns, time, sizeof time));
	add(buf, len, &used, "\n  kernels      %" PRIu64, s->kernels);
	add(buf, len, &used, "\n  allocations  %" PRIu64 " (%" PRIu64 " freed, %" PRIu64 " live at exit)", s->allocs,
	    s->allocs_freed, s->allocs_live);
	add(buf, len, &used, "\n  migrations   %" PRIu64 ": %s to the GPU (%s on demand), %s to the host",
	    s->migrations, um_size_format(s->htod_bytes, htod, sizeof htod),
	    um_size_format(s->fault_bytes, fault, sizeof fault), um_size_format(s->dtoh_bytes, dtoh, sizeof dtoh));
	add(buf, len, &used, "\n  faults       %" PRIu64 " records (a sample of the GPU page faults)", s->faults);
	add(buf, len, &used, "\n  NVTX ranges  %" PRIu64, s->nvtx_ranges);
	if (s->messages_not_kept)
		add(buf, len, &used, " (%" PRIu64 " named '%s')", s->messages_not_kept, TRACE_WRITER_MESSAGE_NOT_KEPT);
	if (s->graph_kernels || s->captured_launches)
		add(buf, len, &used, "\n  CUDA graphs  %" PRIu64 " kernels run from graphs (not planned), %" PRIu64
		    " launches captured", s->graph_kernels, s->captured_launches);
	if (s->device_reset)
		add(buf, len, &used, "\n  device reset the program reset the device: its memory from then on is not "
		    "recorded, and the %" PRIu64 " kernels launched after it are not planned", s->kernels_after_reset);
	if (s->other_context_kernels)
		add(buf, len, &used, "\n  contexts     %" PRIu64 " kernels launched in another CUDA context than the "
		    "arena's, another GPU's or one the program made (not planned)", s->other_context_kernels);
	if (s->runtime_allocs)
		add(buf, len, &used, "\n  not served   %" PRIu64 " allocations (%s) the runtime served in the arena's "
		    "stead: not umkit's, not recorded", s->runtime_allocs,
		    um_size_format(s->runtime_alloc_bytes, runtime, sizeof runtime));
	if (s->driver_allocs) {
		add(buf, len, &used, "\n  not served   %" PRIu64 " allocations (%s) made through the driver, past "
		    "umkit's allocator", s->driver_allocs, um_size_format(s->driver_alloc_bytes, driver, sizeof driver));
		if (s->driver_alloc_peak_bytes) /* a trace from before umkit kept it has none */
			add(buf, len, &used, ", at most %s held at once",
			    um_size_format(s->driver_alloc_peak_bytes, driver, sizeof driver));
		add(buf, len, &used, ": not umkit's, not recorded");
	}
	if (s->driver_managed_allocs)
		add(buf, len, &used, "\n  not served   %" PRIu64 " allocations (%s) of managed memory made through the "
		    "driver, past umkit's allocator, at most %s held at once: not recorded, not planned",
		    s->driver_managed_allocs, um_size_format(s->driver_managed_alloc_bytes, driver, sizeof driver),
		    um_size_format(s->driver_managed_alloc_peak_bytes, managed_peak, sizeof managed_peak));
	if (s->dropped_records)
		add(buf, len, &used, "\n  dropped      %" PRIu64 " activity records (CUPTI ran out of buffers)",
		    s->dropped_records);
	return buf;
}
