/*
 * trace_load.h: a recorded trace (schema/trace.sql) read into flat arrays,
 * the planner's only view of the SQLite file.
 *
 * Everything the planner needs is loaded once with prepared statements into
 * arrays indexed by kernel position (launch order) and allocation index, so
 * the analysis never goes back to SQLite and never mallocs per kernel. The
 * file is validated first (common/trace_schema.h): a missing table or a newer
 * schema version comes back as an error naming the file.
 *
 * Kernels without a sequence number (launched inside a CUDA graph, so no
 * launch callback saw them) are counted but not loaded: the plan is keyed by
 * launch order, which they do not have.
 */
#ifndef UMKIT_TRACE_LOAD_H
#define UMKIT_TRACE_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A time the trace does not have (NULL start_ns/end_ns/launch_ns). */
#define TRACE_NS_NONE INT64_MIN
/* free_ns of an allocation the program never freed. */
#define TRACE_NS_NEVER INT64_MAX

struct trace_kernel {
	uint64_t exec_id;   /* 0: unknown */
	int64_t launch_ns;  /* CPU time of the launch; nondecreasing (see below) */
	int64_t start_ns;   /* GPU start, TRACE_NS_NONE if the activity is missing */
	int64_t end_ns;     /* GPU end, TRACE_NS_NONE likewise */
	uint32_t name;      /* string id of the kernel name */
	uint64_t shape_id;  /* execid_shape_of: name, grid, block, shared memory */
};

struct trace_alloc {
	uint64_t id;        /* the allocation ordinal (alloc.id) */
	uint64_t address, size, reserved;
	int64_t alloc_ns;
	int64_t free_ns;    /* TRACE_NS_NEVER if never freed */
};

/* A copy or memset into allocation alloc_id (write_dst), placed as
 * write_pos places one: the position of the first kernel launched after. */
struct trace_alloc_write {
	uint64_t alloc_id;
	size_t pos;
};

/* One UM migration of the direction and cause the planner uses. */
struct trace_migration {
	int64_t start_ns;
	uint64_t address, bytes;
};

struct trace_nvtx {
	uint32_t name;      /* string id */
	int64_t start_ns;
	int64_t end_ns;     /* TRACE_NS_NEVER if never closed */
};

struct trace {
	char *path;

	/* Kernels in launch order (kernel.seq order); [0, n_kernels). */
	size_t n_kernels;
	struct trace_kernel *kernels;
	/* Argument allocations of kernel i: arg_alloc[arg_first[i] ..
	 * arg_first[i + 1]), indices into allocs, sorted, no duplicates. */
	uint32_t *arg_first;
	uint32_t *arg_alloc;
	size_t n_args;

	/* Allocations in ordinal (alloc.id) order. */
	size_t n_allocs;
	struct trace_alloc *allocs;
	/* The ordinals of the program's own managed allocations
	 * (TRACE_API_MANAGED), ascending: the host may have written them at
	 * any time (trace_host_writes). Few or none, so kept apart from
	 * allocs, where a flag would cost every allocation 8 bytes with its
	 * padding. */
	size_t n_managed_allocs;
	uint64_t *managed_alloc_ids;

	/* On-demand (cause 'fault') host-to-device migrations and sampled GPU
	 * faults (bytes 0), each sorted by start_ns. */
	size_t n_fault_migrations, n_faults;
	struct trace_migration *fault_migrations, *faults;
	/* Totals over every migration record, for the report. */
	uint64_t htod_bytes, dtoh_bytes, fault_bytes;

	/* Copies and memsets that may write device memory (htod, dtod, ptop and
	 * unknown copies; all memsets) whose destination the trace does not
	 * give (no write_dst row: a trace older than version 3, a copy whose
	 * destination sits in a descriptor, a graph's node), so they may have
	 * written any allocation. Those with a correlation id are placed in
	 * launch order by it (CUPTI numbers API calls in issue order):
	 * write_pos holds the position of the first kernel launched after each.
	 * The others are known only by their GPU start time (write_ns). Both
	 * sorted. The writes whose destination is known are in alloc_writes,
	 * sorted by allocation, then position; those into no allocation of the
	 * arena are left out. */
	size_t n_write_pos, n_write_ns, n_alloc_writes;
	size_t *write_pos;
	int64_t *write_ns;
	struct trace_alloc_write *alloc_writes;

	size_t n_nvtx;
	struct trace_nvtx *nvtx; /* sorted by start_ns */

	/* The string table, sorted by id: string_ids[i] names strings[i]. */
	size_t n_strings;
	int64_t *string_ids;
	char **strings;

	/* meta */
	uint64_t device_memory; /* 0: unknown */
	char *device_name;      /* "" if unknown */
	char *command;          /* "" if unknown */
	char *status;           /* "recording", "complete", "failed" or "" */
	bool framework_cache;   /* PyTorch's caching allocator was on: a
				   PyTorch program's allocations are its
				   segments, not tensors */
	uint64_t runtime_allocs, runtime_alloc_bytes; /* allocations the runtime
				    served in the arena's stead: no alloc
				    rows, so kernels' uses of them unknown
				    (meta; 0 in traces before session 55) */
	uint64_t driver_allocs, driver_alloc_bytes; /* allocations made
				    through the driver, past the shim: the
				    same (meta; 0 in traces before session
				    66) */
	uint64_t driver_alloc_peak_bytes; /* the most of those held at once:
				    device memory never the budget's (meta;
				    0 in traces before session 67) */
	uint64_t driver_managed_allocs, driver_managed_alloc_bytes; /* managed
				    memory made so (cuMemAllocManaged), not
				    in the three above: the driver migrates
				    it, so it is not taken off the capacity
				    (meta; 0 in traces before session 77,
				    which counted it with the above) */
	uint64_t driver_managed_alloc_peak_bytes; /* the most of it held at once */
	int64_t arena_context_id; /* the CUPTI ID of the context the arena
				     served; -1: unknown (traces before
				     session 57), every kernel kept */
	int64_t device_reset_ns; /* the program's cudaDeviceReset;
				    TRACE_NS_NONE: none. The kernels,
				    migrations, faults, copies and NVTX
				    ranges from then on are left out */

	size_t graph_kernels;   /* kernels CUDA graphs ran (graph_kernel; in a
				   trace without it the kernel rows without
				   seq), not loaded */
	size_t unlaunched_kernels; /* with graph_kernel, kernel rows without
				      seq: no launch callback showed them; not
				      loaded */
	size_t after_reset_kernels; /* launched after device_reset_ns, in memory
				       the recorder did not see: not loaded */
	size_t other_context_kernels; /* launched before any reset in another
					 context than the arena's (another
					 GPU's, or one the program made): not
					 loaded */
	size_t untimed_kernels; /* kernels without GPU start/end */
	bool launch_reordered;  /* some launch_ns decreased in seq order (fixed up) */
};

/*
 * Opens, validates and loads the trace at path. Returns the trace, or NULL
 * with err naming path and the problem (missing file, not a trace, newer
 * schema, missing table, a failed query, out of memory).
 * launch_ns is made nondecreasing in launch order (a later launch reported
 * with an earlier clock value takes its predecessor's time) so positions can
 * be found by binary search; launch_reordered says whether that happened.
 */
struct trace *trace_load(const char *path, char *err, size_t errlen);

/* Frees t and everything it holds; NULL is a no-op. */
void trace_free(struct trace *t);

/* The string with id, or "?" for an unknown id. Never NULL. */
const char *trace_string(const struct trace *t, uint32_t id);

/* Whether a, one of t's allocations, is the program's own managed memory
 * (managed_alloc_ids), which the host may have written at any time. */
bool trace_host_writes(const struct trace *t, const struct trace_alloc *a);

/* The first kernel position whose launch_ns >= ns (n_kernels if none): the
 * position of an event that happened at CPU time ns. */
size_t trace_position_at(const struct trace *t, int64_t ns);


/* True when a copy or memset that may write allocation a was issued
 * between the launches of kernels from_pos - 1 and to_pos (for one placed
 * by correlation id), or started on the GPU within [from_ns, to_ns] (for
 * one known only by time): one into a, or one whose destination the trace
 * does not give. */
bool trace_write_between(const struct trace *t, const struct trace_alloc *a, size_t from_pos, size_t to_pos,
			 int64_t from_ns, int64_t to_ns);

#endif
