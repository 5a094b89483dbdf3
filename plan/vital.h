/*
 * vital.h: vitality analysis (G10): for each tensor of the planned iteration
 * its uses, its inactive periods with their lengths in time, and its death;
 * and the same inactive-period statistics at 2 MB block granularity.
 *
 * Time comes from the recorded kernels: each position has a start and an
 * end relative to the iteration's first kernel (GPU timestamps, made
 * nondecreasing; launch times where the GPU times are missing), and the
 * cycle length is the distance to the next iteration's first kernel.
 *
 * An inactive period is a stretch of kernel positions during which a tensor
 * holds data but no kernel uses it, so it may live in host memory instead:
 *  - GAP: between two consecutive uses (cyclic for a tensor live across the
 *    iteration boundary: the last use of one iteration to the first of the
 *    next);
 *  - TAIL: after the last use until the program frees the tensor (its
 *    death; the data is dead, so it is never brought back);
 *  - HEAD: from the iteration start to the first use, for a tensor live at
 *    the start that does not live the whole cycle;
 *  - UNUSED: a tensor live at the start and resident that no kernel of the
 *    iteration uses.
 * Positions are cyclic: the period's inactive kernels are evict_at,
 * evict_at + 1, ... (len of them, modulo p).
 */
#ifndef UMKIT_VITAL_H
#define UMKIT_VITAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "tensor.h"
#include "trace_load.h"

#define VITAL_NONE UINT32_MAX

enum vital_kind { VITAL_GAP = 1, VITAL_TAIL, VITAL_HEAD, VITAL_UNUSED };

struct vital_period {
	uint32_t tensor;
	uint8_t kind;      /* enum vital_kind */
	uint32_t from;     /* the use before (VITAL_NONE for HEAD, UNUSED) */
	uint32_t to;       /* the use after (VITAL_NONE for TAIL, UNUSED) */
	uint32_t evict_at; /* first inactive position */
	uint32_t len;      /* inactive positions, >= 1 */
	uint64_t idle_ns;  /* time from the end of `from` to the start of `to` */
	/* Offsets [next_at, len) from evict_at are tensor next's: `tensor`
	 * and len but where an ITERATION tensor's tail goes on as the next
	 * iteration's PREVIOUS tensor, the same memory (tensor.h, hands_on),
	 * and `to` is a use of that one. */
	uint32_t next, next_at;
};

struct vital_tensor {
	uint32_t n_uses;
	uint32_t use_first;  /* uses[use_first .. use_first + n_uses), lifetime order */
	uint32_t first_use;  /* position, VITAL_NONE if unused */
	uint32_t last_use;
	bool written_before_use; /* a copy, a memset or the host (managed
				    memory) may have written the instance
				    between its allocation and its first
				    kernel (discarding it then would lose
				    data) */
};

/* Histogram buckets of inactive-period lengths: < 10 us, < 100 us, < 1 ms,
 * < 10 ms, < 100 ms, < 1 s, >= 1 s. */
#define VITAL_BUCKETS 7

/* The longest iteration planned, about 4.9 hours of GPU time: a trace
 * whose kernel times span more in one iteration (a clock that jumped, a
 * row edited by hand) is refused, since the schedule's arithmetic on
 * unwrapped times would overflow on times far beyond it. */
#define VITAL_MAX_CYCLE_NS (1ull << 44)

struct vital {
	uint32_t n_pos;
	uint64_t *start_ns, *end_ns; /* [n_pos + 1]; start_ns[n_pos] = cycle_ns */
	uint64_t cycle_ns;
	struct vital_tensor *tv;     /* [tensors] */
	uint32_t *uses;
	size_t n_uses;
	struct vital_period *periods; /* by tensor, then lifetime order */
	size_t n_periods;
	size_t deaths;                /* used tensors the program frees */

	uint64_t tensor_hist[VITAL_BUCKETS];       /* periods */
	uint64_t tensor_hist_bytes[VITAL_BUCKETS]; /* their tensors' bytes */
	uint64_t block_hist[VITAL_BUCKETS];        /* block inactive periods */
	uint64_t n_blocks;                         /* distinct blocks of used tensors */
};

/* The bucket of an idle time. */
int vital_bucket(uint64_t ns);
/* "<10us", "<100us", ... for bucket b. */
const char *vital_bucket_name(int b);

/*
 * Computes uses, periods and deaths of every tensor of ts from the access
 * sets a. Returns 0, or -1 with err set (out of memory, or an iteration
 * longer than VITAL_MAX_CYCLE_NS).
 */
int vital_build(const struct trace *t, const struct tensor_set *ts, const struct access_set *a,
		struct vital *out, char *err, size_t errlen);

/* Frees what vital_build filled and zeroes v. */
void vital_free(struct vital *v);

/* Times of unwrapped position u (u >= n_pos is the next iteration's kernel
 * u - n_pos): the start and end of that kernel relative to the iteration's
 * first kernel. vital_start_ns(v, n_pos) is the cycle length. */
uint64_t vital_start_ns(const struct vital *v, uint64_t u);
uint64_t vital_end_ns(const struct vital *v, uint64_t u);

/* Kernel k's recorded duration (k < n_pos): vital_build keeps each end at
 * or after its start; a vital made otherwise (by a test) gets 0 where it
 * does not. */
uint64_t vital_kernel_ns(const struct vital *v, uint32_t k);

#endif
