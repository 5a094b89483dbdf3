/*
 * trace_writer_int.h: the trace writer's state, shared by the files that
 * implement it (not part of the contract; callers use trace_writer.h only):
 *
 *   trace_writer.c         the event calls: the queue and the string intern
 *                          table (producer side)
 *   trace_writer_thread.c  the writer thread: the prepared statements, one
 *                          row per event, a transaction per batch
 *   trace_writer_file.c    the database file: remove, claim, open, close,
 *                          and the fork generation
 *
 * Producers fill the batch cur under mu; the writer thread takes it whole
 * and writes it without the lock.
 */
#ifndef UMKIT_TRACE_WRITER_INT_H
#define UMKIT_TRACE_WRITER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "gate.h"
#include "trace_writer.h"

#define CHUNK_EVENTS 1024

enum ev_kind {
	EV_META, EV_STRING, EV_STREAM, EV_LAUNCH, EV_ARG, EV_KERNEL, EV_ALLOC, EV_FREE,
	EV_LIVE, EV_MIGRATION, EV_FAULT, EV_NVTX, EV_MEMCPY, EV_MEMSET, EV_WRITE_DST
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
		struct trace_write_dst write_dst;
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
	ST_FREE, ST_LIVE, ST_MIGRATION, ST_FAULT, ST_NVTX, ST_MEMCPY, ST_MEMSET, ST_WRITE_DST, ST_COUNT
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
	 * of such batches, written again with the next, and first in the
	 * transaction that goes on after a rollback part-way (kernel rows name
	 * them; the text belongs to the intern table). */
	uint32_t *streams;
	size_t n_streams, cap_streams;
	struct { int64_t id; const char *s; } *rewrite;
	size_t n_rewrite, cap_rewrite;

	pthread_mutex_t mu;  /* everything below */
	pthread_cond_t wake; /* to the writer: a full batch, a producer
				waiting for room, or stop */
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

/* True when w was opened by another process (this one is its forked child):
 * w then belongs to the parent, and nothing in it may be used here, its
 * mutex included. Any thread; takes no lock. */
bool trace_writer_foreign(const trace_writer *w);

/* Prepares w->st, every statement the writer thread runs, on w->db (which
 * holds the schema). Returns 0, or -1 with a message naming the table in
 * err; the statements prepared so far are left in w->st for the caller to
 * finalize. */
int trace_writer_prepare(trace_writer *w, char *err, size_t errlen);

/* The writer thread (arg: the trace_writer): commits the queued batches, at
 * least every flush_ms, until stop is set and the queue is empty. Until it
 * is joined it alone uses db, st, streams and rewrite; everything else it
 * touches under mu. */
void *trace_writer_main(void *arg);

#endif
