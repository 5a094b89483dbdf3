/*
 * plan.h: the in-memory plan that umplan produces and umreplay consumes, and
 * its encoding into plan.bin (docs/plan-format.md has the byte layout and the
 * semantics in full).
 *
 * A plan describes one iteration of a repeating program. Everything in it is
 * allocation-relative: an op names an allocation by how the replayer will
 * recognise it at run time (its ordinal, see struct plan_alloc) and a byte
 * range inside it, never a raw address, so a plan applies to every run of the
 * same program.
 *
 * struct plan is a plain struct: the planner fills it directly (every
 * pointer malloc'ed, owned by the plan, freed by plan_destroy), calls
 * plan_finalize, then plan_save. The replayer gets it from plan_load, which
 * has checked every invariant listed here, so the replayer may index with
 * op.alloc, op.position etc. without further bounds checks.
 */
#ifndef UMKIT_PLAN_H
#define UMKIT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corr.h"
#include "planfile.h"

#define PLAN_BLOCK_SIZE ((uint64_t)2 << 20) /* one UM block: 2 MiB */

/* "No kernel": the value of plan_op.after / plan_op.deadline when the field
 * does not apply to the op. */
#define PLAN_POS_NONE UINT32_MAX

enum plan_alloc_origin {
	/* Allocated before the planned iteration (weights, optimizer state):
	 * ordinal is the global allocation ordinal, 1-based, as alloc.id in
	 * the trace (the ordinal-th allocation the process made). */
	PLAN_ALLOC_PERSISTENT = 1,
	/* Allocated during the iteration (activations, gradients, workspace):
	 * ordinal counts, 1-based, the allocations made since the iteration's
	 * first kernel was launched (the k-th allocation of the iteration). Its
	 * size must equal signature.alloc_sizes[ordinal - 1]. */
	PLAN_ALLOC_ITERATION = 2,
	/* The previous iteration's instance of the iteration's ordinal-th
	 * allocation, freed during this iteration after this iteration's
	 * instance was made (two are live at once; format version 3). Its size
	 * must equal signature.alloc_sizes[ordinal - 1]. */
	PLAN_ALLOC_PREVIOUS = 3,
};

struct plan_alloc {
	uint8_t origin;   /* enum plan_alloc_origin */
	uint64_t ordinal; /* >= 1; (origin, ordinal) is unique in a plan */
	uint64_t size;    /* bytes the program asked for (trace alloc.size), > 0 */
};

/* Op kinds, numbered in the order the replayer issues them when several are
 * due at one position: room is made (discard, evict) before data is brought
 * in (prefetch). */
enum plan_op_kind {
	PLAN_OP_DISCARD = 1,          /* drop the range's contents, no copy: the
					 program freed it (dead data) */
	PLAN_OP_EVICT = 2,            /* migrate the range to host memory */
	PLAN_OP_DISCARD_PREFETCH = 3, /* discard, then populate on the GPU, no
					 copy: a new allocation (issued at or
					 after it is made) whose memory holds only
					 an earlier owner's dead data and that
					 nothing has written yet */
	PLAN_OP_PREFETCH = 4,         /* migrate the range to the GPU */
};
#define PLAN_OP_KIND_MIN PLAN_OP_DISCARD
#define PLAN_OP_KIND_MAX PLAN_OP_PREFETCH

/*
 * One migration op. Positions are 0-based indices into the iteration's
 * kernel sequence (signature.exec_ids).
 *  - position: issued when the replayer reaches kernel #position, before
 *    launching it.
 *  - after (EVICT, DISCARD, DISCARD_PREFETCH): the last kernel that uses the
 *    range before the op; the op is queued behind an event recorded after
 *    the most recent launch of kernel #after (when after >= position, that
 *    is the previous iteration's launch). PLAN_POS_NONE: nothing to wait for.
 *    PREFETCH: PLAN_POS_NONE.
 *  - deadline (PREFETCH, DISCARD_PREFETCH): the kernel that needs the range;
 *    deadline < position means the next iteration's kernel #deadline.
 *    EVICT, DISCARD: PLAN_POS_NONE.
 *  - alloc, offset, bytes: the range [offset, offset + bytes) of
 *    allocs[alloc]; bytes > 0 and the range lies inside the allocation's
 *    size (the replayer may widen it to whole UM blocks).
 */
struct plan_op {
	uint32_t position;
	uint8_t kind; /* enum plan_op_kind */
	uint32_t after;
	uint32_t deadline;
	uint32_t alloc; /* index into plan.allocs */
	uint64_t offset, bytes;
};

/* What program the plan was made for: a plan for another program (or another
 * batch size, model, ...) is detected by comparing these. */
struct plan_signature {
	uint32_t n_kernels;       /* kernels in one iteration, >= 1 */
	uint64_t *exec_ids;       /* [n_kernels] execution IDs, in launch order */
	uint64_t *shape_ids;      /* [n_kernels] their shape IDs (execid_shape_of),
				     for matching where an ID drifts; NULL in a
				     plan without them. Not in the hash. */
	uint32_t n_alloc_sizes;   /* allocations made during one iteration */
	uint64_t *alloc_sizes;    /* [n_alloc_sizes] their sizes, in order */
	uint64_t *alloc_before;   /* [n_kernels] how many of them the program
				     had made when it launched each kernel:
				     nondecreasing, at most n_alloc_sizes;
				     NULL in a plan without them. Not in the
				     hash. */
	uint32_t ring_steps;      /* where the iteration is a ring of
				     persistent buffers in turn (iter.h,
				     rotation): its steps, 2 ..
				     PLAN_MAX_RING_STEPS, dividing n_kernels;
				     0 without a ring */
	uint64_t *ring_keys;      /* [n_kernels] with ring_steps, else NULL:
				     the ordinal of the allocation that tells
				     each kernel's step of the ring, 0 for
				     none. Not in the hash. */
	uint64_t hash;            /* plan_signature_hash of the above */
};

/* What the planner assumed about the machine. */
struct plan_assumptions {
	uint64_t capacity_bytes;   /* GPU memory the plan keeps residency under */
	uint64_t htod_bytes_per_s; /* host-to-device bandwidth */
	uint64_t dtoh_bytes_per_s; /* device-to-host bandwidth */
	uint64_t call_cost_ns;     /* fixed cost of one prefetch/evict call */
	uint64_t block_size;       /* UM block bytes, a power of two (PLAN_BLOCK_SIZE) */
};

/* What the planner predicts for one iteration under the plan (reports and
 * sanity checks only; the replayer does not act on them). */
struct plan_predictions {
	uint64_t peak_residency_bytes;
	uint64_t prefetch_bytes;
	uint64_t evict_bytes;
	uint64_t discard_bytes;
	uint64_t iteration_ns;
};

/* Where the plan came from. Strings may be NULL (encoded as empty; a loaded
 * plan has "" there). */
struct plan_provenance {
	char *umkit_version;    /* umkit that made the plan (UMKIT_VERSION) */
	char *trace_path;       /* the trace it was made from */
	char *trace_command;    /* the traced command line (trace meta.command) */
	char *iteration_method; /* how the iteration was found: "nvtx", "period", ... */
	uint32_t trace_iteration; /* which iteration of the trace was planned, 0-based */
	uint32_t trace_iterations; /* iterations detected in the trace */
	bool framework_cache;   /* the trace was recorded with PyTorch's
				   caching allocator on, so its allocations
				   are the cache's segments: the replay must
				   keep it on for them to match */
};

struct plan {
	uint32_t format_version; /* of the file plan_load read it from; 0 for a
				    plan made here (plan_save writes
				    PLANFILE_VERSION) */
	struct plan_signature signature;
	struct plan_assumptions assume;
	struct plan_predictions predict;
	struct plan_provenance provenance;
	uint32_t n_allocs;
	struct plan_alloc *allocs; /* every allocation an op or the block
				      tables name */
	uint64_t n_ops;
	struct plan_op *ops;       /* sorted by (position, kind, alloc, offset) */
	corr_tables *corr;         /* NULL: the plan has no correlation tables;
				      block entries index allocs */
	/* Allocations kept in host memory and mapped for the GPU, which
	 * reads and writes them there over the link: never resident, never
	 * migrated. Indices into allocs, ascending; each a PERSISTENT
	 * allocation that no op names. */
	uint32_t n_host;
	uint32_t *host;
	/* [n_host], or NULL when every entry is whole: host[i] stays on the
	 * host from byte host_offset[i] on, a multiple of assume.block_size
	 * below its size. The bytes before it are GPU memory like any other
	 * (the planner keeps them resident), so a plan can keep on the host
	 * just what the capacity needs of a large tensor. */
	uint64_t *host_offset;
};

/* The most steps a ring of buffers has (signature.ring_steps): a launch
 * placed at the wrong step looks at the others' keys. */
#define PLAN_MAX_RING_STEPS 64

/* The sections of plan.bin (docs/plan-format.md). A reader ignores ids it
 * does not know, so a later umkit may add optional sections without a
 * format version bump. */
enum plan_section {
	PLAN_SEC_HEADER = 1,      /* assumptions and predictions */
	PLAN_SEC_SIGNATURE = 2,
	PLAN_SEC_ALLOCS = 3,
	PLAN_SEC_OPS = 4,
	PLAN_SEC_CORR_EXEC = 5,   /* optional; present together with CORR_BLOCKS */
	PLAN_SEC_CORR_BLOCKS = 6,
	PLAN_SEC_PROVENANCE = 7,
	PLAN_SEC_HOST = 8,        /* optional (format version 2): plan.host */
	PLAN_SEC_SHAPES = 9,      /* optional: signature.shape_ids */
	PLAN_SEC_HOST_OFFSETS = 10, /* optional: plan.host_offset */
	PLAN_SEC_FRAMEWORK_CACHE = 11, /* optional: provenance.framework_cache */
	PLAN_SEC_ALLOC_BEFORE = 12, /* optional: signature.alloc_before */
	PLAN_SEC_RING_KEYS = 13,  /* optional: signature.ring_steps, ring_keys */
};

/* A zeroed plan with assume.block_size = PLAN_BLOCK_SIZE, or NULL when out
 * of memory. */
struct plan *plan_create(void);

/* Frees p, every array and string it points to, and its tables. NULL is a
 * no-op. */
void plan_destroy(struct plan *p);

/* FNV-1a 64 over the little-endian encoding of n_kernels, the exec IDs,
 * n_sizes and the sizes: equal sequences give equal hashes on every build. */
uint64_t plan_signature_hash(const uint64_t *exec_ids, uint32_t n_kernels,
			     const uint64_t *alloc_sizes, uint32_t n_sizes);

/* Sorts the ops (by position, kind, alloc, offset, then the remaining
 * fields, so equal op sets give equal order) and sets signature.hash. Call
 * after filling the plan and before plan_validate / plan_save. */
void plan_finalize(struct plan *p);

/*
 * Checks every invariant this header states (signature hash, allocation
 * origins/ordinals/sizes, op kinds, positions, after/deadline, ranges, op
 * order, block table entries, host entries). Returns 0, or -1 with err naming `name` and
 * the first problem, e.g. "plan.bin: op 17 names allocation 9 but the plan
 * has 4".
 */
int plan_validate(const struct plan *p, const char *name, char *err, size_t errlen);

/* Whether the plan keeps allocation alloc (an index into allocs), or a part
 * of it, in host memory; then *offset (when offset is not NULL) is where
 * that part starts. plan.host must be ascending (plan_validate checks it). */
bool plan_on_host(const struct plan *p, uint32_t alloc, uint64_t *offset);

/* The limit a run under budget bytes (0: none; the capacity the plan was
 * made for then stands in) keeps to, when the plan has nothing to do
 * within it: no ops, no host placements, and a predicted peak that fits.
 * 0 when the plan has something to do. */
uint64_t plan_idle_limit(const struct plan *p, uint64_t budget);

/* Adds p's sections to w without validating (tests use this to write
 * invalid plans). Returns 0, or -1 when out of memory. */
int plan_encode(const struct plan *p, planfile_writer *w);

/* Validates p, then writes it to path atomically. Returns 0, or -1 with err
 * set (naming path). */
int plan_save(const struct plan *p, const char *path, char *err, size_t errlen);

/*
 * Reads, decodes and validates a plan. Returns the plan, or NULL with err
 * naming path and the problem (missing file, not a plan, newer format,
 * corrupt, or a plan that breaks an invariant). Never crashes on any input.
 */
struct plan *plan_load(const char *path, char *err, size_t errlen);

struct plan *plan_load_mem(const void *data, size_t len, const char *name,
			   char *err, size_t errlen);

/* "prefetch", "evict", "discard", "discard_prefetch", or NULL for an
 * unknown kind; "persistent", "iteration" likewise for origins. */
const char *plan_op_kind_name(uint8_t kind);
const char *plan_alloc_origin_name(uint8_t origin);

#endif
