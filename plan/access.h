/*
 * access.h: what each kernel of the planned iteration touches (design.md,
 * mechanism 4), at tensor and 2 MB UM-block granularity, and how well the
 * argument-based sets agree with the migrations the driver actually made.
 *
 * Primary source: the kernel's pointer arguments (kernel_arg) mapped to the
 * iteration's tensors. Second source: on-demand HtoD migrations (complete)
 * and sampled GPU faults, attributed by time to the kernel running then
 * (among kernels running at that moment, one whose arguments cover the
 * address is preferred, so concurrent streams do not count as misses);
 * those that land inside the planned iteration add the tensor they hit to
 * that kernel's set when the tensor is live there.
 *
 * Recall is measured over the whole trace: the fraction of distinct
 * (kernel, 2 MB block) pairs of on-demand migrations whose block lies in
 * the kernel's argument-based block set.
 */
#ifndef UMKIT_ACCESS_H
#define UMKIT_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "tensor.h"
#include "trace_load.h"

#define ACCESS_BLOCK_SHIFT 21 /* 2 MiB UM blocks */

struct access_set {
	uint32_t n_pos;
	/* Tensors used at position k: tensor[first[k] .. first[k + 1]),
	 * ascending. */
	uint32_t *first;
	uint32_t *tensor;
	size_t n_refs;
	uint64_t *ws_bytes;  /* [n_pos] footprint of the tensors used at k */
	uint64_t *ws_blocks; /* [n_pos] 2 MB blocks those tensors span */

	size_t observed_added; /* accesses added from migrations and faults */
	size_t refs_unmapped;  /* argument references to no live tensor, dropped */

	/* Recall, whole trace. */
	size_t fault_pairs;         /* distinct (kernel, block) on-demand migrations */
	size_t fault_pairs_covered; /* of those, in the kernel's argument blocks */
};

/* Builds the access sets of the iteration ts describes. Returns 0, or -1
 * with err set (out of memory). */
int access_build(const struct trace *t, const struct tensor_set *ts, struct access_set *out,
		 char *err, size_t errlen);

/* Frees what access_build filled and zeroes a. */
void access_set_free(struct access_set *a);

/* Recall in [0, 1], or -1 when the trace has no on-demand migrations. */
double access_recall(const struct access_set *a);

/* The 2 MB blocks [*b0, *b1] an address range of bytes > 0 spans. */
void access_blocks(uint64_t address, uint64_t bytes, uint64_t *b0, uint64_t *b1);

#endif
