/*
 * Unit tests for trace_writer: synthetic events from several threads, the
 * views on a hand-made run, error accounting, fork and crash safety.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <sqlite3.h>

#include "trace_schema.h"
#include "record/rec_summary.h"
#include "record/trace_writer.h"
#include "sql_trace.h"

#define MIB (1ULL << 20)
#define UM_BLOCK (2 * MIB)

/* ---- helpers ---- */

static trace_writer *open_writer(char *path, size_t len, const char *name,
				 const struct trace_writer_options *opt)
{
	char err[512] = "";
	test_path(path, len, name);
	trace_writer *w = trace_writer_open(path, opt, err, sizeof err);
	if (!w)
		fail_msg("trace_writer_open: %s", err);
	return w;
}

static void close_ok(trace_writer *w, uint64_t end_ns)
{
	char err[512] = "";
	if (trace_writer_close(w, end_ns, err, sizeof err) != 0)
		fail_msg("trace_writer_close: %s", err);
}

static sqlite3 *open_db(const char *path)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	return db;
}

/* The first column of the first row as text ("NULL" for NULL). */
static const char *q_text(sqlite3 *db, const char *sql, char *buf, size_t len)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) != SQLITE_ROW)
		fail_msg("%s: no row", sql);
	const unsigned char *v = sqlite3_column_text(st, 0);
	snprintf(buf, len, "%s", v ? (const char *)v : "NULL");
	sqlite3_finalize(st);
	return buf;
}

#define assert_query(db, sql, want)                                         \
	do {                                                                \
		char got_[4096];                                            \
		assert_string_equal(q_text((db), (sql), got_, sizeof got_), (want)); \
	} while (0)

/* Rows PRAGMA foreign_key_check reports: every reference that points at
 * nothing (kernel_arg -> alloc and kernel, kernel -> string, ...). */
static long long dangling_references(sqlite3 *db)
{
	sqlite3_stmt *st;
	long long n = 0;
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &st, NULL),
			 SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		n++;
	sqlite3_finalize(st);
	return n;
}

static int file_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

/* Copies the file src to dst; returns the byte count, -1 on error. */
static long copy_file(const char *src, const char *dst)
{
	char buf[65536];
	long total = 0;
	size_t n;
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	if (!in || !out)
		total = -1;
	while (total >= 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
		total = fwrite(buf, 1, n, out) == n ? total + (long)n : -1;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		total = -1;
	return total;
}

/* Reaps child pid into *status within about timeout_ms; false when it was
 * still running then, and was killed. */
static bool reap_within(pid_t pid, int timeout_ms, int *status)
{
	for (int waited = 0; waited < timeout_ms; waited++) {
		pid_t r = waitpid(pid, status, WNOHANG);
		assert_true(r >= 0);
		if (r == pid)
			return true;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return false;
}

/* waitpid with a deadline, so that a deadlocked child fails the test
 * instead of hanging it. */
static int wait_child(pid_t pid, int timeout_ms)
{
	int status;
	if (!reap_within(pid, timeout_ms, &status))
		fail_msg("child %d still running after %d ms", (int)pid, timeout_ms);
	return status;
}

/* ---- several producer threads ---- */

#define THREADS 4
#define LAUNCHES 20000
#define NAMES 50
#define LAUNCHES_PER_ALLOC 100
#define ALLOCS (LAUNCHES / LAUNCHES_PER_ALLOC)
#define FREE_LAG 5
#define ACTIVITY_LAG 16

struct producer {
	trace_writer *w;
	int t;
	int64_t name_ids[NAMES];
	int64_t nvtx_id;
	int mismatches; /* an intern answer that changed between calls */
	uint64_t args;  /* kernel_arg rows expected */
};

static uint64_t alloc_id(int t, int j)
{
	return (uint64_t)t * 100000 + (uint64_t)j + 1;
}

static uint32_t corr_of(int t, int i)
{
	return (uint32_t)(t * LAUNCHES + i + 1);
}

/* What the activity record of launch (t, i) says; the test checks the
 * table against these formulas in SQL. */
static void emit_activity(struct producer *p, int i)
{
	uint32_t c = corr_of(p->t, i);
	uint64_t launch_ns = 1000000 + (uint64_t)c * 10;
	struct trace_kernel_activity k = {
		.correlation_id = c, .name_id = p->name_ids[i % NAMES],
		.grid = { c % 7 + 1, 2, 1 }, .block = { 128, 1, 1 },
		.shared_mem = (c % 3) * 1024, .stream_id = 7 + (uint32_t)p->t,
		.start_ns = launch_ns + 500, .end_ns = launch_ns + 1500 + c % 5,
	};
	trace_writer_kernel(p->w, &k);
}

static void *produce(void *arg)
{
	struct producer *p = arg;
	char name[32];
	for (int i = 0; i < LAUNCHES; i++) {
		int j = i / LAUNCHES_PER_ALLOC;
		uint32_t c = corr_of(p->t, i);
		if (i % LAUNCHES_PER_ALLOC == 0) {
			struct trace_alloc a = {
				.id = alloc_id(p->t, j),
				.address = (0x7f00ULL << 32) + ((uint64_t)(p->t * 1000 + j) << 21),
				.size = 3 * MIB, .reserved = 4 * MIB, .api = "cudaMalloc",
				.alloc_ns = 1000000 + (uint64_t)c * 10 - 1, .thread_id = 100 + (uint32_t)p->t,
			};
			trace_writer_alloc(p->w, &a);
			if (j >= FREE_LAG)
				trace_writer_free(p->w, alloc_id(p->t, j - FREE_LAG), a.alloc_ns,
						  100 + (uint32_t)p->t);
		}
		snprintf(name, sizeof name, "kernel_%d", i % NAMES);
		int64_t id = trace_writer_intern(p->w, name);
		if (p->name_ids[i % NAMES] && p->name_ids[i % NAMES] != id)
			p->mismatches++;
		p->name_ids[i % NAMES] = id;

		struct trace_kernel_arg args[3] = {
			{ 0, alloc_id(p->t, j), (uint64_t)(i % 1000) * 8 },
			{ 8, alloc_id(p->t, j), 16 },
			{ 16, j > 0 ? alloc_id(p->t, j - 1) : 0, MIB },
		};
		struct trace_launch l = {
			.correlation_id = c, .seq = c - 1, .exec_id = (uint64_t)(i % NAMES) + 1,
			.name_id = id, .grid = { c % 7 + 1, 2, 1 }, .block = { 128, 1, 1 },
			.shared_mem = (c % 3) * 1024,
			.thread_id = 100 + (uint32_t)p->t, .launch_ns = 1000000 + (uint64_t)c * 10,
			.args = args, .nargs = j > 0 ? 3 : 2,
		};
		trace_writer_launch(p->w, &l);
		p->args += l.nargs;
		/* The caller's array is reused at once: the writer must have copied it. */
		memset(args, 0xff, sizeof args);

		if (i >= ACTIVITY_LAG)
			emit_activity(p, i - ACTIVITY_LAG);
		if (i % 10 == 0) {
			struct trace_migration m = {
				.start_ns = l.launch_ns + 600, .end_ns = l.launch_ns + 700,
				.address = (0x7f00ULL << 32) + ((uint64_t)(p->t * 1000 + j) << 21),
				.bytes = 65536, .direction = i % 20 ? TRACE_DTOH : TRACE_HTOD,
				.cause = i % 20 ? TRACE_CAUSE_EVICTION : TRACE_CAUSE_FAULT,
			};
			trace_writer_migration(p->w, &m);
		}
		if (i % 1000 == 0) {
			p->nvtx_id = trace_writer_intern(p->w, "iteration");
			struct trace_nvtx r = { p->nvtx_id, 100 + (uint32_t)p->t, l.launch_ns,
						l.launch_ns + 5000 };
			trace_writer_nvtx(p->w, &r);
		}
	}
	for (int i = LAUNCHES - ACTIVITY_LAG; i < LAUNCHES; i++)
		emit_activity(p, i);
	return NULL;
}

static void threads_exact_counts(void **state)
{
	char path[512];
	struct trace_writer_options opt = { .flush_interval_ms = 20 };
	trace_writer *w = open_writer(path, sizeof path, "threads.db", &opt);
	struct producer p[THREADS];
	pthread_t th[THREADS];
	uint64_t args = 0;
	for (int t = 0; t < THREADS; t++) {
		p[t] = (struct producer){ .w = w, .t = t };
		assert_int_equal(pthread_create(&th[t], NULL, produce, &p[t]), 0);
	}
	for (int t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		args += p[t].args;
	}
	/* Every thread got the same id for the same string, distinct ids for
	 * distinct strings. */
	for (int t = 0; t < THREADS; t++) {
		assert_int_equal(p[t].mismatches, 0);
		assert_int_equal(p[t].nvtx_id, p[0].nvtx_id);
		for (int k = 0; k < NAMES; k++) {
			assert_int_equal(p[t].name_ids[k], p[0].name_ids[k]);
			assert_int_not_equal(p[0].name_ids[k], p[0].nvtx_id);
			for (int m = 0; m < k; m++)
				assert_int_not_equal(p[0].name_ids[k], p[0].name_ids[m]);
		}
	}

	struct trace_writer_stats s;
	trace_writer_get_stats(w, &s);
	assert_int_equal(s.launches, THREADS * LAUNCHES);
	assert_int_equal(s.kernels, THREADS * LAUNCHES);
	assert_int_equal(s.allocs, THREADS * ALLOCS);
	assert_int_equal(s.migrations, THREADS * LAUNCHES / 10);
	assert_int_equal(s.nvtx_ranges, THREADS * LAUNCHES / 1000);
	assert_true(s.queue_peak > 0);
	assert_int_equal(s.dropped, 0);
	close_ok(w, 99); /* fails if any write failed, e.g. a free before its alloc */

	sqlite3 *db = open_db(path);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel"), THREADS * LAUNCHES);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel WHERE start_ns IS NULL "
				   "OR seq IS NULL OR launch_ns IS NULL"), 0);
	/* Every field landed in its column (the formulas of produce()). */
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel WHERE "
				   "seq != correlation_id - 1 OR grid_x != correlation_id % 7 + 1 "
				   "OR grid_y != 2 OR grid_z != 1 OR block_x != 128 OR block_y != 1 "
				   "OR block_z != 1 OR shared_mem != (correlation_id % 3) * 1024 "
				   "OR launch_ns != 1000000 + correlation_id * 10 "
				   "OR start_ns != launch_ns + 500 "
				   "OR end_ns != launch_ns + 1500 + correlation_id % 5 "
				   "OR stream_id != 7 + (correlation_id - 1) / 20000 "
				   "OR thread_id != 100 + (correlation_id - 1) / 20000 "
				   "OR exec_id != (correlation_id - 1) % 20000 % 50 + 1"), 0);
	/* Each thread's stream has its row, written once. */
	assert_int_equal(sql_int(db, "SELECT count(*) FROM stream"), THREADS);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel WHERE stream_id NOT IN "
				   "(SELECT id FROM stream)"), 0);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel_arg"), (long long)args);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel_arg a JOIN kernel k "
				   "USING (correlation_id) WHERE a.param_offset = 0 "
				   "AND a.offset != (k.seq % 20000 % 1000) * 8"), 0);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM alloc"), THREADS * ALLOCS);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM alloc WHERE free_ns IS NOT NULL"),
			 THREADS * (ALLOCS - FREE_LAG));
	assert_int_equal(sql_int(db, "SELECT count(*) FROM alloc WHERE stream_id IS NOT NULL "
				   "OR api != 'cudaMalloc' OR size != 3145728"), 0);
	/* Interned names are deduplicated: 50 kernel names and "iteration". */
	assert_int_equal(sql_int(db, "SELECT count(*) FROM string"), NAMES + 1);
	assert_int_equal(sql_int(db, "SELECT count(DISTINCT name_id) FROM kernel"), NAMES);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel k JOIN string s ON s.id = k.name_id "
				   "WHERE s.value != 'kernel_' || ((k.correlation_id - 1) % 20000 % 50)"),
			 0);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM migration"), THREADS * LAUNCHES / 10);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM migration WHERE direction = 'htod' "
				   "AND cause = 'fault'"), THREADS * LAUNCHES / 20);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM nvtx_range"), THREADS * LAUNCHES / 1000);
	assert_int_equal(dangling_references(db), 0);
	/* Each range spans the next 500 launches of its thread. */
	assert_query(db, "SELECT sum(kernels) FROM nvtx_kernels WHERE name = 'iteration'", "40000");
	sqlite3_close(db);
}

/* The queue never holds more than max_queued events: producers wait. */
static void backpressure_bounds_queue(void **state)
{
	char path[512];
	struct trace_writer_options opt = { .flush_interval_ms = 5, .batch_events = 64,
					    .max_queued = 256 };
	trace_writer *w = open_writer(path, sizeof path, "backpressure.db", &opt);
	struct trace_alloc a = { .id = 1, .address = 1ULL << 40, .size = MIB, .reserved = MIB,
				 .api = "cudaMalloc" };
	trace_writer_alloc(w, &a);
	int64_t name = trace_writer_intern(w, "k");
	for (uint32_t c = 1; c <= 20000; c++) {
		struct trace_kernel_arg args[3] = { { 0, 1, 0 }, { 8, 1, 8 }, { 16, 1, 16 } };
		struct trace_launch l = { .correlation_id = c, .seq = c, .name_id = name,
					  .args = args, .nargs = 3 };
		trace_writer_launch(w, &l);
	}
	struct trace_writer_stats s;
	trace_writer_get_stats(w, &s);
	assert_true(s.queue_peak > 0);
	assert_true(s.queue_peak <= 256);
	close_ok(w, 1);
	sqlite3 *db = open_db(path);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel"), 20000);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel_arg"), 60000);
	sqlite3_close(db);
}

/* A producer that waits for room kicks the writer, which must take the
 * queue then, not at its next flush (a minute here). batch_events =
 * max_queued: 4000 queued, a launch with 200 arguments does not fit. */
static void stalled_producer_wakes_the_writer(void **state)
{
	char path[512];
	struct trace_writer_options opt = { .flush_interval_ms = 60000, .batch_events = 4096,
					    .max_queued = 4096 };
	trace_writer *w = open_writer(path, sizeof path, "stall.db", &opt);
	int64_t name = trace_writer_intern(w, "k");
	for (uint32_t c = 1; c <= 3999; c++) {
		struct trace_launch l = { .correlation_id = c, .seq = c, .name_id = name };
		trace_writer_launch(w, &l);
	}
	static struct trace_kernel_arg args[200];
	for (int i = 0; i < 200; i++)
		args[i] = (struct trace_kernel_arg){ (uint32_t)(8 * i), 1, 0 };
	struct trace_launch big = { .correlation_id = 5000, .seq = 5000, .name_id = name,
				    .args = args, .nargs = 200 };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	trace_writer_launch(w, &big);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double waited_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("producer waited %.0f ms for room\n", waited_ms);
	close_ok(w, 1);
	assert_true(waited_ms < 30000);
}

/* A producer that waits for room again, another having filled what the
 * writer took, kicks the writer again: the first kick was spent on that
 * take. Two producers of a launch with 3000 arguments wait while the
 * writer is held in a batch (a lock on the trace); when it takes the next,
 * one fits and the other must not wait for the next flush (20 s). */
struct big_launch {
	trace_writer *w;
	uint32_t corr;
	double ms; /* how long the call took */
};

static struct trace_kernel_arg big_args[3000];

static void *launch_big(void *arg)
{
	struct big_launch *b = arg;
	struct trace_launch l = { .correlation_id = b->corr, .seq = b->corr, .args = big_args, .nargs = 3000 };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	trace_writer_launch(b->w, &l);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	b->ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	return NULL;
}

static void producer_waiting_again_wakes_the_writer(void **state)
{
	char path[512];
	struct trace_writer_options opt = { .flush_interval_ms = 20000, .batch_events = 4096,
					    .max_queued = 4096 };
	trace_writer *w = open_writer(path, sizeof path, "stall-again.db", &opt);
	for (uint32_t i = 0; i < 3000; i++)
		big_args[i] = (struct trace_kernel_arg){ 8 * i, 1, 0 };
	sqlite3 *holder = open_db(path);
	assert_int_equal(sqlite3_exec(holder, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	/* A full batch, which the writer takes and cannot begin to write,
	 * then 4000 events more: no launch of 3000 arguments fits. */
	for (uint32_t c = 1; c <= 8096; c++)
		trace_writer_launch(w, &(struct trace_launch){ .correlation_id = c, .seq = c });
	struct trace_writer_stats s;
	trace_writer_get_stats(w, &s);
	uint64_t stalls = s.stalls;
	pthread_t t[2];
	struct big_launch big[2] = { { w, 10001, 0 }, { w, 10002, 0 } };
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, launch_big, &big[i]), 0);
	for (int i = 0; i < 400 && s.stalls < stalls + 2; i++) {
		usleep(5000);
		trace_writer_get_stats(w, &s);
	}
	assert_int_equal(s.stalls, stalls + 2);
	assert_int_equal(sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(holder);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	print_message("the producers waited %.0f and %.0f ms for room\n", big[0].ms, big[1].ms);
	close_ok(w, 1);
	assert_true(big[0].ms < 10000 && big[1].ms < 10000);
	sqlite3 *db = open_db(path);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel_arg"), 6000);
	sqlite3_close(db);
}

/* ---- a hand-made run and the views over it ---- */

static void launch(trace_writer *w, uint32_t corr, uint64_t seq, int64_t name, uint64_t launch_ns,
		   const struct trace_kernel_arg *args, size_t nargs)
{
	struct trace_launch l = { .correlation_id = corr, .seq = seq, .exec_id = 1000 + seq,
				  .name_id = name, .grid = { 4, 1, 1 }, .block = { 256, 1, 1 },
				  .thread_id = 42, .launch_ns = launch_ns,
				  .args = args, .nargs = nargs };
	trace_writer_launch(w, &l);
}

static void activity(trace_writer *w, uint32_t corr, int64_t name, uint64_t start, uint64_t end)
{
	struct trace_kernel_activity k = { .correlation_id = corr, .name_id = name,
					   .grid = { 4, 1, 1 }, .block = { 256, 1, 1 },
					   .stream_id = 7, .start_ns = start, .end_ns = end };
	trace_writer_kernel(w, &k);
}

static void alloc(trace_writer *w, uint64_t id, uint64_t address, uint64_t size,
		  uint32_t stream_id)
{
	struct trace_alloc a = { .id = id, .address = address, .size = size, .reserved = size,
				 .api = stream_id ? "cudaMallocAsync" : "cudaMalloc",
				 .alloc_ns = 100 * id, .thread_id = 42, .stream_id = stream_id };
	trace_writer_alloc(w, &a);
}

static void migrate(trace_writer *w, uint64_t start, enum trace_direction dir,
		    enum trace_cause cause, uint64_t bytes)
{
	struct trace_migration m = { start, start + 50, 10 * UM_BLOCK, bytes, dir, cause };
	trace_writer_migration(w, &m);
}

static void views_on_hand_made_trace(void **state)
{
	char path[512];
	trace_writer *w = open_writer(path, sizeof path, "views.db", NULL);
	int64_t gemm = trace_writer_intern(w, "gemm");
	int64_t relu = trace_writer_intern(w, "relu");
	int64_t iter = trace_writer_intern(w, "iter");
	int64_t epoch = trace_writer_intern(w, "epoch");
	assert_int_equal(trace_writer_intern(w, "gemm"), gemm);
	assert_int_equal(trace_writer_intern(w, NULL), trace_writer_intern(w, ""));
	assert_true(gemm != relu && relu != iter && iter != epoch);

	struct trace_stream st = { 7, 1, 50 };
	trace_writer_stream(w, &st);
	alloc(w, 1, 10 * UM_BLOCK, 3 * MIB, 7); /* blocks 10-11 */
	alloc(w, 2, 20 * UM_BLOCK, 1 * MIB, 0); /* block 20 */
	alloc(w, 3, 30 * UM_BLOCK, 4 * MIB, 0); /* blocks 30-31 */

	struct trace_kernel_arg k1[] = { { 0, 1, 0 }, { 8, 2, 16 }, { 16, 1, MIB } };
	struct trace_kernel_arg k2[] = { { 0, 3, 0 } };
	launch(w, 101, 0, gemm, 1000, k1, 3);
	launch(w, 102, 1, relu, 1500, k2, 1);
	activity(w, 101, gemm, 2000, 3000);
	activity(w, 102, relu, 3000, 4000);
	launch(w, 103, 2, relu, 5000, NULL, 0);
	/* On a stream whose creation the recording did not see. */
	struct trace_kernel_activity k3 = { .correlation_id = 103, .name_id = relu,
					    .grid = { 4, 1, 1 }, .block = { 256, 1, 1 },
					    .stream_id = 13, .context_id = 1,
					    .start_ns = 6000, .end_ns = 6500 };
	trace_writer_kernel(w, &k3);

	struct trace_nvtx r1 = { iter, 42, 900, 1600 }, r2 = { iter, 42, 1600, 6000 },
			  r3 = { epoch, 42, 4000, 0 };
	trace_writer_nvtx(w, &r1);
	trace_writer_nvtx(w, &r2);
	trace_writer_nvtx(w, &r3);

	migrate(w, 2500, TRACE_HTOD, TRACE_CAUSE_FAULT, 65536);
	migrate(w, 2600, TRACE_DTOH, TRACE_CAUSE_EVICTION, 4096);
	migrate(w, 3000, TRACE_HTOD, TRACE_CAUSE_PREFETCH, 131072); /* k2's start, k1's end */
	migrate(w, 10000, TRACE_HTOD, TRACE_CAUSE_USER, 1);         /* no kernel running */

	struct trace_fault f = { 2400, 2450, 10 * UM_BLOCK + 4096, TRACE_ACCESS_WRITE, 3 };
	trace_writer_fault(w, &f);
	struct trace_memcpy c = { 200, "htod", 4096, 9, 1, 300, 400 };
	trace_writer_memcpy(w, &c);
	struct trace_memset ms = { 201, 8192, 0xab, 7, 1, 500, 600 };
	trace_writer_memset(w, &ms);
	/* The memset into allocation 3; the copy to memory none holds. */
	struct trace_write_dst set_dst = { 201, 30 * UM_BLOCK + 4096, 3 }, copy_dst = { 200, 1ULL << 50, 0 };
	trace_writer_write_dst(w, &set_dst);
	trace_writer_write_dst(w, &copy_dst);

	trace_writer_free(w, 2, 7000, 43);
	trace_writer_live_at_exit(w, 3);
	close_ok(w, 8000);

	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT seq || ':' || name || ':' || "
			 "duration_ns || ':' || exec_id AS x FROM kernel_named ORDER BY seq)",
		     "0:gemm:1000:1000 1:relu:1000:1001 2:relu:500:1002");
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT correlation_id || ':' || "
			 "alloc_id || ':' || first_block || '-' || last_block AS x "
			 "FROM kernel_access ORDER BY correlation_id, alloc_id)",
		     "101:1:10-11 101:2:20-20 102:3:30-31");
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT seq || ':' || name || ':' || "
			 "allocations || ':' || blocks AS x FROM kernel_blocks ORDER BY seq)",
		     "0:gemm:2:3 1:relu:1:2 2:relu:0:0");
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT name || ':' || kernels AS x "
			 "FROM nvtx_kernels ORDER BY range_id)",
		     "iter:2 iter:1 epoch:1");
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT seq || ':' || htod_bytes || ':' "
			 "|| dtoh_bytes || ':' || fault_bytes AS x FROM kernel_migration ORDER BY seq)",
		     "0:65536:4096:65536 1:131072:0:0");
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT id || ':' || api || ':' || "
			 "coalesce(stream_id, '-') || ':' || coalesce(free_ns, '-') || ':' || "
			 "coalesce(free_thread, '-') || ':' || live_at_exit AS x FROM alloc ORDER BY id)",
		     "1:cudaMallocAsync:7:-:-:0 2:cudaMalloc:-:7000:43:0 3:cudaMalloc:-:-:-:1");
	assert_query(db, "SELECT group_concat(direction || '/' || cause, ' ') FROM "
			 "(SELECT * FROM migration ORDER BY id)",
		     "htod/fault dtoh/eviction htod/prefetch htod/user");
	assert_query(db, "SELECT access || ':' || groups || ':' || address FROM fault",
		     "write:3:20975616");
	assert_query(db, "SELECT correlation_id || ':' || kind || ':' || bytes || ':' || "
			 "stream_id || ':' || start_ns || ':' || end_ns FROM memcpy",
		     "200:htod:4096:9:300:400");
	assert_query(db, "SELECT correlation_id || ':' || bytes || ':' || value || ':' || "
			 "stream_id || ':' || start_ns || ':' || end_ns FROM memset",
		     "201:8192:171:7:500:600");
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT correlation_id || ':' || address || ':' || "
			 "coalesce(alloc_id, 'NULL') AS x FROM write_dst ORDER BY correlation_id)",
		     "200:1125899906842624:NULL 201:62918656:3");
	/* Streams created while recording have their time; the others, named
	 * by a kernel or a copy, have a row without one. */
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT id || ':' || context_id || ':' || "
			 "coalesce(created_ns, '-') AS x FROM stream ORDER BY id)",
		     "7:1:50 9:1:- 13:1:-");
	assert_query(db, "SELECT coalesce(end_ns, 'open') FROM nvtx_range WHERE id = 3", "open");
	assert_int_equal(dangling_references(db), 0);
	sqlite3_close(db);
}

/* An activity record without a launch callback (an unseen launch) still
 * makes a row; a launch reported after its activity completes it. */
static void activity_without_launch(void **state)
{
	char path[512];
	trace_writer *w = open_writer(path, sizeof path, "activity.db", NULL);
	int64_t k = trace_writer_intern(w, "graph_kernel");
	activity(w, 500, k, 10, 20);
	activity(w, 600, k, 30, 40);
	launch(w, 600, 0, k, 25, NULL, 0);
	struct trace_launch unknown = { .correlation_id = 700, .seq = 1, .exec_id = 0,
					.name_id = k, .launch_ns = 50 };
	trace_writer_launch(w, &unknown);
	close_ok(w, 100);

	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT correlation_id || ':' || "
			 "coalesce(seq, '-') || ':' || coalesce(exec_id, '-') || ':' || "
			 "coalesce(launch_ns, '-') || ':' || coalesce(start_ns, '-') || ':' || "
			 "coalesce(end_ns, '-') || ':' || grid_x || ':' || block_x || ':' || "
			 "coalesce(stream_id, '-') AS x FROM kernel ORDER BY correlation_id)",
		     "500:-:-:-:10:20:4:256:7 600:0:1000:25:30:40:4:256:7 700:1:-:50:-:-:0:0:-");
	assert_query(db, "SELECT group_concat(name, ' ') FROM kernel_named",
		     "graph_kernel graph_kernel graph_kernel");
	sqlite3_close(db);
}

/* CUPTI's 0 is a time it could not collect (a forced flush of a kernel
 * still queued): the kernel stays untimed, NULL, and a later record with
 * its times fills them in. */
static void activity_without_times_stays_untimed(void **state)
{
	char path[512];
	trace_writer *w = open_writer(path, sizeof path, "untimed.db", NULL);
	int64_t k = trace_writer_intern(w, "queued");
	launch(w, 500, 0, k, 5, NULL, 0);
	launch(w, 600, 1, k, 6, NULL, 0);
	activity(w, 500, k, 0, 0);
	activity(w, 600, k, 0, 0);
	activity(w, 600, k, 30, 40);
	close_ok(w, 100);

	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT correlation_id || ':' || "
			 "coalesce(start_ns, '-') || ':' || coalesce(end_ns, '-') AS x FROM kernel "
			 "ORDER BY correlation_id)",
		     "500:-:- 600:30:40");
	assert_query(db, "SELECT coalesce((SELECT value FROM meta WHERE key = 'write_errors'), 'none')", "none");
	sqlite3_close(db);
}

/* The kernels one graph launch ran share its correlation ID: each gets a
 * graph_kernel row, none a kernel row, and no write error. */
static void graph_kernels_share_a_correlation_id(void **state)
{
	char path[512];
	trace_writer *w = open_writer(path, sizeof path, "graph.db", NULL);
	int64_t k = trace_writer_intern(w, "node_kernel");
	for (uint64_t node = 1; node <= 3; node++) {
		struct trace_kernel_activity a = { .correlation_id = 900, .name_id = k, .grid = { 2, 1, 1 },
						   .block = { 64, 1, 1 }, .stream_id = 7, .start_ns = 10 * node,
						   .end_ns = 10 * node + 5, .graph_id = 4, .graph_node_id = node };
		trace_writer_kernel(w, &a);
	}
	activity(w, 901, k, 50, 60);
	struct trace_writer_stats st;
	trace_writer_get_stats(w, &st);
	assert_int_equal(st.kernels, 4);
	assert_int_equal(st.graph_kernels, 3);
	close_ok(w, 100);

	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT group_concat(x, ' ') FROM (SELECT correlation_id || ':' || graph_id || ':' || "
			 "graph_node_id || ':' || start_ns || ':' || end_ns || ':' || grid_x || ':' || block_x || ':' || "
			 "stream_id AS x FROM graph_kernel ORDER BY graph_node_id)",
		     "900:4:1:10:15:2:64:7 900:4:2:20:25:2:64:7 900:4:3:30:35:2:64:7");
	assert_query(db, "SELECT group_concat(correlation_id) FROM kernel", "901");
	assert_query(db, "SELECT coalesce((SELECT value FROM meta WHERE key = 'write_errors'), 'none')", "none");
	sqlite3_close(db);
}

static void close_marks_complete(void **state)
{
	char path[512], wal[520], value[64], err[512];
	trace_writer *w = open_writer(path, sizeof path, "complete.db", NULL);
	trace_writer_meta(w, "start_ns", "12345");
	trace_writer_meta(w, "command", "python first.py");
	trace_writer_meta(w, "command", "python train.py");
	trace_writer_meta(w, "device_name", NULL);

	/* While recording, another reader sees the status at once. */
	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT value FROM meta WHERE key = 'status'", "recording");
	sqlite3_close(db);
	close_ok(w, 67890);

	snprintf(wal, sizeof wal, "%s-wal", path);
	assert_false(file_exists(wal)); /* one self-contained file */
	assert_int_equal(trace_schema_open(path, &db, err, sizeof err), 0);
	assert_query(db, "PRAGMA journal_mode", "delete");
	assert_query(db, "PRAGMA integrity_check", "ok");
	trace_schema_meta(db, "status", value, sizeof value);
	assert_string_equal(value, "complete");
	trace_schema_meta(db, "end_ns", value, sizeof value);
	assert_string_equal(value, "67890");
	trace_schema_meta(db, "start_ns", value, sizeof value);
	assert_string_equal(value, "12345");
	trace_schema_meta(db, "command", value, sizeof value);
	assert_string_equal(value, "python train.py");
	trace_schema_meta(db, "umkit_version", value, sizeof value);
	assert_string_equal(value, UMKIT_VERSION);
	assert_int_equal(trace_schema_meta(db, "device_name", value, sizeof value), 1);
	assert_int_equal(trace_schema_meta(db, "write_errors", value, sizeof value), 0);
	assert_query(db, "SELECT typeof(value) FROM meta WHERE key = 'device_name'", "null");
	sqlite3_close(db);
}

/* Files of an earlier run at path + each suffix. */
static void write_stale(const char *path, const char *const *suffix, int n)
{
	char side[520];
	for (int i = 0; i < n; i++) {
		snprintf(side, sizeof side, "%s%s", path, suffix[i]);
		FILE *f = fopen(side, "w");
		assert_non_null(f);
		fputs("stale junk from an earlier run\n", f);
		fclose(f);
	}
}

static void open_replaces_existing(void **state)
{
	char path[512], err[512];
	test_path(path, sizeof path, "replace.db");
	const char *suffix[] = { "", "-wal", "-shm" };
	write_stale(path, suffix, 3);
	trace_writer *w = trace_writer_open(path, NULL, err, sizeof err);
	if (!w)
		fail_msg("%s", err);
	close_ok(w, 1);
	sqlite3 *db;
	if (trace_schema_open(path, &db, err, sizeof err) != 0)
		fail_msg("%s", err);
	sqlite3_close(db);

	test_path(path, sizeof path, "no-such-dir/trace.db");
	err[0] = '\0';
	assert_null(trace_writer_open(path, NULL, err, sizeof err));
	assert_non_null(strstr(err, path));
}

/* Two processes handed one path: the first claim wins, the second finds
 * the file (EEXIST) and so never opens, let alone replaces, the first's
 * trace; the claimed file is opened, its stale companions removed, and it
 * ends a complete trace with what was written. */
static void claim_gives_one_owner(void **state)
{
	char path[512], err[512] = "";
	test_path(path, sizeof path, "claimed.db");
	unlink(path);
	const char *companions[] = { "-wal", "-shm", "-journal" };
	write_stale(path, companions, 3);
	assert_int_equal(trace_writer_claim(path), 0);
	errno = 0;
	assert_int_equal(trace_writer_claim(path), -1);
	assert_int_equal(errno, EEXIST);
	/* The claimed file itself is opened, never removed and made again: in
	 * between, another process could claim the path. */
	int held = open(path, O_RDONLY);
	assert_true(held >= 0);
	/* The earlier recording's companions are removed, not reused: held
	 * open, each is unlinked by the time the writer is open. (SQLite
	 * itself drops a WAL or a journal beside an empty database, but it
	 * would reuse the -shm, which may not be ours to write.) */
	int old[3];
	char side[sizeof path + 16];
	for (int i = 0; i < 3; i++) {
		snprintf(side, sizeof side, "%s%s", path, companions[i]);
		old[i] = open(side, O_RDONLY);
		assert_true(old[i] >= 0);
	}
	const struct trace_writer_options opt = { .claimed = true };
	trace_writer *w = trace_writer_open(path, &opt, err, sizeof err);
	if (!w)
		fail_msg("%s", err);
	struct stat st;
	assert_int_equal(fstat(held, &st), 0);
	assert_int_equal(st.st_nlink, 1);
	close(held);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fstat(old[i], &st), 0);
		if (st.st_nlink != 0)
			fail_msg("the earlier %s is still in place", companions[i]);
		close(old[i]);
	}
	alloc(w, 1, 1ULL << 32, MIB, 0);
	assert_int_equal(trace_writer_claim(path), -1);
	close_ok(w, 20);
	sqlite3 *db = open_db(path);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM alloc"), 1);
	char buf[64];
	assert_string_equal(q_text(db, "SELECT value FROM meta WHERE key = 'status'", buf, sizeof buf),
			    "complete");
	sqlite3_close(db);
	unlink(path);
}

/* Whether path + each of the four suffixes of a trace's files exists,
 * as a bit each. */
static int trace_files_present(const char *path)
{
	const char *all[] = { "", "-wal", "-shm", "-journal" };
	char side[4200];
	int present = 0;
	for (int i = 0; i < 4; i++) {
		snprintf(side, sizeof side, "%s%s", path, all[i]);
		present |= file_exists(side) << i;
	}
	return present;
}

/* The folder a trace was set aside in. */
static void aside_folder(const char *aside, char *folder, size_t len)
{
	snprintf(folder, len, "%s", aside);
	*strrchr(folder, '/') = '\0';
}

/* An earlier trace set aside leaves its path free for a claim, whole with
 * every companion in a folder of its own next to it; put back it is as it
 * was, dropped it is gone with its folder. Nothing at the path: nothing
 * to set aside. */
static void set_aside_keeps_the_earlier_trace(void **state)
{
	char path[512], aside[4096], folder[4096], err[512] = "";
	const char *companions[] = { "", "-wal", "-shm", "-journal" };
	test_path(path, sizeof path, "aside.db");
	write_stale(path, companions, 4);
	assert_int_equal(set_aside(path, &trace_writer_files, aside, sizeof aside, err, sizeof err), 0);
	assert_int_equal(trace_files_present(path), 0);
	assert_int_equal(trace_files_present(aside), 15);
	aside_folder(aside, folder, sizeof folder);
	assert_non_null(strstr(folder, "/.aside.db.earlier-"));
	assert_int_equal(trace_writer_claim(path), 0);
	unlink(path);

	assert_int_equal(set_aside_put_back(aside, path, &trace_writer_files, err, sizeof err), 0);
	assert_int_equal(trace_files_present(path), 15);
	assert_false(file_exists(folder));

	assert_int_equal(set_aside(path, &trace_writer_files, aside, sizeof aside, err, sizeof err), 0);
	aside_folder(aside, folder, sizeof folder);
	assert_int_equal(set_aside_drop(aside, &trace_writer_files, err, sizeof err), 0);
	assert_int_equal(trace_files_present(path), 0);
	assert_false(file_exists(folder));

	assert_int_equal(set_aside(path, &trace_writer_files, aside, sizeof aside, err, sizeof err), 0);
	assert_string_equal(aside, "");
	assert_int_equal(set_aside_put_back(aside, path, &trace_writer_files, err, sizeof err), 0);
	assert_int_equal(set_aside_drop(aside, &trace_writer_files, err, sizeof err), 0);
}

/* NVTX messages past the kept number all get the not-kept message's id (a
 * program naming every range anew must not grow the recorder without
 * bound), each such call counted; those kept still answer, and kernel
 * names are always kept. */
static void messages_past_the_table_not_kept(void **state)
{
	char path[512], s[32];
	trace_writer *w = open_writer(path, sizeof path, "messages.db", NULL);
	int64_t gemm = trace_writer_intern(w, "gemm");
	int64_t first = trace_writer_intern_message(w, "iteration");
	for (int i = 1; i < TRACE_WRITER_MESSAGES_KEPT; i++) {
		snprintf(s, sizeof s, "step %d", i);
		assert_int_equal(trace_writer_intern_message(w, s), i + 2);
	}
	int64_t not_kept = trace_writer_intern_message(w, "step past the table");
	assert_int_equal(not_kept, TRACE_WRITER_MESSAGES_KEPT + 2);
	assert_int_equal(trace_writer_intern_message(w, "another"), not_kept);
	assert_int_equal(trace_writer_intern_message(w, "another"), not_kept);
	assert_int_equal(trace_writer_intern_message(w, "iteration"), first);
	assert_int_equal(trace_writer_intern_message(w, "step 7"), 9);
	assert_int_equal(trace_writer_intern_message(w, "gemm"), gemm);
	assert_int_equal(trace_writer_intern(w, "softmax"), not_kept + 1);
	struct trace_writer_stats st;
	trace_writer_get_stats(w, &st);
	assert_int_equal(st.messages_not_kept, 3);
	close_ok(w, 1);
	sqlite3 *db = open_db(path);
	char want[64];
	snprintf(want, sizeof want, "%d", TRACE_WRITER_MESSAGES_KEPT + 3);
	assert_query(db, "SELECT count(*) FROM string", want);
	snprintf(want, sizeof want, "SELECT value FROM string WHERE id = %lld", (long long)not_kept);
	assert_query(db, want, TRACE_WRITER_MESSAGE_NOT_KEPT);
	assert_query(db, "SELECT value FROM meta WHERE key = 'messages_not_kept'", "3");
	sqlite3_close(db);
}

/* The busy timeouts asked of SQLite go through here (the test is linked
 * with --wrap=sqlite3_busy_timeout): the last one asked for is kept, and
 * cut_busy_timeout_ms, when set, is what SQLite is given instead. */
static int asked_busy_timeout_ms = -1, cut_busy_timeout_ms = -1;
int __real_sqlite3_busy_timeout(sqlite3 *db, int ms);
int __wrap_sqlite3_busy_timeout(sqlite3 *db, int ms);
int __wrap_sqlite3_busy_timeout(sqlite3 *db, int ms)
{
	asked_busy_timeout_ms = ms;
	return __real_sqlite3_busy_timeout(db, cut_busy_timeout_ms >= 0 ? cut_busy_timeout_ms : ms);
}

/* Another process reading the trace when the recording ends keeps it in
 * WAL mode: close says so (1, err naming the -wal to keep), and the trace
 * is complete. The writer asks for TRACE_BUSY_TIMEOUT_MS, and close waits
 * that long for the reader before it gives up on DELETE mode; 50 ms here,
 * as the outcome is the same and the full wait took 5 s of CI's time, 10
 * with the sanitizer run (test_trace_schema times the full wait). */
static void reader_at_close_keeps_wal(void **state)
{
	char path[512], err[1200] = "", want[1200];
	cut_busy_timeout_ms = 50;
	trace_writer *w = open_writer(path, sizeof path, "read-at-close.db", NULL);
	cut_busy_timeout_ms = -1;
	assert_int_equal(asked_busy_timeout_ms, TRACE_BUSY_TIMEOUT_MS);
	alloc(w, 1, 1ULL << 32, MIB, 0);
	sqlite3 *reader = open_db(path);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(reader, "SELECT key FROM meta", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW); /* a read under way */
	assert_int_equal(trace_writer_close(w, 9, err, sizeof err), 1);
	snprintf(want, sizeof want, "%s: another process had the trace open at the end, so it stays in WAL "
		 "mode: keep %s-wal beside it until that process closes it", path, path);
	assert_string_equal(err, want);
	sqlite3_finalize(st);
	assert_query(reader, "PRAGMA journal_mode", "wal");
	assert_query(reader, "SELECT value FROM meta WHERE key = 'status'", "complete");
	assert_query(reader, "SELECT count(*) FROM alloc", "1");
	sqlite3_close(reader);
}

/* A recording that could not start is closed as failed, with the reason:
 * one file, which umrec's summary does not take for a run without GPU
 * work. */
static void abandoned_recording_says_failed(void **state)
{
	char path[512], err[512] = "", wal[600];
	trace_writer *w = open_writer(path, sizeof path, "abandoned.db", NULL);
	assert_int_equal(trace_writer_abandon(w, 7, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED", err,
					      sizeof err),
			 0);
	snprintf(wal, sizeof wal, "%s-wal", path);
	assert_false(file_exists(wal));
	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT value FROM meta WHERE key = 'status'", "failed");
	assert_query(db, "SELECT value FROM meta WHERE key = 'error'",
		     "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
	assert_query(db, "SELECT value FROM meta WHERE key = 'end_ns'", "7");
	sqlite3_close(db);
	struct rec_summary s;
	assert_int_equal(rec_summary_read(path, &s, err, sizeof err), 0);
	assert_string_equal(s.status, "failed");
	const char *problem = rec_summary_problem(&s, false);
	assert_non_null(problem);
	assert_non_null(strstr(problem, "could not set up CUPTI"));
}

/* Waits up to 5 s for at least n failed writes; returns the stats. */
static struct trace_writer_stats wait_for_write_errors(trace_writer *w, uint64_t n)
{
	struct trace_writer_stats s = { 0 };
	for (int i = 0; i < 500 && s.write_errors < n; i++) {
		usleep(10000);
		trace_writer_get_stats(w, &s);
	}
	return s;
}

/* Bad events are counted with the first message kept; the rest is written
 * and close reports the failure. */
static void write_errors_counted(void **state)
{
	char path[512], err[512], first[256];
	trace_writer *w = open_writer(path, sizeof path, "errors.db", NULL);
	int64_t k = trace_writer_intern(w, "k");
	alloc(w, 1, UM_BLOCK, MIB, 0);
	trace_writer_free(w, 99, 10, 1);                  /* unknown allocation */
	alloc(w, 1, UM_BLOCK, MIB, 0);                    /* duplicate id */
	launch(w, 5, 0, k, 10, NULL, 0);
	launch(w, 5, 1, k, 11, NULL, 0);                  /* correlation ID reused */
	migrate(w, 10, (enum trace_direction)9, TRACE_CAUSE_USER, 1); /* no such direction */
	trace_writer_live_at_exit(w, 42);                 /* unknown: served after the stop, no error */
	trace_writer_free(w, 1, 30, 1);
	trace_writer_free(w, 1, 40, 1);                   /* freed twice */
	migrate(w, 20, TRACE_HTOD, TRACE_CAUSE_USER, 2);  /* fine */
	struct trace_write_dst d = { 6, UM_BLOCK, 1 };
	trace_writer_write_dst(w, &d);
	trace_writer_write_dst(w, &d);                    /* correlation ID reused */

	/* Wait for the writer rather than closing: the count is live. */
	struct trace_writer_stats s = wait_for_write_errors(w, 6);
	assert_int_equal(s.write_errors, 6);
	assert_int_equal(trace_writer_first_error(w, first, sizeof first), 1);
	assert_string_equal(first, "alloc: free of an unknown or already freed allocation 99");

	assert_int_equal(trace_writer_close(w, 5, err, sizeof err), -1);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "6 writes failed"));
	assert_non_null(strstr(err, first));

	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT value FROM meta WHERE key = 'write_errors'", "6");
	assert_query(db, "SELECT value FROM meta WHERE key = 'status'", "complete");
	assert_query(db, "SELECT group_concat(id || ':' || free_ns) FROM alloc", "1:30");
	assert_int_equal(sql_int(db, "SELECT seq FROM kernel WHERE correlation_id = 5"), 0);
	assert_query(db, "SELECT group_concat(bytes) FROM migration", "2");
	assert_query(db, "SELECT group_concat(correlation_id || ':' || address) FROM write_dst", "6:2097152");
	sqlite3_close(db);
}

/* No file may grow while it holds: the writer's batches fail, and SQLite
 * rolls them back. */
struct no_growth {
	struct rlimit old;
	void (*prev)(int);
};

static void files_may_not_grow(struct no_growth *g)
{
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &g->old), 0);
	g->prev = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &(struct rlimit){ 0, g->old.rlim_max }), 0);
}

static void files_may_grow(const struct no_growth *g)
{
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &g->old), 0);
	signal(SIGXFSZ, g->prev);
}

/* A batch that fails to commit takes its string and stream rows with it:
 * the strings are written again with the next batch, the stream with the
 * next record that names it, so no kernel row names a missing one. */
static void rows_written_again_after_a_failed_batch(void **state)
{
	char path[512], err[512];
	trace_writer *w = open_writer(path, sizeof path, "streams.db", NULL);
	struct trace_writer_stats s = { 0 };
	trace_writer_get_stats(w, &s);
	uint64_t batches = s.batches;

	/* No file may grow: the batch's writes fail, and SQLite rolls it back. */
	struct no_growth g;
	files_may_not_grow(&g);
	int64_t k = trace_writer_intern(w, "k");
	activity(w, 1, k, 100, 200); /* stream 7 */
	s = wait_for_write_errors(w, 1);
	files_may_grow(&g);
	assert_true(s.write_errors > 0);
	assert_int_equal(s.batches, batches); /* nothing committed */

	activity(w, 2, k, 300, 400); /* stream 7 again */
	assert_int_equal(trace_writer_close(w, 500, err, sizeof err), -1); /* the errors are reported */
	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT group_concat(correlation_id) FROM kernel", "2");
	assert_query(db, "SELECT count(*) FROM stream WHERE id = 7", "1");
	assert_query(db, "SELECT group_concat(value) FROM string", "k");
	assert_int_equal(dangling_references(db), 0);
	sqlite3_close(db);
}

/* The strings of the last batch, which failed, have no next batch to go
 * with: they are written at the close. */
static void strings_of_a_failed_last_batch_written_at_close(void **state)
{
	char path[512], err[512];
	trace_writer *w = open_writer(path, sizeof path, "last.db", NULL);
	struct no_growth g;
	files_may_not_grow(&g);
	trace_writer_intern(w, "last");
	struct trace_writer_stats s = wait_for_write_errors(w, 1);
	files_may_grow(&g);
	assert_true(s.write_errors > 0);
	assert_int_equal(trace_writer_close(w, 500, err, sizeof err), -1); /* the errors are reported */
	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT group_concat(value) FROM string", "last");
	sqlite3_close(db);
}

/* Every row of a batch that fails to commit counts as a failed write, not
 * the failed statement alone. */
static void lost_batch_counted_row_by_row(void **state)
{
	char path[512], err[512];
	trace_writer *w = open_writer(path, sizeof path, "lost.db", NULL);
	struct no_growth g;
	files_may_not_grow(&g);
	for (uint64_t id = 1; id <= 200; id++)
		alloc(w, id, id * UM_BLOCK, MIB, 0);
	struct trace_writer_stats s = wait_for_write_errors(w, 200);
	files_may_grow(&g);
	assert_true(s.write_errors >= 200);
	assert_int_equal(trace_writer_close(w, 500, err, sizeof err), -1);
	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT count(*) FROM alloc", "0");
	sqlite3_close(db);
}

static void no_errors_reported_when_clean(void **state)
{
	char path[512], first[64] = "junk";
	trace_writer *w = open_writer(path, sizeof path, "clean.db", NULL);
	assert_int_equal(trace_writer_first_error(w, first, sizeof first), 0);
	assert_string_equal(first, "");
	close_ok(w, 1);
}

/* ---- processes ---- */

/* A forked child (a DataLoader worker) must not write into the parent's
 * trace or close it. */
static void forked_child_is_inert(void **state)
{
	char path[512];
	trace_writer *w = open_writer(path, sizeof path, "fork.db", NULL);
	alloc(w, 1, UM_BLOCK, MIB, 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[512] = "";
		struct trace_writer_stats s;
		int bad = 0;
		alloc(w, 2, 2 * UM_BLOCK, MIB, 0);
		bad |= trace_writer_intern(w, "child") != 0;
		trace_writer_get_stats(w, &s);
		bad |= s.allocs != 0;
		bad |= trace_writer_close(w, 1, err, sizeof err) != -1;
		bad |= strstr(err, "forked child") == NULL;
		_exit(bad ? 3 : 0);
	}
	int status = wait_child(pid, 10000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	alloc(w, 3, 3 * UM_BLOCK, MIB, 0);
	close_ok(w, 1);
	sqlite3 *db = open_db(path);
	assert_query(db, "SELECT group_concat(id) FROM alloc", "1,3");
	assert_query(db, "SELECT count(*) FROM string", "0");
	sqlite3_close(db);
}

/* The producer of child_may_use_sqlite: events until stop, so that the
 * writer thread is inside SQLite most of the time. */
struct busy_producer {
	trace_writer *w;
	atomic_bool stop;
};

static void *produce_until_stopped(void *arg)
{
	struct busy_producer *p = arg;
	int64_t k = trace_writer_intern(p->w, "k");
	for (uint64_t i = 1; !atomic_load(&p->stop); i++) {
		alloc(p->w, i, i * UM_BLOCK, MIB, 0);
		launch(p->w, (uint32_t)i, i, k, i, NULL, 0);
	}
	return NULL;
}

/* Stands for a thread inside SQLite where it holds a global lock, only
 * longer: holds the locks the writer thread takes (the random generator's,
 * the allocator's, the page cache's) in turn, 1 ms at a time, until stop.
 * The writer takes the page cache's only when its cache grows: with the
 * allocator's lock alone waited for at the fork, 2 of some 5,300 children
 * hung on it on a loaded machine, and none in most runs of this test
 * before this thread. */
static void *hold_sqlite_locks_until_stopped(void *arg)
{
	struct busy_producer *p = arg;
	sqlite3_mutex *locks[] = { sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_PRNG),
				   sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_MEM),
				   sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_PMEM) };
	for (unsigned i = 0; !atomic_load(&p->stop); i++) {
		sqlite3_mutex_enter(locks[i % 3]);
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		sqlite3_mutex_leave(locks[i % 3]);
		nanosleep(&(struct timespec){ 0, 100000 }, NULL); /* room for the fork to take it */
	}
	return NULL;
}

/* A forked child may use SQLite itself (a DataLoader worker reading a
 * dataset with Python's sqlite3, the same library): it must not find a
 * lock of SQLite's held for good, taken by the writer thread, which the
 * child does not have, at the fork. */
static void child_may_use_sqlite(void **state)
{
	char path[512];
	struct trace_writer_options opt = { .flush_interval_ms = 1 };
	struct busy_producer p = { open_writer(path, sizeof path, "fork-sqlite.db", &opt), false };
	pthread_t t, holder;
	assert_int_equal(pthread_create(&t, NULL, produce_until_stopped, &p), 0);
	assert_int_equal(pthread_create(&holder, NULL, hold_sqlite_locks_until_stopped, &p), 0);
	int forks, hung = 0;
	for (forks = 0; forks < 200 && !hung; forks++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			sqlite3 *db = NULL;
			unsigned char salt[8];
			sqlite3_randomness(sizeof salt, salt); /* as a new WAL's or a temporary file's name */
			int rc = sqlite3_open(":memory:", &db) == SQLITE_OK &&
				 sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1)", NULL, NULL, NULL) ==
					 SQLITE_OK;
			sqlite3_close(db);
			_exit(rc ? 0 : 3);
		}
		int status;
		hung = !reap_within(pid, 2000, &status);
		if (!hung)
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	atomic_store(&p.stop, true);
	pthread_join(t, NULL);
	pthread_join(holder, NULL);
	close_ok(p.w, 1);
	if (hung)
		fail_msg("fork %d: the child's SQLite hung", forks);
}

/* The child of crash_leaves_consistent_prefix, a fresh process (this
 * binary run with CRASH_CHILD): records until killed. Tells the parent
 * through fd once a batch has been committed. */
#define CRASH_CHILD "--record-until-killed"
static _Noreturn void record_forever(const char *path, int fd)
{
	char err[512];
	struct trace_writer_options opt = { .flush_interval_ms = 20 };
	trace_writer *w = trace_writer_open(path, &opt, err, sizeof err);
	if (!w)
		_exit(2);
	trace_writer_meta(w, "start_ns", "1");
	int64_t k = trace_writer_intern(w, "crash_kernel");
	int told = 0;
	for (uint64_t i = 0;; i++) {
		uint64_t t = 1000 + i * 100;
		alloc(w, i + 1, (i + 1) * UM_BLOCK, MIB, 0);
		struct trace_kernel_arg args[2] = { { 0, i + 1, 0 }, { 8, i, 64 } };
		launch(w, (uint32_t)i + 1, i, k, t, args, i > 0 ? 2 : 1);
		activity(w, (uint32_t)i + 1, k, t + 10, t + 20);
		if (i >= 10)
			trace_writer_free(w, i - 9, t + 30, 1);
		migrate(w, t + 15, TRACE_HTOD, TRACE_CAUSE_FAULT, 65536);
		if (!told && i % 256 == 0) {
			struct trace_writer_stats s;
			trace_writer_get_stats(w, &s);
			if (s.batches > 0) {
				told = write(fd, "x", 1) == 1;
				close(fd);
			}
		}
		if (i % 64 == 0)
			usleep(100); /* a program does other work between launches */
	}
}

static void crash_leaves_consistent_prefix(void **state)
{
	char path[512], err[512], value[64];
	int fds[2];
	test_path(path, sizeof path, "crash.db");
	assert_int_equal(pipe(fds), 0);
	/* exec, not just fork: a forked copy of this threaded process could
	 * inherit a lock held by another thread. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char fd[16];
		close(fds[0]);
		snprintf(fd, sizeof fd, "%d", fds[1]);
		execl("/proc/self/exe", "test_trace_writer", CRASH_CHILD, path, fd, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	struct pollfd pfd = { fds[0], POLLIN, 0 };
	char c = 0;
	int ready = poll(&pfd, 1, 20000) == 1 && read(fds[0], &c, 1) == 1;
	close(fds[0]);
	if (ready)
		usleep(300000);
	kill(pid, SIGKILL);
	int status = wait_child(pid, 10000);
	if (!ready)
		fail_msg("the recording child committed nothing (status %#x)", status);
	assert_true(WIFSIGNALED(status));

	/* Keep the crashed WAL: the last connection closed below deletes it. */
	char wal[520], crashed_wal[512];
	snprintf(wal, sizeof wal, "%s-wal", path);
	test_path(crashed_wal, sizeof crashed_wal, "crashed-wal");
	assert_true(copy_file(wal, crashed_wal) > 0);

	/* The planner's read-only open copes with the leftover WAL. */
	sqlite3 *db;
	if (trace_schema_open(path, &db, err, sizeof err) != 0)
		fail_msg("%s", err);
	sqlite3_close(db);

	db = open_db(path);
	assert_query(db, "PRAGMA integrity_check", "ok");
	assert_int_equal(trace_schema_meta(db, "status", value, sizeof value), 1);
	assert_string_equal(value, "recording");
	assert_int_equal(trace_schema_meta(db, "end_ns", value, sizeof value), 0);
	long long kernels = sql_int(db, "SELECT count(*) FROM kernel");
	long long allocs = sql_int(db, "SELECT count(*) FROM alloc");
	assert_true(kernels > 0);
	assert_int_equal(dangling_references(db), 0);
	/* Batches commit in order: what survived is a prefix of the events. */
	assert_int_equal(sql_int(db, "SELECT max(seq) + 1 FROM kernel"), kernels);
	assert_int_equal(sql_int(db, "SELECT max(id) FROM alloc"), allocs);
	assert_true(allocs == kernels || allocs == kernels + 1);
	assert_true(sql_int(db, "SELECT count(*) FROM kernel WHERE start_ns IS NULL") <= 1);
	/* A launch and its arguments commit together. */
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel k WHERE "
				   "(SELECT count(*) FROM kernel_arg a WHERE a.correlation_id = "
				   "k.correlation_id) != CASE WHEN k.seq = 0 THEN 1 ELSE 2 END"),
			 0);
	long long freed = sql_int(db, "SELECT count(*) FROM alloc WHERE free_ns IS NOT NULL");
	assert_true(freed == allocs - 10 || freed == allocs - 11);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM alloc WHERE free_ns IS NOT NULL "
				   "AND id > (SELECT max(id) FROM alloc) - 10"), 0);
	sqlite3_close(db);

	/* Recording again over a crashed trace (its -wal still there) starts
	 * from nothing. */
	char again[512];
	test_path(again, sizeof again, "again.db");
	snprintf(wal, sizeof wal, "%s-wal", again);
	assert_true(copy_file(crashed_wal, wal) > 0);
	trace_writer *w = trace_writer_open(again, NULL, err, sizeof err);
	if (!w)
		fail_msg("%s", err);
	close_ok(w, 1);
	db = open_db(again);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM kernel"), 0);
	sqlite3_close(db);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], CRASH_CHILD) == 0)
		record_forever(argv[2], atoi(argv[3]));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(threads_exact_counts),
		cmocka_unit_test(backpressure_bounds_queue),
		cmocka_unit_test(stalled_producer_wakes_the_writer),
		cmocka_unit_test(producer_waiting_again_wakes_the_writer),
		cmocka_unit_test(views_on_hand_made_trace),
		cmocka_unit_test(activity_without_launch),
		cmocka_unit_test(activity_without_times_stays_untimed),
		cmocka_unit_test(graph_kernels_share_a_correlation_id),
		cmocka_unit_test(close_marks_complete),
		cmocka_unit_test(open_replaces_existing),
		cmocka_unit_test(claim_gives_one_owner),
		cmocka_unit_test(set_aside_keeps_the_earlier_trace),
		cmocka_unit_test(messages_past_the_table_not_kept),
		cmocka_unit_test(reader_at_close_keeps_wal),
		cmocka_unit_test(abandoned_recording_says_failed),
		cmocka_unit_test(write_errors_counted),
		cmocka_unit_test(rows_written_again_after_a_failed_batch),
		cmocka_unit_test(strings_of_a_failed_last_batch_written_at_close),
		cmocka_unit_test(lost_batch_counted_row_by_row),
		cmocka_unit_test(no_errors_reported_when_clean),
		cmocka_unit_test(forked_child_is_inert),
		cmocka_unit_test(child_may_use_sqlite),
		cmocka_unit_test(crash_leaves_consistent_prefix),
	};
	return cmocka_run_group_tests_name("trace_writer", tests, NULL, NULL);
}
