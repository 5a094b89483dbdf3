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
 * Nothing here needs CUDA: tests feed it synthetic events.
 */
#ifndef UMKIT_TRACE_WRITER_H
#define UMKIT_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

typedef struct trace_writer trace_writer;

struct trace_writer_options {
	unsigned flush_interval_ms; /* 0: default (100 ms) */
	size_t batch_events;        /* wake the writer at this many events; 0: default */
};

/*
 * Creates path (replacing an existing file and its -wal/-shm companions),
 * creates the schema, sets meta.status = 'recording' and starts the writer
 * thread. On failure returns NULL and writes a message naming the file and
 * the problem into err.
 */
trace_writer *trace_writer_open(const char *path, const struct trace_writer_options *opt,
				char *err, size_t errlen);

/*
 * Drains every queued event, sets meta.status = 'complete' and end_ns,
 * checkpoints the WAL and closes the database. Returns 0, or -1 with err set.
 * The writer is freed either way.
 */
int trace_writer_close(trace_writer *w, uint64_t end_ns, char *err, size_t errlen);

/* Sets meta.key = value (replacing an earlier value). Queued like events. */
void trace_writer_meta(trace_writer *w, const char *key, const char *value);

/*
 * Returns the string table id of s, adding it on first sight. Thread-safe
 * and fast for repeated strings (an in-memory table answers after the first
 * call); the row itself is written with the next batch.
 */
int64_t trace_writer_intern(trace_writer *w, const char *s);

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
	uint64_t exec_id;
	int64_t name_id; /* from trace_writer_intern */
	uint32_t grid[3], block[3];
	uint32_t shared_mem;
	uint32_t stream_id;
	uint32_t thread_id;
	uint64_t launch_ns;
	const struct trace_kernel_arg *args;
	size_t nargs;
};
void trace_writer_launch(trace_writer *w, const struct trace_launch *l);

/* What the kernel activity record knows. Completes (or creates) the row of
 * the same correlation ID. */
struct trace_kernel_activity {
	uint32_t correlation_id;
	int64_t name_id;
	uint32_t grid[3], block[3];
	uint32_t shared_mem;
	uint32_t stream_id;
	uint64_t start_ns, end_ns;
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
	uint32_t stream_id;
	uint64_t start_ns, end_ns;
};
void trace_writer_memcpy(trace_writer *w, const struct trace_memcpy *c);

struct trace_memset {
	uint32_t correlation_id;
	uint64_t bytes;
	uint32_t value;
	uint32_t stream_id;
	uint64_t start_ns, end_ns;
};
void trace_writer_memset(trace_writer *w, const struct trace_memset *s);

struct trace_writer_stats {
	uint64_t events;       /* accepted */
	uint64_t batches;      /* transactions committed */
	uint64_t write_errors; /* failed statements (the first is logged) */
	uint64_t kernels, allocs, migrations, faults, nvtx_ranges;
};
/* Counts so far; safe from any thread. */
void trace_writer_get_stats(trace_writer *w, struct trace_writer_stats *out);

#endif
