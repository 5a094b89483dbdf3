/*
 * trace_writer.c: the trace writer (see trace_writer.h): the event queue,
 * the string intern table, and the background thread that turns queued
 * events into rows.
 *
 * Producers append fixed-size events to a chunked batch under one mutex; a
 * kernel launch becomes one event plus one per argument, appended under the
 * same lock hold, so a launch and its arguments always land in the same
 * transaction. The writer thread swaps the batch for an empty one and
 * commits it with prepared statements, so events reach the database in the
 * order they were accepted and a crash leaves a prefix of them.
 */
#include "trace_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "errmsg.h"
#include "execid.h"
#include "gate.h"
#include "grow.h"
#include "thread.h"
#include "trace_schema.h"

#ifndef UMKIT_VERSION
#define UMKIT_VERSION "unknown"
#endif

#define DEFAULT_FLUSH_MS 100
#define DEFAULT_BATCH_EVENTS 4096
#define DEFAULT_MAX_QUEUED 262144
#define CHUNK_EVENTS 1024
#define KEEP_FREE_CHUNKS 64 /* chunks kept for reuse after a burst (~5 MB) */
#define BUSY_TIMEOUT_MS 5000

enum ev_kind {
	EV_META, EV_STRING, EV_STREAM, EV_LAUNCH, EV_ARG, EV_KERNEL, EV_ALLOC, EV_FREE,
	EV_LIVE, EV_MIGRATION, EV_FAULT, EV_NVTX, EV_MEMCPY, EV_MEMSET
};

/* A launch without its argument array (the arguments follow as EV_ARG). */
struct ev_launch {
	uint64_t seq, exec_id, launch_ns;
	int64_t name_id;
	uint32_t correlation_id, grid[3], block[3], shared_mem, thread_id;
};

struct ev_arg {
	uint32_t correlation_id, param_offset;
	uint64_t alloc_id, offset;
};

struct ev {
	enum ev_kind kind;
	union {
		struct { char *key, *value; } meta;        /* malloc'ed; freed once written */
		struct { int64_t id; const char *s; } str; /* s belongs to the intern table */
		struct trace_stream stream;
		struct ev_launch launch;
		struct ev_arg arg;
		struct trace_kernel_activity kernel;
		struct trace_alloc alloc;
		struct { uint64_t id, ns; uint32_t thread; } free;
		uint64_t live;
		struct trace_migration migration;
		struct trace_fault fault;
		struct trace_nvtx nvtx;
		struct trace_memcpy memcpy;
		struct trace_memset memset;
	} u;
};

struct chunk {
	struct chunk *next;
	size_t n;
	struct ev ev[CHUNK_EVENTS];
};

struct batch {
	struct chunk *head, *tail;
	size_t n; /* events, arguments included */
};

struct intern_entry {
	uint64_t hash;
	int64_t id; /* 0: empty slot */
	char *s;
};

enum stmt_id {
	ST_META, ST_STRING, ST_STREAM, ST_STREAM_SEEN, ST_LAUNCH, ST_ARG, ST_KERNEL, ST_GRAPH_KERNEL, ST_ALLOC,
	ST_FREE, ST_LIVE, ST_MIGRATION, ST_FAULT, ST_NVTX, ST_MEMCPY, ST_MEMSET, ST_COUNT
};

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
	/* The activity record may have created the row first (a launch
	 * reported at API exit can lose the race with a buffer flush). The
	 * WHERE makes a second launch of one correlation ID change nothing,
	 * which the writer reports. The stream comes from the activity record:
	 * a kernel whose record never came (a killed run) has none. */
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
};

struct trace_writer {
	char *path;
	sqlite3 *db;
	sqlite3_stmt *st[ST_COUNT];
	pthread_t thread;
	unsigned fork_gen;   /* fork_generation when opened */
	unsigned flush_ms;
	size_t batch_events, max_queued;
	/* Event calls pass it; close shuts it, so no call is still using
	 * the writer when it is freed. */
	struct gate gate;
	/* The writer thread's: the stream IDs it has written a row for (commit
	 * forgets those of a batch that did not commit whole), and the strings
	 * of such batches, written again with the next (kernel rows name them;
	 * the text belongs to the intern table). */
	uint32_t *streams;
	size_t n_streams, cap_streams;
	struct { int64_t id; const char *s; } *rewrite;
	size_t n_rewrite, cap_rewrite;

	pthread_mutex_t mu;  /* everything below */
	pthread_cond_t wake; /* to the writer: a full batch, or stop */
	pthread_cond_t space; /* to producers: the queue was taken */
	struct batch cur;
	struct chunk *free_chunks;
	size_t nfree;
	int stop, kicked;
	struct intern_entry *strings;
	size_t strings_cap, strings_n;
	size_t messages_n;   /* of strings_n, interned as NVTX messages */
	struct trace_writer_stats stats;
	char first_error[256];
};

/* Incremented in every forked child: a writer opened under another
 * generation belongs to the parent. */
static atomic_uint fork_generation;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void)
{
	atomic_fetch_add_explicit(&fork_generation, 1, memory_order_relaxed);
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, on_fork_child);
}

static int foreign(const trace_writer *w)
{
	return atomic_load_explicit(&fork_generation, memory_order_relaxed) != w->fork_gen;
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

/* ---- the queue (producer side; the caller holds mu) ---- */

static struct ev *push(trace_writer *w, enum ev_kind kind)
{
	struct chunk *c = w->cur.tail;
	if (!c || c->n == CHUNK_EVENTS) {
		c = w->free_chunks;
		if (c) {
			w->free_chunks = c->next;
			w->nfree--;
		} else if (!(c = malloc(sizeof *c))) {
			w->stats.dropped++;
			return NULL;
		}
		c->next = NULL;
		c->n = 0;
		if (w->cur.tail)
			w->cur.tail->next = c;
		else
			w->cur.head = c;
		w->cur.tail = c;
	}
	w->cur.n++;
	struct ev *e = &c->ev[c->n++];
	e->kind = kind;
	return e;
}

/* Locks mu for appending n events, waiting while the queue is full. Returns
 * -1 (nothing locked) in a forked child or once close has begun. */
static int enter(trace_writer *w, size_t n)
{
	if (foreign(w))
		return -1;
	if (!gate_enter(&w->gate))
		return -1;
	pthread_mutex_lock(&w->mu);
	if (w->cur.n > 0 && w->cur.n + n > w->max_queued && !w->stop) {
		w->stats.stalls++;
		w->kicked = 1;
		pthread_cond_signal(&w->wake);
		do
			pthread_cond_wait(&w->space, &w->mu);
		while (w->cur.n > 0 && w->cur.n + n > w->max_queued && !w->stop);
	}
	return 0;
}

/* Unlocks mu, waking the writer when a batch is full. */
static void leave(trace_writer *w)
{
	if (w->cur.n > w->stats.queue_peak)
		w->stats.queue_peak = w->cur.n;
	if (w->cur.n >= w->batch_events && !w->kicked) {
		w->kicked = 1;
		pthread_cond_signal(&w->wake);
	}
	pthread_mutex_unlock(&w->mu);
	gate_leave(&w->gate);
}

/* Appends one event of a kind that carries a plain struct. */
#define QUEUE_ONE(w, kind, field, value, counter)              \
	do {                                                    \
		if (enter((w), 1) != 0)                         \
			return;                                 \
		struct ev *e_ = push((w), (kind));              \
		if (e_) {                                       \
			e_->u.field = (value);                  \
			(w)->stats.events++;                    \
			counter;                                \
		}                                               \
		leave(w);                                       \
	} while (0)

void trace_writer_meta(trace_writer *w, const char *key, const char *value)
{
	char *k = strdup(key);
	char *v = value ? strdup(value) : NULL;
	if (!k || (value && !v) || enter(w, 1) != 0) {
		free(k);
		free(v);
		return;
	}
	struct ev *e = push(w, EV_META);
	if (e) {
		e->u.meta.key = k;
		e->u.meta.value = v;
		w->stats.events++;
	} else {
		free(k);
		free(v);
	}
	leave(w);
}

/* Grows the open-addressing table to twice its size (kept at most half full). */
static int strings_grow(trace_writer *w)
{
	size_t cap = w->strings_cap ? w->strings_cap * 2 : 1024;
	struct intern_entry *t = calloc(cap, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < w->strings_cap; i++) {
		struct intern_entry *e = &w->strings[i];
		if (!e->id)
			continue;
		size_t j = e->hash & (cap - 1);
		while (t[j].id)
			j = (j + 1) & (cap - 1);
		t[j] = *e;
	}
	free(w->strings);
	w->strings = t;
	w->strings_cap = cap;
	return 0;
}

/* The id of s, interned on first sight (a message only while fewer than
 * TRACE_WRITER_MESSAGES_KEPT are); 0 when out of memory. Called with the
 * writer entered. */
static int64_t intern_entered(trace_writer *w, const char *s, bool message)
{
	size_t len = strlen(s);
	uint64_t h = execid_fnv1a(EXECID_FNV_SEED, s, len);
	if ((w->strings_n + 1) * 2 > w->strings_cap && strings_grow(w) != 0) {
		w->stats.dropped++;
		return 0;
	}
	size_t i = h & (w->strings_cap - 1);
	for (; w->strings[i].id; i = (i + 1) & (w->strings_cap - 1))
		if (w->strings[i].hash == h && strcmp(w->strings[i].s, s) == 0)
			return w->strings[i].id;
	if (message && w->messages_n >= TRACE_WRITER_MESSAGES_KEPT) {
		w->stats.messages_not_kept++;
		return intern_entered(w, TRACE_WRITER_MESSAGE_NOT_KEPT, false);
	}
	char *copy = malloc(len + 1);
	struct ev *e = copy ? push(w, EV_STRING) : NULL;
	if (!e) {
		if (!copy)
			w->stats.dropped++;
		free(copy);
		return 0;
	}
	memcpy(copy, s, len + 1);
	int64_t id = (int64_t)++w->strings_n;
	w->messages_n += message;
	w->strings[i] = (struct intern_entry){ h, id, copy };
	e->u.str.id = id;
	e->u.str.s = copy;
	w->stats.events++;
	return id;
}

static int64_t intern(trace_writer *w, const char *s, bool message)
{
	if (enter(w, 1) != 0)
		return 0;
	int64_t id = intern_entered(w, s ? s : "", message);
	leave(w);
	return id;
}

int64_t trace_writer_intern(trace_writer *w, const char *s)
{
	return intern(w, s, false);
}

int64_t trace_writer_intern_message(trace_writer *w, const char *s)
{
	return intern(w, s, true);
}

void trace_writer_stream(trace_writer *w, const struct trace_stream *s)
{
	QUEUE_ONE(w, EV_STREAM, stream, *s, (void)0);
}

void trace_writer_launch(trace_writer *w, const struct trace_launch *l)
{
	size_t nargs = l->args ? l->nargs : 0;
	if (enter(w, 1 + nargs) != 0)
		return;
	struct ev *e = push(w, EV_LAUNCH);
	if (e) {
		e->u.launch = (struct ev_launch){
			.seq = l->seq, .exec_id = l->exec_id, .launch_ns = l->launch_ns,
			.name_id = l->name_id, .correlation_id = l->correlation_id,
			.grid = { l->grid[0], l->grid[1], l->grid[2] },
			.block = { l->block[0], l->block[1], l->block[2] },
			.shared_mem = l->shared_mem, .thread_id = l->thread_id,
		};
		w->stats.events++;
		w->stats.launches++;
		for (size_t i = 0; i < nargs; i++) {
			struct ev *a = push(w, EV_ARG);
			if (!a)
				break;
			a->u.arg = (struct ev_arg){ l->correlation_id, l->args[i].param_offset,
						    l->args[i].alloc_id, l->args[i].offset };
		}
	}
	leave(w);
}

void trace_writer_kernel(trace_writer *w, const struct trace_kernel_activity *k)
{
	QUEUE_ONE(w, EV_KERNEL, kernel, *k, (w->stats.kernels++, w->stats.graph_kernels += k->graph_id != 0));
}

void trace_writer_alloc(trace_writer *w, const struct trace_alloc *a)
{
	QUEUE_ONE(w, EV_ALLOC, alloc, *a, w->stats.allocs++);
}

void trace_writer_free(trace_writer *w, uint64_t alloc_id, uint64_t free_ns, uint32_t thread_id)
{
	if (enter(w, 1) != 0)
		return;
	struct ev *e = push(w, EV_FREE);
	if (e) {
		e->u.free.id = alloc_id;
		e->u.free.ns = free_ns;
		e->u.free.thread = thread_id;
		w->stats.events++;
	}
	leave(w);
}

void trace_writer_live_at_exit(trace_writer *w, uint64_t alloc_id)
{
	QUEUE_ONE(w, EV_LIVE, live, alloc_id, (void)0);
}

void trace_writer_migration(trace_writer *w, const struct trace_migration *m)
{
	QUEUE_ONE(w, EV_MIGRATION, migration, *m, w->stats.migrations++);
}

void trace_writer_fault(trace_writer *w, const struct trace_fault *f)
{
	QUEUE_ONE(w, EV_FAULT, fault, *f, w->stats.faults++);
}

void trace_writer_nvtx(trace_writer *w, const struct trace_nvtx *r)
{
	QUEUE_ONE(w, EV_NVTX, nvtx, *r, w->stats.nvtx_ranges++);
}

void trace_writer_memcpy(trace_writer *w, const struct trace_memcpy *c)
{
	QUEUE_ONE(w, EV_MEMCPY, memcpy, *c, (void)0);
}

void trace_writer_memset(trace_writer *w, const struct trace_memset *s)
{
	QUEUE_ONE(w, EV_MEMSET, memset, *s, (void)0);
}

void trace_writer_get_stats(trace_writer *w, struct trace_writer_stats *out)
{
	if (foreign(w)) {
		memset(out, 0, sizeof *out);
		return;
	}
	pthread_mutex_lock(&w->mu);
	*out = w->stats;
	pthread_mutex_unlock(&w->mu);
}

int trace_writer_first_error(trace_writer *w, char *buf, size_t len)
{
	int any = 0;
	if (len)
		buf[0] = '\0';
	if (foreign(w))
		return 0;
	pthread_mutex_lock(&w->mu);
	if (w->stats.write_errors) {
		any = 1;
		if (len)
			snprintf(buf, len, "%s", w->first_error);
	}
	pthread_mutex_unlock(&w->mu);
	return any;
}

/* ---- the writer (its own thread, or close after the join) ---- */

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

static const char *const table_of[ST_COUNT] = {
	[ST_META] = "meta", [ST_STRING] = "string", [ST_STREAM] = "stream", [ST_STREAM_SEEN] = "stream",
	[ST_LAUNCH] = "kernel", [ST_ARG] = "kernel_arg", [ST_KERNEL] = "kernel", [ST_GRAPH_KERNEL] = "graph_kernel",
	[ST_ALLOC] = "alloc", [ST_FREE] = "alloc", [ST_LIVE] = "alloc",
	[ST_MIGRATION] = "migration", [ST_FAULT] = "fault", [ST_NVTX] = "nvtx_range",
	[ST_MEMCPY] = "memcpy", [ST_MEMSET] = "memset",
};

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

static void write_string(trace_writer *w, int64_t id, const char *s)
{
	sqlite3_stmt *st = w->st[ST_STRING];
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, s);
	run(w, ST_STRING, NULL, 0);
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

/* Writes a batch in one transaction. A statement that fails is counted and
 * skipped. If SQLite rolls the whole transaction back (disk full, I/O
 * error), what came before in the batch is lost and the rest goes into a
 * new transaction. Returns 0 when the batch committed. */
static int commit(trace_writer *w, struct batch *b)
{
	size_t streams_before = w->n_streams, events = 0;
	uint64_t errors_at_begin = w->stats.write_errors;
	int in_txn = exec(w, "BEGIN IMMEDIATE") == 0, whole = in_txn;
	for (size_t i = 0; i < w->n_rewrite; i++)
		write_string(w, w->rewrite[i].id, w->rewrite[i].s);
	for (struct chunk *c = b->head; c; c = c->next) {
		for (size_t i = 0; i < c->n; i++) {
			struct ev *e = &c->ev[i];
			apply(w, e);
			events++;
			if (e->kind == EV_META) {
				free(e->u.meta.key);
				free(e->u.meta.value);
			}
			if (in_txn && sqlite3_get_autocommit(w->db)) {
				note_lost(w, events, errors_at_begin);
				whole = 0;
				events = 0;
				errors_at_begin = w->stats.write_errors;
				in_txn = exec(w, "BEGIN IMMEDIATE") == 0;
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

static void *writer_main(void *arg)
{
	trace_writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct timespec deadline;
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += w->flush_ms / 1000;
		deadline.tv_nsec += (long)(w->flush_ms % 1000) * 1000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		while (!w->stop && w->cur.n < w->batch_events)
			if (pthread_cond_timedwait(&w->wake, &w->mu, &deadline) == ETIMEDOUT)
				break;
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

/* ---- open and close ---- */

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

/* trace_writer_remove, or with keep_main only the companions (path itself
 * was just claimed). */
static int remove_old(const char *path, bool keep_main, char *err, size_t errlen)
{
	static const char *const suffix[] = { "", "-wal", "-shm", "-journal" };
	for (size_t i = keep_main; i < sizeof suffix / sizeof suffix[0]; i++) {
		char p[4096];
		if ((size_t)snprintf(p, sizeof p, "%s%s", path, suffix[i]) >= sizeof p) {
			um_errmsg(err, errlen, "%s: path too long", path);
			return -1;
		}
		if (unlink(p) != 0 && errno != ENOENT) {
			um_errmsg(err, errlen, "%s: cannot remove the earlier trace: %s", p, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int trace_writer_remove(const char *path, char *err, size_t errlen)
{
	return remove_old(path, false, err, errlen);
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
	sqlite3_busy_timeout(w->db, BUSY_TIMEOUT_MS);
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

	int rc = thread_start_unsignalled(&w->thread, writer_main, w);
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
	if (foreign(w)) {
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
	pthread_cond_broadcast(&w->space);
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
