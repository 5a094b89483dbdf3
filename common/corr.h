/*
 * corr.h: DeepUM correlation tables, the replayer's fallback predictor
 * (design.md, mechanisms 7 and 8; docs/plan-format.md).
 *
 * When the run drifts from the plan (dynamic shapes, a changed script) the
 * replayer can no longer follow the plan's positions; it asks these tables
 * instead "which kernels come next, and which UM blocks do they touch?" and
 * prefetches those blocks, rather than falling back to raw page faults.
 *
 * Two tables, built offline by umplan from the recorded kernel sequence and
 * stored in plan.bin:
 *
 *  - the execution-ID table: set-associative, `rows` sets of `ways` entries.
 *    An entry is keyed by one execution ID (set = exec_id % rows) and holds
 *    up to `successors` distinct execution IDs seen right after it, most
 *    recent first. A new successor goes to the front and, when the entry is
 *    full, pushes out the least recently seen one; a repeated successor moves
 *    to the front. A new key in a full set replaces the way whose key was
 *    least recently seen (LRU, by a logical clock that ticks once per
 *    observed kernel). Chaining most-recent successors gives the lookahead:
 *    E -> S1 -> S2 -> ... (corr_next_execs).
 *
 *  - the per-execution UM-block tables: for each execution ID, the UM blocks
 *    its executions touched, allocation-relative (an index into the plan's
 *    allocations and a block index inside that allocation, block_size bytes
 *    per block). A list is in first-touch order, which is also DeepUM's block
 *    successor chain: blocks[i + 1] is the block that followed blocks[i].
 *    Repeated executions of one ID (identical layers hash alike, because
 *    execution IDs are allocation-relative) add their blocks to the same
 *    list, duplicates skipped. Lists are capped per execution ID and in total
 *    so a plan stays small; a capped list keeps its first blocks.
 *
 * Execution ID 0 means "unknown" (trace rows without an ID): it is never a
 * key or a successor, and breaks the successor chain where it occurs.
 *
 * Building and decoding are deterministic: equal inputs give equal tables and
 * byte-identical encodings. Tables are not thread-safe; the caller that
 * updates them online (corr_observe) must serialise access.
 */
#ifndef UMKIT_CORR_H
#define UMKIT_CORR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

typedef struct corr_tables corr_tables;

/* Upper bounds accepted by corr_build and by the decoder (a hostile plan can
 * not make the replayer allocate more than these imply). */
#define CORR_MAX_ROWS (1u << 16)
#define CORR_MAX_WAYS 16u
#define CORR_MAX_SUCCESSORS 16u
#define CORR_MAX_BLOCKS_PER_EXEC (1u << 20)
#define CORR_MAX_BLOCK_ENTRIES ((uint64_t)1 << 26)

struct corr_config {
	uint32_t rows;                /* sets in the exec-ID table (default 2048) */
	uint32_t ways;                /* entries per set (default 2) */
	uint32_t successors;          /* successor IDs per entry (default 4) */
	uint32_t max_blocks_per_exec; /* cap on one block list (default 4096) */
	uint64_t max_block_entries;   /* cap on all block lists together (default 4 Mi) */
	uint64_t block_size;          /* UM block bytes (default 2 MiB) */
	bool wrap;                    /* the kernel sequence is one iteration of a
					 repeating program: its last kernel is
					 followed by its first (default true) */
};

/* One UM block, allocation-relative. */
struct corr_block {
	uint32_t alloc; /* index into the plan's allocations */
	uint32_t block; /* block index inside that allocation: offset / block_size */
};

/* The blocks one kernel execution touched, in touch order. */
struct corr_kernel_blocks {
	const struct corr_block *blocks;
	size_t n;
};

/* Fills cfg with the defaults above. */
void corr_config_default(struct corr_config *cfg);

/* Checks cfg against the limits above. Returns 0, or -1 with err saying
 * which field is out of range. */
int corr_config_check(const struct corr_config *cfg, char *err, size_t errlen);

/*
 * Builds the tables from one kernel sequence: exec_ids[i] is the execution ID
 * of the i-th kernel, blocks[i] (if blocks is not NULL) the blocks it
 * touched. Kernels are observed in order, as corr_observe would; with
 * cfg->wrap the last kernel is then followed by the first. Returns the
 * tables, or NULL with err set (bad config, out of memory).
 */
corr_tables *corr_build(const struct corr_config *cfg, const uint64_t *exec_ids,
			size_t n_kernels, const struct corr_kernel_blocks *blocks,
			char *err, size_t errlen);

/* Empty tables for cfg (for online learning only). NULL as corr_build. */
corr_tables *corr_create(const struct corr_config *cfg, char *err, size_t errlen);

void corr_destroy(corr_tables *t);

/* The configuration the tables were built with. */
const struct corr_config *corr_config_of(const corr_tables *t);

/*
 * Records that exec_id ran after prev_exec_id (0: none known) and touched
 * blocks[0..n) (n may be 0). This is what corr_build does for each kernel;
 * the replayer may call it to keep learning online. Returns 0, or -1 when
 * out of memory (the tables stay usable, the observation is partly lost).
 */
int corr_observe(corr_tables *t, uint64_t prev_exec_id, uint64_t exec_id,
		 const struct corr_block *blocks, size_t n);

/* The distinct successors recorded for exec_id, most recent first, at most
 * max of them into out. Returns how many were written (0: unknown ID). */
size_t corr_successors(const corr_tables *t, uint64_t exec_id, uint64_t *out, size_t max);

/*
 * The predicted next execution IDs after exec_id: out[0] is exec_id's most
 * recent successor, out[1] that one's most recent successor, and so on, until
 * max IDs or an ID with no successor. The chain may revisit IDs (the program
 * loops). Returns how many were written.
 */
size_t corr_next_execs(const corr_tables *t, uint64_t exec_id, uint64_t *out, size_t max);

/* The block list of exec_id (first-touch order) and its length in *n, or
 * NULL with *n = 0 if it has none. The memory belongs to t and stays valid
 * until the next corr_observe or corr_destroy. */
const struct corr_block *corr_blocks_of(const corr_tables *t, uint64_t exec_id, size_t *n);

/* Sizes, for reports and --dump. */
struct corr_stats {
	uint64_t rows_used;        /* sets with at least one entry */
	uint64_t exec_entries;     /* keys in the exec-ID table */
	uint64_t successor_links;  /* successor IDs over all entries */
	uint64_t exec_evictions;   /* keys pushed out of a full set while building */
	uint64_t block_lists;      /* execution IDs with a block list */
	uint64_t block_entries;    /* blocks over all lists */
	uint64_t blocks_dropped;   /* blocks left out by the caps (of those
				      given: umplan cuts a kernel's list at
				      max_blocks_per_exec first) */
};
void corr_get_stats(const corr_tables *t, struct corr_stats *out);

/* Walking the tables (--dump, validation). Slot i (0 <= i < rows * ways) is
 * way i % ways of set i / ways; it is empty when *exec_id is set to 0. */
struct corr_exec_slot {
	uint64_t exec_id;        /* key; 0: empty slot */
	uint64_t last_seen;      /* logical clock of the key's last observation */
	uint32_t n_successors;
	const uint64_t *successors; /* most recent first; owned by the tables */
};
size_t corr_exec_slot_count(const corr_tables *t);
void corr_exec_slot_get(const corr_tables *t, size_t i, struct corr_exec_slot *out);

/* Block list i, 0 <= i < corr_block_list_count(): returns its exec ID and
 * fills *blocks, *n. After corr_build and corr_decode the lists are in
 * increasing exec-ID order; corr_observe appends lists for new IDs. */
size_t corr_block_list_count(const corr_tables *t);
uint64_t corr_block_list_get(const corr_tables *t, size_t i,
			     const struct corr_block **blocks, size_t *n);

/* The two plan sections (docs/plan-format.md). Encoding appends to out
 * (check out->oom). Decoding validates everything (limits, set placement,
 * duplicate keys, ordering, counts) and returns NULL with err set, naming
 * `name`, on any problem; it never reads out of bounds. */
void corr_encode_exec(const corr_tables *t, struct bytes_buf *out);
void corr_encode_blocks(const corr_tables *t, struct bytes_buf *out);
corr_tables *corr_decode(const void *exec_sec, size_t exec_len,
			 const void *block_sec, size_t block_len,
			 const char *name, char *err, size_t errlen);

#endif
