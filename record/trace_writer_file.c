/*
 * trace_writer_file.c: the trace writer's database file (see
 * trace_writer.h): the trace's files (to set an earlier one aside or
 * remove it), claiming the path,
 * opening (the schema, WAL mode, the writer thread), and closing (the last
 * rows, the join, back out of WAL mode). Also the fork generation, which
 * tells a forked child that a writer is its parent's, and the fork's wait
 * for SQLite's allocator lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "errmsg.h"
#include "gate.h"
#include "set_aside.h"
#include "thread.h"
#include "trace_schema.h"
#include "trace_writer_int.h"

#ifndef UMKIT_VERSION
#define UMKIT_VERSION "unknown"
#endif

#define DEFAULT_FLUSH_MS 100
#define DEFAULT_BATCH_EVENTS 4096
#define DEFAULT_MAX_QUEUED 262144

/* Incremented in every forked child: a writer opened under another
 * generation belongs to the parent. */
static atomic_uint fork_generation;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* SQLite's global locks the writer thread takes: the allocator's at its
 * every allocation (memory statistics are on by default), the page
 * cache's at each page buffer it allocates or frees, and the random
 * generator's each time the WAL starts over (its new salt). A child forked
 * while that thread held one would wait for it for good at its own first
 * use of SQLite that takes it (a DataLoader worker reading with Python's
 * sqlite3: the same library; with the allocator's lock alone waited for,
 * 2 of some 5,300 children of test_trace_writer's hung in the page
 * cache's, on a loaded machine). So a fork waits for them, each held for
 * microseconds, in this order: the generator's first, whose holder may
 * take others (its first use looks the VFS up, under SQLite's main lock,
 * whose holders allocate); no other lock is taken while either of the
 * other two is held, so waiting for them cannot deadlock. */
static const int sqlite_fork_lock_ids[] = { SQLITE_MUTEX_STATIC_PRNG, SQLITE_MUTEX_STATIC_MEM,
					    SQLITE_MUTEX_STATIC_PMEM };
#define SQLITE_FORK_LOCKS (sizeof sqlite_fork_lock_ids / sizeof *sqlite_fork_lock_ids)
static sqlite3_mutex *sqlite_fork_locks[SQLITE_FORK_LOCKS];

static void before_fork(void)
{
	for (size_t i = 0; i < SQLITE_FORK_LOCKS; i++)
		sqlite3_mutex_enter(sqlite_fork_locks[i]);
}

static void after_fork_parent(void)
{
	for (size_t i = SQLITE_FORK_LOCKS; i-- > 0;)
		sqlite3_mutex_leave(sqlite_fork_locks[i]);
}

static void on_fork_child(void)
{
	after_fork_parent();
	atomic_fetch_add_explicit(&fork_generation, 1, memory_order_relaxed);
}

static void register_atfork(void)
{
	for (size_t i = 0; i < SQLITE_FORK_LOCKS; i++)
		sqlite_fork_locks[i] = sqlite3_mutex_alloc(sqlite_fork_lock_ids[i]);
	pthread_atfork(before_fork, after_fork_parent, on_fork_child);
}

bool trace_writer_foreign(const trace_writer *w)
{
	return atomic_load_explicit(&fork_generation, memory_order_relaxed) != w->fork_gen;
}

static void writer_free(trace_writer *w)
{
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(w->st[i]);
	sqlite3_close(w->db);
	while (w->free_chunks) {
		struct chunk *next = w->free_chunks->next;
		free(w->free_chunks);
		w->free_chunks = next;
	}
	for (size_t i = 0; i < w->strings_cap; i++)
		free(w->strings[i].s);
	free(w->strings);
	free(w->streams);
	free(w->rewrite);
	free(w->path);
	free(w);
}

static const char *const trace_suffixes[] = { "", "-wal", "-shm", "-journal" };
const struct file_set trace_writer_files = { trace_suffixes, 4, "trace" };

/* Removes the trace at path with its companions, or with keep_main only
 * the companions (path itself was just claimed), so that stale WAL frames
 * can never be replayed into a new database at that path. */
static int remove_old(const char *path, bool keep_main, char *err, size_t errlen)
{
	return set_remove(path, &trace_writer_files, keep_main, err, errlen);
}

int trace_writer_claim(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Opens the database and sets it up (claimed: trace_writer_options); the
 * caller frees w on failure. */
static int open_db(trace_writer *w, bool claimed, char *err, size_t errlen)
{
	char msg[512];
	char *sql;
	int rc;
	if (remove_old(w->path, claimed, err, errlen) != 0)
		return -1;
	if (sqlite3_open_v2(w->path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			    NULL) != SQLITE_OK) {
		um_errmsg(err, errlen, "%s: cannot create: %s", w->path,
			w->db ? sqlite3_errmsg(w->db) : "out of memory");
		return -1;
	}
	sqlite3_busy_timeout(w->db, TRACE_BUSY_TIMEOUT_MS);
	/* journal_mode answers with the mode it ended up in. */
	sqlite3_stmt *st = NULL;
	rc = sqlite3_prepare_v2(w->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_stricmp((const char *)sqlite3_column_text(st, 0), "wal") == 0)
		rc = SQLITE_OK;
	else
		rc = SQLITE_ERROR;
	sqlite3_finalize(st);
	if (rc != SQLITE_OK ||
	    sqlite3_exec(w->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK) {
		um_errmsg(err, errlen, "%s: cannot use WAL mode: %s", w->path, sqlite3_errmsg(w->db));
		return -1;
	}
	if (trace_schema_create(w->db, msg, sizeof msg) != 0) {
		um_errmsg(err, errlen, "%s: %s", w->path, msg);
		return -1;
	}
	sql = sqlite3_mprintf("INSERT INTO meta(key, value) VALUES ('status', 'recording'), "
			      "('umkit_version', %Q)",
			      UMKIT_VERSION);
	rc = sql ? sqlite3_exec(w->db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		um_errmsg(err, errlen, "%s: cannot write meta: %s", w->path, sqlite3_errmsg(w->db));
		return -1;
	}
	return trace_writer_prepare(w, err, errlen);
}

trace_writer *trace_writer_open(const char *path, const struct trace_writer_options *opt,
				char *err, size_t errlen)
{
	pthread_once(&atfork_once, register_atfork);
	trace_writer *w = calloc(1, sizeof *w);
	if (!w || !(w->path = strdup(path))) {
		um_errmsg(err, errlen, "%s: out of memory", path);
		free(w);
		return NULL;
	}
	gate_open(&w->gate);
	w->fork_gen = atomic_load_explicit(&fork_generation, memory_order_relaxed);
	w->flush_ms = opt && opt->flush_interval_ms ? opt->flush_interval_ms : DEFAULT_FLUSH_MS;
	w->batch_events = opt && opt->batch_events ? opt->batch_events : DEFAULT_BATCH_EVENTS;
	w->max_queued = opt && opt->max_queued ? opt->max_queued : DEFAULT_MAX_QUEUED;
	if (w->max_queued < w->batch_events)
		w->max_queued = w->batch_events;
	if (open_db(w, opt && opt->claimed, err, errlen) != 0) {
		writer_free(w);
		return NULL;
	}

	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->wake, &ca);
	pthread_cond_init(&w->space, NULL);
	pthread_condattr_destroy(&ca);

	int rc = thread_start_unsignalled(&w->thread, trace_writer_main, w);
	if (rc != 0) {
		um_errmsg(err, errlen, "%s: cannot start the writer thread: %s", path, strerror(rc));
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->wake);
		pthread_cond_destroy(&w->space);
		writer_free(w);
		return NULL;
	}
	pthread_setname_np(w->thread, "umrec-writer");
	return w;
}

/* The last rows of a recording, in one transaction. */
static int finish(trace_writer *w, const char *status, uint64_t end_ns, uint64_t failures)
{
	unsigned long long not_kept = w->stats.messages_not_kept;
	char *sql = sqlite3_mprintf(
		"BEGIN;"
		"INSERT OR REPLACE INTO meta(key, value) VALUES ('status', %Q), "
		"('end_ns', '%llu');"
		"INSERT OR REPLACE INTO meta(key, value) SELECT 'write_errors', '%llu' "
		"WHERE %llu > 0;"
		"INSERT OR REPLACE INTO meta(key, value) SELECT 'messages_not_kept', '%llu' "
		"WHERE %llu > 0;"
		"COMMIT;",
		status, (unsigned long long)end_ns, (unsigned long long)failures,
		(unsigned long long)failures, not_kept, not_kept);
	int rc = sql ? sqlite3_exec(w->db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc != SQLITE_OK && !sqlite3_get_autocommit(w->db))
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : -1;
}

/* sqlite3_exec callback: copies the first column of the row into the
 * char[16] at buf. */
static int first_text(void *buf, int ncols, char **values, char **names)
{
	if (ncols > 0 && values[0])
		snprintf(buf, 16, "%s", values[0]);
	return 0;
}

static int close_as(trace_writer *w, const char *status, uint64_t end_ns, char *err, size_t errlen)
{
	if (!w) {
		um_errmsg(err, errlen, "no trace writer");
		return -1;
	}
	if (trace_writer_foreign(w)) {
		/* The mutex may have been held by a thread that does not exist
		 * here, and closing the parent's database from a child could
		 * checkpoint it: touch nothing. */
		um_errmsg(err, errlen, "%s: not closed in a forked child (the parent owns the trace)",
			w->path);
		return -1;
	}
	/* Calls already inside finish (the writer thread still drains the
	 * queue for any waiting on a full one); later ones are ignored. */
	gate_close(&w->gate);
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);

	int result = 0;
	uint64_t failures = w->stats.write_errors + w->stats.dropped;
	if (finish(w, status, end_ns, failures) != 0) {
		um_errmsg(err, errlen, "%s: cannot mark the trace %s: %s", w->path, status,
			sqlite3_errmsg(w->db));
		result = -1;
	} else if (w->stats.write_errors) {
		um_errmsg(err, errlen, "%s: %llu writes failed (the trace is incomplete); first: %s",
			w->path, (unsigned long long)w->stats.write_errors, w->first_error);
		result = -1;
	} else if (w->stats.dropped) {
		um_errmsg(err, errlen, "%s: %llu events dropped for lack of memory (the trace is "
			"incomplete)", w->path, (unsigned long long)w->stats.dropped);
		result = -1;
	}
	for (int i = 0; i < ST_COUNT; i++) {
		sqlite3_finalize(w->st[i]);
		w->st[i] = NULL;
	}
	/* Leave one self-contained file: a WAL-mode database needs -shm
	 * beside it even to be read, which fails on read-only media. A reader
	 * holding the file open keeps it in WAL mode: the trace is whole, but
	 * its -wal must stay beside it, which the caller is told. */
	sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	char mode[16] = "";
	int rc = sqlite3_exec(w->db, "PRAGMA journal_mode = DELETE", first_text, mode, NULL);
	if (result == 0 && strcmp(mode, "delete") != 0) {
		if (rc == SQLITE_OK || rc == SQLITE_BUSY)
			um_errmsg(err, errlen, "%s: another process had the trace open at the end, so it "
				  "stays in WAL mode: keep %s-wal beside it until that process closes it",
				  w->path, w->path);
		else
			um_errmsg(err, errlen, "%s: cannot leave WAL mode (%s): keep %s-wal beside it",
				  w->path, sqlite3_errmsg(w->db), w->path);
		result = 1;
	}
	if (sqlite3_close(w->db) != SQLITE_OK && result == 0) {
		um_errmsg(err, errlen, "%s: cannot close: %s", w->path, sqlite3_errmsg(w->db));
		result = -1;
	}
	w->db = NULL;
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->wake);
	pthread_cond_destroy(&w->space);
	/* Chunks of the last batch went back to the free list. */
	writer_free(w);
	return result;
}

int trace_writer_close(trace_writer *w, uint64_t end_ns, char *err, size_t errlen)
{
	return close_as(w, "complete", end_ns, err, errlen);
}

int trace_writer_abandon(trace_writer *w, uint64_t end_ns, const char *why, char *err, size_t errlen)
{
	if (w)
		trace_writer_meta(w, "error", why);
	return close_as(w, "failed", end_ns, err, errlen);
}
