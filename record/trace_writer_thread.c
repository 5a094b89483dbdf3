/*
 * trace_writer_thread.c: the trace writer's background thread (see
 * trace_writer_int.h) and the SQL it runs: a prepared statement per kind of
 * row, an event bound to its row, a batch written in one transaction.
 *
 * The writer thread swaps the batch for an empty one and commits it with
 * prepared statements, so events reach the database in the order they were
 * accepted and a crash leaves a prefix of them. Besides
 * trace_writer_prepare, which open calls, everything here runs on the writer
 * thread (or in close after the join).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sqlite3.h>

#include "clock.h"
#include "errmsg.h"
#include "grow.h"
#include "trace_writer_int.h"

#define KEEP_FREE_CHUNKS 64 /* chunks kept for reuse after a burst (~6 MB) */

static const char *const stmt_sql[ST_COUNT] = {
	[ST_META] = "INSERT INTO meta(key, value) VALUES (?1, ?2) "
		    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
	/* A string may be written again after a batch that did not commit. */
	[ST_STRING] = "INSERT INTO string(id, value) VALUES (?1, ?2) ON CONFLICT(id) DO NOTHING",
	[ST_STREAM] = "INSERT INTO stream(id, context_id, created_ns) VALUES (?1, ?2, ?3) "
		      "ON CONFLICT(id) DO UPDATE SET context_id = excluded.context_id, "
		      "created_ns = excluded.created_ns",
	[ST_STREAM_SEEN] = "INSERT INTO stream(id, context_id) VALUES (?1, ?2) "
			   "ON CONFLICT(id) DO NOTHING",
	/* The writer takes a launch and its activity record in either order,
	 * so the record may have created the row first (the recorder reports
	 * launches at API entry, before the kernel can run, so in practice it
	 * does not). The WHERE makes a second launch of one correlation ID
	 * change nothing, which the writer reports. The stream comes from the
	 * activity record: a kernel whose record never came (a killed run)
	 * has none. */
	[ST_LAUNCH] = "INSERT INTO kernel(correlation_id, seq, exec_id, name_id, grid_x, grid_y, "
		      "grid_z, block_x, block_y, block_z, shared_mem, thread_id, "
		      "launch_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
		      "ON CONFLICT(correlation_id) DO UPDATE SET seq = excluded.seq, "
		      "exec_id = excluded.exec_id, thread_id = excluded.thread_id, "
		      "launch_ns = excluded.launch_ns WHERE kernel.seq IS NULL",
	[ST_ARG] = "INSERT INTO kernel_arg(correlation_id, param_offset, alloc_id, offset) "
		   "VALUES (?1, ?2, ?3, ?4)",
	/* CUPTI's stream ID in the activity record is authoritative. */
	[ST_KERNEL] = "INSERT INTO kernel(correlation_id, name_id, grid_x, grid_y, grid_z, "
		      "block_x, block_y, block_z, shared_mem, stream_id, start_ns, end_ns) "
		      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
		      "ON CONFLICT(correlation_id) DO UPDATE SET start_ns = excluded.start_ns, "
		      "end_ns = excluded.end_ns, stream_id = excluded.stream_id "
		      "WHERE kernel.start_ns IS NULL",
	[ST_GRAPH_KERNEL] = "INSERT INTO graph_kernel(correlation_id, name_id, grid_x, grid_y, grid_z, "
			    "block_x, block_y, block_z, shared_mem, stream_id, start_ns, end_ns, "
			    "graph_id, graph_node_id) "
			    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
	[ST_ALLOC] = "INSERT INTO alloc(id, address, size, reserved, api, alloc_ns, alloc_thread, "
		     "stream_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_FREE] = "UPDATE alloc SET free_ns = ?2, free_thread = ?3 "
		    "WHERE id = ?1 AND free_ns IS NULL",
	[ST_LIVE] = "UPDATE alloc SET live_at_exit = 1 WHERE id = ?1",
	[ST_MIGRATION] = "INSERT INTO migration(start_ns, end_ns, address, bytes, direction, cause) "
			 "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_FAULT] = "INSERT INTO fault(start_ns, end_ns, address, access, groups) "
		     "VALUES (?1, ?2, ?3, ?4, ?5)",
	[ST_NVTX] = "INSERT INTO nvtx_range(name_id, thread_id, start_ns, end_ns) "
		    "VALUES (?1, ?2, ?3, ?4)",
	[ST_MEMCPY] = "INSERT INTO memcpy(correlation_id, kind, bytes, stream_id, start_ns, end_ns) "
		      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_MEMSET] = "INSERT INTO memset(correlation_id, bytes, value, stream_id, start_ns, "
		      "end_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	/* A driver call has one correlation ID and one entry callback, which
	 * writes the row: a second row of an ID is a recorder's bug, counted. */
	[ST_WRITE_DST] = "INSERT INTO write_dst(correlation_id, address, alloc_id) VALUES (?1, ?2, ?3)",
};

static const char *const table_of[ST_COUNT] = {
	[ST_META] = "meta", [ST_STRING] = "string", [ST_STREAM] = "stream", [ST_STREAM_SEEN] = "stream",
	[ST_LAUNCH] = "kernel", [ST_ARG] = "kernel_arg", [ST_KERNEL] = "kernel", [ST_GRAPH_KERNEL] = "graph_kernel",
	[ST_ALLOC] = "alloc", [ST_FREE] = "alloc", [ST_LIVE] = "alloc",
	[ST_MIGRATION] = "migration", [ST_FAULT] = "fault", [ST_NVTX] = "nvtx_range",
	[ST_MEMCPY] = "memcpy", [ST_MEMSET] = "memset", [ST_WRITE_DST] = "write_dst",
};

int trace_writer_prepare(trace_writer *w, char *err, size_t errlen)
{
	for (int i = 0; i < ST_COUNT; i++) {
		if (sqlite3_prepare_v3(w->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i],
				       NULL) != SQLITE_OK) {
			um_errmsg(err, errlen, "%s: cannot prepare the %s insert: %s", w->path,
				table_of[i], sqlite3_errmsg(w->db));
			return -1;
		}
	}
	return 0;
}

/* Counts a failed write and keeps the first message. Takes the mutex. */
__attribute__((format(printf, 2, 3)))
static void note_error(trace_writer *w, const char *fmt, ...)
{
	pthread_mutex_lock(&w->mu);
	if (w->stats.write_errors++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(w->first_error, sizeof w->first_error, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&w->mu);
}

static const char *const direction_text[] = { "htod", "dtoh", "dtod" };
static const char *const cause_text[] = { "unknown", "user", "fault", "prefetch", "eviction",
					  "access_counter" };
static const char *const access_text[] = { "unknown", "read", "write", "atomic", "prefetch" };

/* The text of an enum value; out-of-range values bind as NULL, which the
 * NOT NULL constraint turns into a counted write error. */
#define ENUM_TEXT(table, v) \
	((unsigned)(v) < sizeof(table) / sizeof((table)[0]) ? (table)[(unsigned)(v)] : NULL)

static void bind_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	sqlite3_bind_int64(st, i, (sqlite3_int64)v); /* two's complement above 2^63 */
}

static void bind_u64_or_null(sqlite3_stmt *st, int i, uint64_t v)
{
	if (v)
		bind_u64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static void bind_dims(sqlite3_stmt *st, int first, const uint32_t grid[3], const uint32_t block[3])
{
	for (int d = 0; d < 3; d++) {
		sqlite3_bind_int64(st, first + d, grid[d]);
		sqlite3_bind_int64(st, first + 3 + d, block[d]);
	}
}

/* Runs a bound statement; true when it did its work. An UPDATE or guarded
 * UPSERT that changed nothing is an error too (unchanged says why, with key
 * as its %llu). */
static bool run(trace_writer *w, enum stmt_id id, const char *unchanged, uint64_t key)
{
	sqlite3_stmt *st = w->st[id];
	int rc = sqlite3_step(st);
	bool ok = rc == SQLITE_DONE && !(unchanged && sqlite3_changes(w->db) == 0);
	if (rc != SQLITE_DONE)
		note_error(w, "%s: %s", table_of[id], sqlite3_errmsg(w->db));
	else if (!ok)
		note_error(w, "%s: %s %llu", table_of[id], unchanged, (unsigned long long)key);
	sqlite3_reset(st);
	return ok;
}

static bool write_string(trace_writer *w, int64_t id, const char *s)
{
	sqlite3_stmt *st = w->st[ST_STRING];
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, s);
	return run(w, ST_STRING, NULL, 0);
}

/* Whether the stream has a row (written by a batch that committed). */
static bool stream_written(const trace_writer *w, uint32_t stream_id)
{
	for (size_t i = 0; i < w->n_streams; i++)
		if (w->streams[i] == stream_id)
			return true;
	return false;
}

static void stream_remember(trace_writer *w, uint32_t stream_id)
{
	uint32_t *v = room_for_one(w->streams, w->n_streams, &w->cap_streams, sizeof *v, 16);
	if (v) {
		w->streams = v;
		w->streams[w->n_streams++] = stream_id;
	}
}

/* A stream the records name gets a row the first time, with no creation
 * time: CUPTI reports the creation of the streams made while recording,
 * not of the default stream or of streams made before. */
static void note_stream(trace_writer *w, uint32_t stream_id, uint32_t context_id)
{
	if (stream_written(w, stream_id))
		return;
	sqlite3_stmt *st = w->st[ST_STREAM_SEEN];
	sqlite3_bind_int64(st, 1, stream_id);
	sqlite3_bind_int64(st, 2, context_id);
	if (run(w, ST_STREAM_SEEN, NULL, 0))
		stream_remember(w, stream_id);
}

static void apply(trace_writer *w, const struct ev *e)
{
	sqlite3_stmt *st;
	switch (e->kind) {
	case EV_META:
		st = w->st[ST_META];
		bind_text(st, 1, e->u.meta.key);
		bind_text(st, 2, e->u.meta.value);
		run(w, ST_META, NULL, 0);
		break;
	case EV_STRING:
		write_string(w, e->u.str.id, e->u.str.s);
		break;
	case EV_STREAM:
		st = w->st[ST_STREAM];
		sqlite3_bind_int64(st, 1, e->u.stream.id);
		sqlite3_bind_int64(st, 2, e->u.stream.context_id);
		bind_u64(st, 3, e->u.stream.created_ns);
		if (run(w, ST_STREAM, NULL, 0) && !stream_written(w, e->u.stream.id))
			stream_remember(w, e->u.stream.id);
		break;
	case EV_LAUNCH: {
		const struct ev_launch *l = &e->u.launch;
		st = w->st[ST_LAUNCH];
		sqlite3_bind_int64(st, 1, l->correlation_id);
		bind_u64(st, 2, l->seq);
		bind_u64_or_null(st, 3, l->exec_id); /* 0 means unknown (execid.h) */
		sqlite3_bind_int64(st, 4, l->name_id);
		bind_dims(st, 5, l->grid, l->block);
		sqlite3_bind_int64(st, 11, l->shared_mem);
		sqlite3_bind_int64(st, 12, l->thread_id);
		bind_u64(st, 13, l->launch_ns);
		run(w, ST_LAUNCH, "second launch of correlation ID", l->correlation_id);
		break;
	}
	case EV_ARG:
		st = w->st[ST_ARG];
		sqlite3_bind_int64(st, 1, e->u.arg.correlation_id);
		sqlite3_bind_int64(st, 2, e->u.arg.param_offset);
		bind_u64(st, 3, e->u.arg.alloc_id);
		bind_u64(st, 4, e->u.arg.offset);
		run(w, ST_ARG, NULL, 0);
		break;
	case EV_KERNEL: {
		const struct trace_kernel_activity *k = &e->u.kernel;
		/* The kernels of one graph launch share its correlation ID. */
		enum stmt_id id = k->graph_id ? ST_GRAPH_KERNEL : ST_KERNEL;
		st = w->st[id];
		sqlite3_bind_int64(st, 1, k->correlation_id);
		sqlite3_bind_int64(st, 2, k->name_id);
		bind_dims(st, 3, k->grid, k->block);
		sqlite3_bind_int64(st, 9, k->shared_mem);
		sqlite3_bind_int64(st, 10, k->stream_id);
		/* CUPTI's 0 is a time it could not collect: a kernel row
		 * then stays untimed, NULL, for a later record to fill. */
		void (*bind_ns)(sqlite3_stmt *, int, uint64_t) = k->graph_id ? bind_u64 : bind_u64_or_null;
		bind_ns(st, 11, k->start_ns);
		bind_ns(st, 12, k->end_ns);
		if (k->graph_id) {
			sqlite3_bind_int64(st, 13, k->graph_id);
			bind_u64(st, 14, k->graph_node_id);
			run(w, id, NULL, 0);
		} else {
			run(w, id, "second activity record for correlation ID", k->correlation_id);
		}
		note_stream(w, k->stream_id, k->context_id);
		break;
	}
	case EV_ALLOC: {
		const struct trace_alloc *a = &e->u.alloc;
		st = w->st[ST_ALLOC];
		bind_u64(st, 1, a->id);
		bind_u64(st, 2, a->address);
		bind_u64(st, 3, a->size);
		bind_u64(st, 4, a->reserved);
		bind_text(st, 5, a->api);
		bind_u64(st, 6, a->alloc_ns);
		sqlite3_bind_int64(st, 7, a->thread_id);
		bind_u64_or_null(st, 8, a->stream_id); /* 0: not stream-ordered */
		run(w, ST_ALLOC, NULL, 0);
		break;
	}
	case EV_FREE:
		st = w->st[ST_FREE];
		bind_u64(st, 1, e->u.free.id);
		bind_u64(st, 2, e->u.free.ns);
		sqlite3_bind_int64(st, 3, e->u.free.thread);
		run(w, ST_FREE, "free of an unknown or already freed allocation", e->u.free.id);
		break;
	case EV_LIVE:
		st = w->st[ST_LIVE];
		bind_u64(st, 1, e->u.live);
		/* One that has no row is no error: served while the program
		 * exited, after the recording stopped (rec_inject.c's finish). */
		run(w, ST_LIVE, NULL, e->u.live);
		break;
	case EV_MIGRATION: {
		const struct trace_migration *m = &e->u.migration;
		st = w->st[ST_MIGRATION];
		bind_u64(st, 1, m->start_ns);
		bind_u64(st, 2, m->end_ns);
		bind_u64(st, 3, m->address);
		bind_u64(st, 4, m->bytes);
		bind_text(st, 5, ENUM_TEXT(direction_text, m->direction));
		bind_text(st, 6, ENUM_TEXT(cause_text, m->cause));
		run(w, ST_MIGRATION, NULL, 0);
		break;
	}
	case EV_FAULT: {
		const struct trace_fault *f = &e->u.fault;
		st = w->st[ST_FAULT];
		bind_u64(st, 1, f->start_ns);
		bind_u64(st, 2, f->end_ns);
		bind_u64(st, 3, f->address);
		bind_text(st, 4, ENUM_TEXT(access_text, f->access));
		bind_u64(st, 5, f->groups);
		run(w, ST_FAULT, NULL, 0);
		break;
	}
	case EV_NVTX:
		st = w->st[ST_NVTX];
		sqlite3_bind_int64(st, 1, e->u.nvtx.name_id);
		sqlite3_bind_int64(st, 2, e->u.nvtx.thread_id);
		bind_u64(st, 3, e->u.nvtx.start_ns);
		bind_u64_or_null(st, 4, e->u.nvtx.end_ns); /* 0: never closed */
		run(w, ST_NVTX, NULL, 0);
		break;
	case EV_MEMCPY: {
		const struct trace_memcpy *c = &e->u.memcpy;
		st = w->st[ST_MEMCPY];
		sqlite3_bind_int64(st, 1, c->correlation_id);
		bind_text(st, 2, c->kind ? c->kind : "unknown");
		bind_u64(st, 3, c->bytes);
		sqlite3_bind_int64(st, 4, c->stream_id);
		bind_u64(st, 5, c->start_ns);
		bind_u64(st, 6, c->end_ns);
		run(w, ST_MEMCPY, NULL, 0);
		note_stream(w, c->stream_id, c->context_id);
		break;
	}
	case EV_MEMSET: {
		const struct trace_memset *s = &e->u.memset;
		st = w->st[ST_MEMSET];
		sqlite3_bind_int64(st, 1, s->correlation_id);
		bind_u64(st, 2, s->bytes);
		sqlite3_bind_int64(st, 3, s->value);
		sqlite3_bind_int64(st, 4, s->stream_id);
		bind_u64(st, 5, s->start_ns);
		bind_u64(st, 6, s->end_ns);
		run(w, ST_MEMSET, NULL, 0);
		note_stream(w, s->stream_id, s->context_id);
		break;
	}
	case EV_WRITE_DST: {
		const struct trace_write_dst *d = &e->u.write_dst;
		st = w->st[ST_WRITE_DST];
		sqlite3_bind_int64(st, 1, d->correlation_id);
		bind_u64(st, 2, d->address);
		bind_u64_or_null(st, 3, d->alloc_id); /* 0: in none of the arena's */
		run(w, ST_WRITE_DST, NULL, 0);
		break;
	}
	}
}

static int exec(trace_writer *w, const char *sql)
{
	if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	note_error(w, "%s: %s", sql, sqlite3_errmsg(w->db));
	return -1;
}

/* The events of a transaction SQLite rolled back are lost: each counts as a
 * failed write, once (those that failed on their own, and the statement
 * that failed, were counted already; errors_at_begin is the count when the
 * transaction began). Called on the writer thread, the count's one writer. */
static void note_lost(trace_writer *w, size_t events, uint64_t errors_at_begin)
{
	uint64_t counted = w->stats.write_errors - errors_at_begin;
	if (events <= counted)
		return;
	pthread_mutex_lock(&w->mu);
	w->stats.write_errors += events - counted;
	pthread_mutex_unlock(&w->mu);
}

/* Keeps the strings of batch b, which did not commit whole, for the next. */
static void keep_strings(trace_writer *w, const struct batch *b)
{
	for (const struct chunk *c = b->head; c; c = c->next) {
		for (size_t i = 0; i < c->n; i++) {
			if (c->ev[i].kind != EV_STRING)
				continue;
			void *v = room_for_one(w->rewrite, w->n_rewrite, &w->cap_rewrite, sizeof *w->rewrite, 16);
			if (!v)
				return;
			w->rewrite = v;
			w->rewrite[w->n_rewrite].id = c->ev[i].u.str.id;
			w->rewrite[w->n_rewrite++].s = c->ev[i].u.str.s;
		}
	}
}

/* Writes the strings kept for rewriting; true when every one was written. */
static bool write_kept_strings(trace_writer *w)
{
	bool all = true;
	for (size_t i = 0; i < w->n_rewrite; i++)
		all &= write_string(w, w->rewrite[i].id, w->rewrite[i].s);
	return all;
}

/* Writes a batch in one transaction. A statement that fails is counted and
 * skipped. If SQLite rolls the whole transaction back (disk full, I/O
 * error), what came before in the batch is lost and the rest goes into a
 * new transaction. Returns 0 when the batch committed. */
static int commit(trace_writer *w, struct batch *b)
{
	size_t streams_before = w->n_streams, events = 0;
	uint64_t errors_at_begin = w->stats.write_errors;
	int in_txn = exec(w, "BEGIN IMMEDIATE") == 0;
	int whole = write_kept_strings(w) && in_txn;
	bool kept = false;    /* b's strings are among those kept */
	bool orphans = false; /* the arguments next are those of a launch rolled back */
	for (struct chunk *c = b->head; c; c = c->next) {
		for (size_t i = 0; i < c->n; i++) {
			struct ev *e = &c->ev[i];
			events++;
			orphans &= e->kind == EV_ARG;
			if (orphans)
				note_error(w, "kernel_arg: the launch of correlation ID %u was rolled back",
					   e->u.arg.correlation_id);
			else
				apply(w, e);
			if (e->kind == EV_META) {
				free(e->u.meta.key);
				free(e->u.meta.value);
			}
			if (in_txn && sqlite3_get_autocommit(w->db)) {
				note_lost(w, events, errors_at_begin);
				/* The stream and string rows written so far went
				 * with it: the rest of the batch writes the streams
				 * again, the new transaction the strings first, as
				 * the rows after may name them. A launch that went
				 * takes its arguments still to come. */
				w->n_streams = streams_before;
				whole = 0;
				events = 0;
				errors_at_begin = w->stats.write_errors;
				if (!kept)
					keep_strings(w, b);
				kept = true;
				orphans = e->kind == EV_LAUNCH || e->kind == EV_ARG;
				in_txn = exec(w, "BEGIN IMMEDIATE") == 0;
				write_kept_strings(w);
			}
		}
	}
	if (in_txn && exec(w, "COMMIT") != 0) {
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
		note_lost(w, events, errors_at_begin);
		whole = in_txn = 0;
	}
	/* Stream rows first written here may be lost: write them again the
	 * next time a record names their stream; and the strings with the
	 * next batch. */
	if (whole) {
		w->n_rewrite = 0;
	} else {
		w->n_streams = streams_before;
		if (!kept)
			keep_strings(w, b);
	}
	return in_txn ? 0 : -1;
}

/* Gives a written batch's chunks back for reuse. Caller holds mu. */
static void recycle(trace_writer *w, struct batch *b)
{
	struct chunk *c = b->head;
	while (c) {
		struct chunk *next = c->next;
		if (w->nfree < KEEP_FREE_CHUNKS) {
			c->next = w->free_chunks;
			w->free_chunks = c;
			w->nfree++;
		} else {
			free(c);
		}
		c = next;
	}
	*b = (struct batch){ 0 };
}

void *trace_writer_main(void *arg)
{
	trace_writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct timespec deadline = um_deadline_in(w->flush_ms * 1000000ull);
		while (!w->stop && !w->kicked && w->cur.n < w->batch_events)
			if (pthread_cond_timedwait(&w->wake, &w->mu, &deadline) == ETIMEDOUT)
				break;
		if (w->cur.n == 0 && w->stop && w->n_rewrite) {
			/* The strings of a batch that did not commit whole
			 * wait for the next one: at the end, none comes. */
			pthread_mutex_unlock(&w->mu);
			commit(w, &(struct batch){ 0 });
			pthread_mutex_lock(&w->mu);
		}
		if (w->cur.n == 0) {
			if (w->stop)
				break;
			continue;
		}
		struct batch b = w->cur;
		w->cur = (struct batch){ 0 };
		w->kicked = 0;
		pthread_cond_broadcast(&w->space);
		pthread_mutex_unlock(&w->mu);

		int ok = commit(w, &b) == 0;

		pthread_mutex_lock(&w->mu);
		if (ok)
			w->stats.batches++;
		recycle(w, &b);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

