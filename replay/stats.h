/*
 * stats.h: the replay's statistics file (umreplay --stats), JSON written
 * by hand: this code runs inside the program on the GPU machine, which has
 * no JSON library (h100-facts.md). docs/replay.md, "Stats JSON", lists the
 * keys.
 */
#ifndef UMKIT_REPLAY_STATS_H
#define UMKIT_REPLAY_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "um_alloc_stats.h"

/* One completed iteration's share of what the CUDA side measured. */
struct replay_iteration {
	uint64_t fault_migrations, htod_bytes, dtoh_bytes; /* UM counters */
	uint64_t speculative_migrations; /* replay_measured's, in the iteration */
	uint64_t callback_ns;      /* in the launch callbacks */
	uint64_t allocator_ns;     /* serving allocations (um_alloc_stats.ns) */
	uint64_t resynced, lost;   /* launches placed by resynchronisation, and
				      not placed (engine_stats' counters) */
	uint64_t refault_blocks;   /* engine_stats.refault_blocks */
	uint64_t unissued_blocks;  /* engine_stats.unissued_blocks */
	uint64_t unread_evicted_blocks; /* engine_stats.unread_evicted_blocks */
	/* How long migrations of each direction, and kernels, kept the GPU
	 * busy within the iteration's wall-clock window (replay/busy.h);
	 * kernel_busy_ns only when replay_measured.kernels_timed. */
	uint64_t htod_busy_ns, dtoh_busy_ns, kernel_busy_ns;
};

/* The part of the run the UM records cover: an idle replay attaches to
 * CUPTI only when it wakes (docs/replay.md, "Idle"). */
enum traffic_span { TRAFFIC_WHOLE_RUN, TRAFFIC_FROM_WAKE, TRAFFIC_NONE };

/* What the CUDA side measured (CUPTI Unified Memory counters, memory
 * sampling, clocks), as opposed to what the engine decided. */
struct replay_measured {
	uint64_t wall_ns;              /* from the library's start to the exit */
	enum traffic_span counted;
	uint64_t htod_bytes, dtoh_bytes; /* every UM migration record */
	uint64_t fault_migrations;     /* HtoD migrations caused by page faults */
	uint64_t fault_bytes;          /* their bytes */
	uint64_t fault_records;        /* GPU page-fault records (a sample) */
	/* HtoD migrations the driver made on its own around a fault, of pages
	 * not touched yet (CUPTI's cause PREFETCH; the replayer's own are
	 * USER): traffic faults bring in beyond fault_bytes, but no faults. */
	uint64_t speculative_migrations, speculative_bytes;
	uint64_t peak_residency_bytes; /* measured device memory use above the
					  baseline at the first launch or
					  allocation */
	uint64_t budget_bytes;         /* --gpu-budget; 0: none */
	uint64_t dropped_discards;     /* discards the executor did not issue:
					  the range was in use again by then */
	uint64_t fresh_prefetched;     /* discard-and-prefetch ranges made a
					  plain prefetch (their blocks' latest
					  free not yet done on the GPU) */
	uint64_t failed_driver_calls;  /* the replayer's driver calls that
					  failed (the first is warned of) */
	/* Where the replayer's own CPU time went: the driver calls per op kind
	 * (by enum engine_op; host time inside the call, on whichever thread
	 * made it), the launch callbacks on the program's threads, and how
	 * often the program's stream was ordered after a discard. */
	uint64_t driver_calls[4], driver_call_ns[4];
	uint64_t callback_ns;
	uint64_t executor_ns;          /* the engine's calls into the executor
					  (issue, mark, gate), on the program's
					  threads: at launches and at frees */
	uint64_t discard_waits, discard_wait_ns;
	/* Launches ordered after a prefetch of their blocks still copying,
	 * those whose prefetch was not yet issued (rp_exec.c, gate), and the
	 * host time the gate took; of that, the launches that waited for the
	 * worker to issue a late prefetch of theirs, the waits that gave up,
	 * and their host time. */
	uint64_t gate_waits, gates_unissued, gate_ns;
	uint64_t issue_waits, issue_waits_expired, issue_wait_ns;
	/* Discard-and-prefetches that waited for the worker to issue the
	 * evictions queued before them, which make their room; the waits
	 * that gave up, and their host time. */
	uint64_t room_waits, room_waits_expired, room_wait_ns;
	/* Discard-and-prefetch batches that landed ahead of the evictions
	 * queued before them instead, on a stream of their own; of them, the
	 * ones ahead of the newest alone, behind the older ones that made
	 * their room. */
	uint64_t discard_prefetches_ahead, discard_prefetches_ahead_in_part;
	uint64_t discards_ahead;
	/* The most migration jobs queued for the worker at once. */
	uint64_t migration_queue_peak;
	/* Markers recorded behind launches and frees, and the host time. */
	uint64_t markers, marker_ns;
	/* And the program's allocations, served by the arena. */
	struct um_alloc_stats allocator;
	bool kernels_timed;            /* --kernel-times: kernel_busy_ns is known */
	bool stopped_at_graph;         /* the program's first CUDA graph ended
					  the following (docs/replay.md) */
	bool stopped_at_reset;         /* so did its cudaDeviceReset */
	uint64_t other_context_launches; /* launches in another CUDA context
					    than the arena's (another GPU's, or
					    one the program made): not followed */
	uint64_t dropped_records;      /* activity records CUPTI dropped: the
					  traffic and fault counts are short */
	/* Per completed iteration, oldest first (NULL when n_iterations is 0):
	 * steady-state costs, without the warm-up and the tail. */
	size_t n_iterations;
	const struct replay_iteration *iterations;
	/* The on-demand migrations of the steady iterations (all but the
	 * first, or the whole run when there are two or fewer) charged to the
	 * allocations that held their addresses (faultsrc.h): how many there
	 * were, the totals, and the sources with the most bytes. */
	uint64_t fault_window_migrations;
	struct fault_totals fault_totals;
	size_t n_fault_sources;
	const struct fault_source *fault_sources;
	/* And from the engine: the launches the plan could not place in the
	 * steady iterations (lostids.h), the most frequent of them. */
	struct lost_totals lost_totals;
	size_t n_lost_kernels;
	const struct lost_id *lost_kernels;
};

/* The value of the object's first key, "format": what tells a stats file
 * from any other JSON (umreplay replaces only those). */
#define REPLAY_STATS_FORMAT "umkit-replay-stats"

/*
 * Writes one JSON object to f: the policy, the engine's statistics s, the
 * iteration times iter_ns[0 .. n_iters) with their median, and m (NULL:
 * "measured" is null). Returns 0, or -1 when writing failed (errno as the
 * failing stdio call left it) or memory ran out.
 */
int replay_stats_write_json(FILE *f, const char *policy, const struct engine_stats *s,
			    const uint64_t *iter_ns, size_t n_iters, const struct replay_measured *m);

/* As replay_stats_write_json, to the file path, whole or not at all
 * (common/replace_file.h): a write that fails (a full disk) leaves nothing
 * there that reads as this run's. 0, or -1 with err naming path and the
 * problem. */
int replay_stats_write_file(const char *path, const char *policy, const struct engine_stats *s,
			    const uint64_t *iter_ns, size_t n_iters, const struct replay_measured *m, char *err,
			    size_t errlen);

/* The upper median of v[0 .. n) in *out, as the file's iteration_median_ns:
 * false when n is 0 or memory ran out (*out untouched). */
bool replay_stats_median(const uint64_t *v, size_t n, uint64_t *out);

/* The exit summary's words for that median of v[0 .. n) (ns), into buf:
 * "median 12.34 ms", or "no median" where the file's iteration_median_ns
 * is null (no iteration time, or memory ran out). Returns buf. */
const char *replay_stats_median_text(char *buf, size_t len, const uint64_t *v, size_t n);

#endif
