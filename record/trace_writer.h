/*
 * trace_writer.h: the recording side of the trace (schema/trace.sql).
 *
 * The writer owns one SQLite database in WAL mode and one background thread.
 * Producers (CUPTI callbacks, activity-buffer handlers, the allocator shim)
 * call the trace_writer_* event functions from any thread; each copies its
 * event into an in-memory batch under a short mutex and returns without
 * touching the disk. The writer thread commits batches in one transaction
 * each, at least every flush interval, so a process killed at any point
 * leaves a database that opens and passes PRAGMA integrity_check, holding
 * everything committed up to the last batch.
 *
 * Rules for callers:
 *  - Events are applied in the order they were accepted, across threads:
 *    report an allocation before a launch that uses it, a launch before its
 *    kernel activity (the reverse also works), an allocation before its free.
 *  - Event calls never do I/O. They block only when max_queued events are
 *    waiting for a disk that cannot keep up (backpressure: the program slows
 *    down instead of the recorder dropping events or growing without bound).
 *  - trace_writer_close waits for event calls already running and ignores
 *    those that start while it runs (so a late CUPTI callback is harmless),
 *    but none may start after it has returned: the writer is freed. No call
 *    is async-signal-safe.
 *  - After fork(), the child's writer is inert: event calls do nothing,
 *    trace_writer_intern returns 0 and trace_writer_close returns -1 without
 *    touching the parent's file (DataLoader workers fork a traced process).
 *    The child may use SQLite itself: fork() waits for the writer thread
 *    to let go of SQLite's allocator lock (an allocation's time).
 *  - Failed writes are counted, never fatal: see trace_writer_first_error.
 *
 * Nothing here needs CUDA: tests feed it synthetic events.
 */
#ifndef UMKIT_TRACE_WRITER_H
#define UMKIT_TRACE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "set_aside.h"

typedef struct trace_writer trace_writer;

struct trace_writer_options {
	unsigned flush_interval_ms; /* 0: default (100 ms) */
	size_t batch_events;        /* wake the writer at this many events; 0: default (4096) */
	size_t max_queued;          /* producers wait while this many events are queued
				       (a kernel argument counts as one); 0: default
				       (262144 x up to 96 bytes, about 24 MiB, plus
				       as much for the batch being written) */
	bool claimed;               /* path was claimed (trace_writer_claim): open
				       that file, removing only stale -wal/-shm
				       companions, instead of replacing it */
};

/* A trace's files for common/set_aside.h: the trace and the -wal, -shm
 * and -journal companions SQLite keeps next to it, which go with it. */
extern const struct file_set trace_writer_files;

/*
 * Claims path for one recording: creates it empty, failing with errno
 * EEXIST when it exists. Where several processes are handed one path (a
 * program's children inherit the variable naming it), only the first to
 * claim it records into it. Returns 0, or -1 with errno set.
 */
int trace_writer_claim(const char *path);

/*
 * Creates path (replacing an existing file and its -wal/-shm companions,
 * unless claimed), creates the schema, sets meta.status = 'recording' and
 * starts the writer thread. On failure returns NULL and writes a message
 * naming the file and the problem into err.
 */
trace_writer *trace_writer_open(const char *path, const struct trace_writer_options *opt,
				char *err, size_t errlen);

/*
 * Drains every queued event, sets meta.status = 'complete' and end_ns (and
 * meta.write_errors when some rows failed), checkpoints the WAL and closes
 * the database, leaving one self-contained file (journal mode DELETE).
 * Returns 0; 1 with err set when the trace is whole but stays in WAL mode,
 * because another process had it open; -1 with err set when the final
 * writes failed or any write failed during the run. The writer is freed
 * either way (except in a forked child, see above). Blocks for the final
 * commit.
 */
int trace_writer_close(trace_writer *w, uint64_t end_ns, char *err, size_t errlen);

/*
 * The recording could not start: closes as trace_writer_close does, with
 * meta.status = 'failed' and meta.error = why, so that neither the user
 * nor umplan takes the trace for a complete one that saw no GPU work.
 */
int trace_writer_abandon(trace_writer *w, uint64_t end_ns, const char *why, char *err, size_t errlen);

/* Sets meta.key = value (replacing an earlier value). Queued like events. */
void trace_writer_meta(trace_writer *w, const char *key, const char *value);

/*
 * Returns the string table id (1, 2, ...) of s, adding it on first sight;
 * NULL interns "". Thread-safe and fast for repeated strings (an in-memory
 * table answers after the first call); the row itself is written with the
 * next batch, before any event accepted after this call.
 */
int64_t trace_writer_intern(trace_writer *w, const char *s);

/*
 * trace_writer_intern for an NVTX message: the table keeps
 * TRACE_WRITER_MESSAGES_KEPT distinct messages, so that a program naming
 * every range anew cannot grow the recorder without bound. Past them, a new
 * message gets the id of TRACE_WRITER_MESSAGE_NOT_KEPT, and each such call
 * is counted in meta.messages_not_kept. Kernel names are always kept.
 */
#define TRACE_WRITER_MESSAGES_KEPT 65536
#define TRACE_WRITER_MESSAGE_NOT_KEPT "(not kept: the trace keeps 65536 distinct NVTX messages)"
int64_t trace_writer_intern_message(trace_writer *w, const char *s);

struct trace_stream {
	uint32_t id;
	uint32_t context_id;
	uint64_t created_ns;
};
void trace_writer_stream(trace_writer *w, const struct trace_stream *s);

/* A pointer-valued kernel parameter word that falls in a managed allocation. */
struct trace_kernel_arg {
	uint32_t param_offset;
	uint64_t alloc_id;
	uint64_t offset;
};

/* What the launch callback knows. args is copied; nargs may be 0. */
struct trace_launch {
	uint32_t correlation_id;
	uint64_t seq;
	uint64_t exec_id; /* 0: unknown, stored as NULL */
	int64_t name_id;  /* from trace_writer_intern */
	uint32_t grid[3], block[3];
	uint32_t shared_mem;
	uint32_t thread_id;
	uint64_t launch_ns;
	const struct trace_kernel_arg *args;
	size_t nargs;
};
void trace_writer_launch(trace_writer *w, const struct trace_launch *l);

/* What the kernel activity record knows. Completes (or creates) the row of
 * the same correlation ID; a kernel a graph ran (graph_id not 0) gets a
 * graph_kernel row instead. */
struct trace_kernel_activity {
	uint32_t correlation_id;
	int64_t name_id;
	uint32_t grid[3], block[3];
	uint32_t shared_mem;
	uint32_t stream_id, context_id;
	uint64_t start_ns, end_ns;
	uint32_t graph_id;       /* 0: launched by the program */
	uint64_t graph_node_id;
};
void trace_writer_kernel(trace_writer *w, const struct trace_kernel_activity *k);

struct trace_alloc {
	uint64_t id; /* the arena's allocation ordinal */
	uint64_t address;
	uint64_t size, reserved;
	const char *api; /* a string literal: not copied */
	uint64_t alloc_ns;
	uint32_t thread_id;
	uint32_t stream_id; /* 0 when not stream-ordered */
};
void trace_writer_alloc(trace_writer *w, const struct trace_alloc *a);
void trace_writer_free(trace_writer *w, uint64_t alloc_id, uint64_t free_ns, uint32_t thread_id);
/* Marks an allocation still live when the program exited. */
void trace_writer_live_at_exit(trace_writer *w, uint64_t alloc_id);

enum trace_direction { TRACE_HTOD, TRACE_DTOH, TRACE_DTOD };
enum trace_cause {
	TRACE_CAUSE_UNKNOWN, TRACE_CAUSE_USER, TRACE_CAUSE_FAULT,
	TRACE_CAUSE_PREFETCH, TRACE_CAUSE_EVICTION, TRACE_CAUSE_ACCESS_COUNTER
};
struct trace_migration {
	uint64_t start_ns, end_ns;
	uint64_t address, bytes;
	enum trace_direction direction;
	enum trace_cause cause;
};
void trace_writer_migration(trace_writer *w, const struct trace_migration *m);

enum trace_access { TRACE_ACCESS_UNKNOWN, TRACE_ACCESS_READ, TRACE_ACCESS_WRITE,
		    TRACE_ACCESS_ATOMIC, TRACE_ACCESS_PREFETCH };
struct trace_fault {
	uint64_t start_ns, end_ns;
	uint64_t address;
	enum trace_access access;
	uint64_t groups;
};
void trace_writer_fault(trace_writer *w, const struct trace_fault *f);

/* end_ns == 0 means the range was never closed. */
struct trace_nvtx {
	int64_t name_id;
	uint32_t thread_id;
	uint64_t start_ns, end_ns;
};
void trace_writer_nvtx(trace_writer *w, const struct trace_nvtx *r);

struct trace_memcpy {
	uint32_t correlation_id;
	const char *kind; /* a string literal: htod, dtoh, dtod, htoh, ptop, unknown */
	uint64_t bytes;
	uint32_t stream_id, context_id;
	uint64_t start_ns, end_ns;
};
void trace_writer_memcpy(trace_writer *w, const struct trace_memcpy *c);

struct trace_memset {
	uint32_t correlation_id;
	uint64_t bytes;
	uint32_t value;
	uint32_t stream_id, context_id;
	uint64_t start_ns, end_ns;
};
void trace_writer_memset(trace_writer *w, const struct trace_memset *s);

/* Where a copy or memset writes, from its driver call: one per correlation
 * ID, which the call's memcpy or memset row shares. */
struct trace_write_dst {
	uint32_t correlation_id;
	uint64_t address;  /* the destination the call named */
	uint64_t alloc_id; /* the allocation holding it; 0: none, stored as NULL */
};
void trace_writer_write_dst(trace_writer *w, const struct trace_write_dst *d);

struct trace_writer_stats {
	uint64_t events;       /* accepted (kernel arguments not counted) */
	uint64_t batches;      /* transactions committed */
	uint64_t write_errors; /* failed statements (the first: trace_writer_first_error) */
	uint64_t kernels;      /* kernel activity records accepted, graph_kernels among them */
	uint64_t graph_kernels; /* those of kernels a graph ran */
	uint64_t launches;     /* launches accepted */
	uint64_t allocs, migrations, faults, nvtx_ranges;
	uint64_t stalls;       /* times a producer waited for the queue to drain */
	uint64_t queue_peak;   /* most events ever queued at once (arguments count) */
	uint64_t dropped;      /* events lost because their queue memory could not be allocated */
	uint64_t messages_not_kept; /* trace_writer_intern_message calls given the not-kept message's id */
};
/* Counts so far; safe from any thread. */
void trace_writer_get_stats(trace_writer *w, struct trace_writer_stats *out);

/*
 * Copies the message of the first failed write ("kernel_arg: UNIQUE
 * constraint failed: ...") into buf. Returns 1 if a write has failed, 0
 * (buf = "") if none has. Safe from any thread.
 */
int trace_writer_first_error(trace_writer *w, char *buf, size_t len);

#endif
