/*
 * rec_summary.h: what umrec tells the user after a recording: the counts in
 * the trace, and whether the trace is complete and holds CUDA activity.
 *
 * Reads the trace read-only (the recorder has exited by then); nothing
 * here prints.
 */
#ifndef UMKIT_REC_SUMMARY_H
#define UMKIT_REC_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_summary {
	char status[32]; /* meta.status: "complete", "recording", "failed", or "" if absent */
	uint64_t kernels;
	uint64_t allocs, allocs_freed, allocs_live; /* live: marked live_at_exit */
	uint64_t migrations, htod_bytes, dtoh_bytes;
	uint64_t fault_bytes;     /* of htod_bytes, moved because a kernel touched them */
	uint64_t faults;          /* GPU page-fault records (a sample) */
	uint64_t nvtx_ranges;
	uint64_t messages_not_kept; /* meta.messages_not_kept: ranges whose message the
				       recorder did not keep (trace_writer_intern_message) */
	uint64_t graph_kernels;     /* kernels CUDA graphs ran (table graph_kernel) */
	uint64_t captured_launches; /* meta.captured_launches: launches captured into graphs */
	uint64_t runtime_allocs, runtime_alloc_bytes; /* meta.runtime_allocs, _bytes: the
						    runtime's memory, not recorded */
	uint64_t driver_allocs, driver_alloc_bytes; /* meta.driver_allocs, _bytes: memory
						  got past the shim, not recorded */
	uint64_t driver_alloc_peak_bytes; /* meta.driver_alloc_peak_bytes: the most
					     of it held at once */
	uint64_t driver_managed_allocs, driver_managed_alloc_bytes; /* meta.driver_managed_allocs,
						  _alloc_bytes: managed memory got so,
						  not recorded, not planned */
	uint64_t driver_managed_alloc_peak_bytes; /* meta.driver_managed_alloc_peak_bytes:
						     the most of it held at once */
	uint64_t dropped_records; /* meta.dropped_records: activity CUPTI lost */
	bool device_reset;          /* meta.device_reset_ns is set: the program's
				       reset destroyed the arena's memory */
	uint64_t kernels_after_reset; /* kernels launched from then on */
	uint64_t other_context_kernels; /* launched before any reset in another
					   context than meta.arena_context_id
					   (another GPU's, or one the program
					   made): not planned */
	uint64_t disk_bytes;      /* the database file and its -wal */
};

/*
 * Reads the counts of the trace at path into *out. Returns 0; 1 when
 * nothing was recorded (path does not exist, or is an empty file with no
 * write-ahead log: the recorder claimed it but never opened it); -1 with
 * err ("PATH: problem") when it is not a readable umkit trace.
 */
int rec_summary_read(const char *path, struct rec_summary *out, char *err, size_t errlen);

/*
 * What is wrong with a trace, as a sentence for the user: incomplete (the
 * recorder never marked it complete; killed: a signal ended the command,
 * otherwise it exited) or without any CUDA activity. NULL when the trace
 * is complete and holds something.
 */
const char *rec_summary_problem(const struct rec_summary *s, bool killed);

/*
 * Writes the summary as newline-separated lines, without a trailing newline,
 * into buf: the path, status, size on disk and elapsed_ns (the run's wall
 * time), then one line each for kernels, allocations, migrations, faults,
 * NVTX ranges (with the messages not kept, when any), when any CUDA
 * graphs, when a device reset, when any kernels of another context, when
 * any allocations the runtime served, when any device memory got through
 * the driver, when any managed memory got so and when any dropped
 * records. Returns buf.
 */
const char *rec_summary_format(const struct rec_summary *s, const char *path, uint64_t elapsed_ns, char *buf,
			       size_t len);

#endif
