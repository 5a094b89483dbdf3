/*
 * sim.h: umplan --simulate: a trace-driven model of one steady-state
 * iteration under the four policies (design.md, "The simulator"), to predict
 * what umreplay would measure before running it.
 *
 * Model (docs/planner.md, "Simulator"): the planned iteration's kernels run
 * on one GPU stream in launch order with their recorded durations and the
 * recorded idle gaps between them; each kernel needs the 2 MB blocks of the
 * tensors in its access set (access.h); the GPU holds at most capacity bytes
 * in whole blocks. One link carries one transfer at a time, in either
 * direction at that direction's bandwidth (the UVM driver migrates one way
 * at a time: sched.h); each planned call but a discard, and each deepum
 * prefetch call, adds call_cost. A kernel touching a block that is not
 * resident faults: the kernel waits for one fault-batch cost per faulting
 * kernel plus each block's transfer at the fault bandwidth, after any
 * eviction the fault needs (LRU, the driver's, copied DtoH while the
 * kernel waits). Discard frees a block without a
 * copy. Two iterations are run from an empty GPU; the second is measured.
 *  - ideal: everything resident: the recorded cycle time.
 *  - ondemand: faults and LRU eviction only.
 *  - deepum: at each kernel, the blocks of the next SIM_DEEPUM_LOOKAHEAD
 *    kernels are prefetched (a perfect correlation predictor, since the
 *    iteration repeats), making room by evicting LRU blocks the current and
 *    target kernels do not use (none issued where only theirs are left);
 *    the kernel's faults may take the prefetched blocks' room; blocks of
 *    tensors freed there that no live tensor shares are discarded.
 *  - plan: the ops sched_run makes for that capacity, issued before their
 *    kernel on the links; a kernel waits for blocks still arriving, and
 *    faults (with LRU eviction) for the others. A discard drops only blocks
 *    no other live tensor spans (the driver discards pages, not a
 *    neighbour's data); an eviction moves whole blocks, but none the
 *    kernel at its position uses (nor does the replayer's).
 */
#ifndef UMKIT_SIM_H
#define UMKIT_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "floor.h"
#include "planner.h"

/* h100-facts.md: on-demand migration runs at ~4.3 GB/s (about 11x slower
 * than prefetch); each batch of faults costs the driver's fault handling. */
#define SIM_FAULT_BPS 4300000000ULL
#define SIM_FAULT_BATCH_NS 30000ULL
#define SIM_DEEPUM_LOOKAHEAD 1
#define SIM_BLOCK_BYTES (1ULL << ACCESS_BLOCK_SHIFT)
#define SIM_MAX_BLOCKS (1ULL << 24) /* 32 TiB of tensors */
/* The blocks of the tensors each kernel of the iteration uses, summed over
 * its kernels: 1 GiB of the model's per-kernel block lists. */
#define SIM_MAX_BLOCK_USES (1ULL << 27)

enum sim_policy { SIM_IDEAL, SIM_ONDEMAND, SIM_DEEPUM, SIM_PLAN, SIM_N_POLICIES };

/* "ideal", "ondemand", "deepum", "plan". */
const char *sim_policy_name(enum sim_policy p);

struct sim_options {
	uint64_t htod_bytes_per_s, dtoh_bytes_per_s, call_cost_ns;
	uint32_t headroom_pct; /* the plan's, as umplan makes it (sched.h) */
	uint64_t fault_bytes_per_s, fault_batch_ns;
};

/* The planner's link options with the fault constants above. */
void sim_options_default(const struct planner_options *po, struct sim_options *o);

/* The measured iteration of one policy at one capacity. */
struct sim_result {
	uint64_t capacity;
	uint64_t time_ns, ideal_ns, stall_ns; /* time = ideal + stall */
	uint64_t htod_bytes, dtoh_bytes, faults;
	/* The link in the measured iteration: how long the transfers and
	 * calls issued in it keep it busy, and how much of the kernels' time
	 * it carried nothing (all of it when migration and compute run in
	 * series, none when the link is busy throughout). */
	uint64_t link_busy_ns, link_idle_kernel_ns;
	/* Block accounting over the whole run (warm-up included), in blocks:
	 * brought = resident_end + evicted + discarded. */
	uint64_t brought, evicted, discarded, resident_end;
};

/* Throughput as a share of ideal: 100 * ideal time / time. */
double sim_pct_ideal(const struct sim_result *r);

/* The prepared iteration: blocks and per-kernel block sets. */
struct sim_ctx;

/* Prepares pl's iteration. Returns it (free with sim_ctx_free), or NULL with
 * err set (out of memory). */
struct sim_ctx *sim_ctx_new(const struct planner *pl, char *err, size_t errlen);
void sim_ctx_free(struct sim_ctx *c);

/* Scales each kernel's simulated duration by a factor drawn uniformly from
 * [1 - fraction, 1 + fraction], from the recorded durations each time (the
 * same seed gives the same draw; fraction 0 restores them); ideal follows.
 * The plan policy still schedules from the recorded durations: the plan
 * meets a run that differs from its profile (G10, section 7.6). */
void sim_ctx_perturb(struct sim_ctx *c, double fraction, uint64_t seed);

/* W: the most allocation bytes live at one position (report's live peak). */
uint64_t sim_live_peak(const struct sim_ctx *c);
/* Distinct 2 MB blocks the iteration's tensors span. */
uint64_t sim_blocks(const struct sim_ctx *c);
/* The path of the trace the context was built from, for messages. */
const char *sim_trace_path(const struct sim_ctx *c);
/* The message of a simulation that ran out of memory, naming the trace. */
void sim_out_of_memory(const char *trace_path, char *err, size_t errlen);

/* Simulates policy at capacity bytes (ignored for ideal); for SIM_PLAN the
 * planner's scheduler is rerun at that capacity. Returns 0 with *out
 * filled, or -1 with err set (out of memory). */
int sim_run(const struct sim_ctx *c, enum sim_policy policy, uint64_t capacity,
	    const struct sim_options *o, struct sim_result *out, char *err, size_t errlen);

/* The scheduler's modelled residency per position at capacity: without a
 * plan (*before) and under the plan (*after), [*n_pos] each, malloc'd.
 * Returns 0, or -1 with err set (out of memory). */
int sim_residency(const struct sim_ctx *c, uint64_t capacity, const struct sim_options *o,
		  uint64_t **before, uint64_t **after, uint32_t *n_pos, char *err, size_t errlen);

/* One capacity: ratio = W / capacity, and each policy's result. */
struct sim_row {
	double ratio;
	struct sim_result res[SIM_N_POLICIES];
	struct capacity_floor floor; /* what no schedule beats there (floor.h) */
};

/* The capacity floor at capacity with o's eviction rate (floor.h). Returns
 * 0, or -1 with err set (out of memory). */
int sim_floor(const struct sim_ctx *c, uint64_t capacity, const struct sim_options *o, struct capacity_floor *out,
	      char *err, size_t errlen);

/* Parses a comma-separated list of ratios, each a finite number >= 1
 * ("1,1.5,2"). Returns 0 with a malloc'd array, or -1 naming the bad item
 * in bad (a copy of up to badlen - 1 characters). */
int sim_parse_ratios(const char *text, double **out, size_t *n, char *bad, size_t badlen);

/* Runs every policy at capacity W / ratios[i] for each i, or, when capacity
 * is not 0, at that capacity alone (n must then be 1; its ratio is filled
 * in). Returns 0 with *rows (n of them, malloc'd), or -1 with err set. */
int sim_sweep(const struct sim_ctx *c, const double *ratios, size_t n, uint64_t capacity,
	      const struct sim_options *o, struct sim_row **rows, char *err, size_t errlen);

/* The rows as a table (one line per ratio and policy). Returns 0, or -1
 * when the write failed. */
int sim_print(const struct sim_ctx *c, const struct sim_row *rows, size_t n, FILE *out);

/* Sensitivity to kernel durations, per capacity: the plan's % of ideal with
 * the recorded durations and over SIM_SENS_DRAWS perturbed runs. */
#define SIM_SENS_DRAWS 9
struct sim_sensitivity {
	double ratio;
	double recorded_pct;
	double min_pct, median_pct, max_pct;
};

/* Runs ideal and plan at each capacity (as sim_sweep chooses them) with
 * durations perturbed by up to fraction (0 < fraction < 1), seeds 1 ..
 * SIM_SENS_DRAWS, filling out[0 .. n); c is left with its recorded
 * durations. Returns 0, or -1 with err set. */
int sim_sensitivity(struct sim_ctx *c, const double *ratios, size_t n, uint64_t capacity,
		    const struct sim_options *o, double fraction, struct sim_sensitivity *out,
		    char *err, size_t errlen);

/* The sensitivity as a table / as a cJSON array (NULL when out of memory). */
int sim_sensitivity_print(const struct sim_sensitivity *s, size_t n, double fraction, FILE *out);
cJSON *sim_sensitivity_json(const struct sim_sensitivity *s, size_t n, double fraction);

/* The rows as a cJSON object the caller owns, or NULL when out of memory. */
cJSON *sim_json(const struct sim_ctx *c, const struct sim_row *rows, size_t n,
		const struct sim_options *o);

/* Overrides o's link constants from the JSON object in the file at path:
 * htod_gbps, dtoh_gbps (as tests/gpu/calibrate.py prints them), and
 * optionally fault_gbps, call_cost_us, fault_batch_us; other keys are
 * ignored. Returns 0, or -1 with err naming the file and the problem (not
 * readable, not a JSON object, a value that is not a positive number,
 * neither bandwidth given). */
int sim_constants_load(const char *path, struct sim_options *o, char *err, size_t errlen);

/* Whether dir is a folder the CSV files can be written in, with no folder
 * under either file's name and a path short enough for each file and its
 * temporary (checked before the simulation runs, so that a typo costs no
 * run and no output). 0, or -1 with err naming dir and the problem. */
int sim_csv_dir_check(const char *dir, char *err, size_t errlen);

/* Writes DIR/pressure.csv (ratio, position, capacity, and the scheduler's
 * modelled residency before and after the plan at that capacity) and
 * DIR/throughput.csv (ratio, policy, time and % of ideal) for the rows.
 * Both are written whole (common/replace_file.h) before either replaces
 * its earlier one: a failure leaves the earlier pair as it was. Returns
 * 0, or -1 with err naming the file and the problem (the directory must
 * exist). */
int sim_write_csv(const struct sim_ctx *c, const struct sim_row *rows, size_t n,
		  const struct sim_options *o, const char *dir, char *err, size_t errlen);

#endif
