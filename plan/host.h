/*
 * host.h: which tensors the plan keeps in host memory, mapped for the GPU,
 * instead of migrating them (docs/planner.md, "Host placement").
 *
 * A tensor kept on the host is never resident on the GPU: every kernel that
 * uses it reads and writes it there, over the link. On the H100 one such
 * pass over 1 GiB, read and written, took 28.7 ms, against 70 ms for the
 * eviction of the same GiB and 23 ms for its prefetch
 * (tests/gpu/um_costs.py, round_trip_ms). So a tensor few kernels touch per
 * iteration, such as an optimizer's state (an Adam moment: two or three
 * elementwise kernels per step; a momentum buffer), costs less to leave
 * there than to evict and bring back each iteration.
 *
 * When the capacity binds, candidates are the persistent tensors live the
 * whole iteration that own whole 2 MB blocks (the arena gives those to
 * allocations over 1 MiB), used by at most HOST_MAX_USES kernels and by
 * none that re-reads its operands (HOST_MAX_REUSE), and only while one
 * pass per use costs less than an eviction and a prefetch:
 *
 *     uses / remote_bw  <  1 / dtoh_bw + 1 / htod_bw
 *
 * They are taken from the fewest uses up, a group of equal uses at a time,
 * until the chosen bytes cover the excess (the peak residency without
 * evictions less the capacity); past that, host placement gains nothing.
 * Within the group where the excess ends, every byte costs the same pass
 * per use, so the rest of the excess is spread over the whole group: each
 * tensor keeps the same share of its blocks, the whole blocks at its end,
 * on the host (tensor.host_offset), and its blocks before that stay
 * resident, never moved. Neither the spreading nor the end makes a
 * difference to a pass over a tensor or to gathers spread evenly over it.
 * Where ids are ranked by frequency (vocabularies, DLRM's example), whose
 * rarest rows come last, both make the host part the cheaper one: every
 * table's coldest rows rather than some tables whole.
 */
#ifndef UMKIT_HOST_H
#define UMKIT_HOST_H

#include <stdint.h>

#include "tensor.h"
#include "vital.h"

/* One pass per use understates what a kernel that reuses its operand (a
 * GEMM reads a weight once per output tile) would pull over the link:
 * tensors used more often than this stay in the migration schedule. */
#define HOST_MAX_USES 3

/* Nor is one pass per use what a compute-bound kernel costs: a GEMM reads
 * its operands once per output tile, and those reads go over the link. On
 * the H100 (bench/results/2026-11-23/s24/gemm_host_probe.py, fp32 GEMMs of
 * ViT-B/16's MLP shapes) a GEMM paid 10-25 passes for an activation kept on
 * the host and 96-157 for a weight. A kernel is taken for one that re-reads
 * its operands when its recorded time (operands resident) exceeds this many
 * passes over them at the device's peak bandwidth: in the fixtures' traces
 * GEMMs and convolutions ran 5-47 such passes, elementwise, optimizer and
 * gather kernels 0.1-2.4. A tensor any such kernel uses stays in the
 * migration schedule. A GEMM fast enough to look memory-bound (tensor
 * cores on a small problem) is not caught. */
#define HOST_MAX_REUSE 4

struct host_options {
	uint64_t excess;             /* bytes to take off the GPU; 0: none */
	uint64_t remote_bytes_per_s; /* one pass over mapped host memory; 0: off */
	uint64_t htod_bytes_per_s;
	uint64_t dtoh_bytes_per_s;
	const uint64_t *operand_bytes; /* per position, the footprint of the
					  kernel's operands (access_set.ws_bytes);
					  NULL: unknown, no kernel re-reads */
};

/* Sets tensor.host and tensor.host_offset on the chosen tensors of ts
 * (clearing them on the others) and returns the bytes they keep on the
 * host: at most the excess rounded up to whole blocks. Deterministic.
 * Returns (uint64_t)-1 when out of memory, with nothing chosen. */
uint64_t host_choose(struct tensor_set *ts, const struct vital *v, const struct host_options *o);

/* The most bytes a kernel can move in a nanosecond: the H100 SXM's HBM3
 * peak, 3.35 TB/s (NVIDIA's specification, not measured here). A kernel of
 * d ns, timed in the recording with its operands resident, touched at most
 * d times this many bytes, whatever the size of its operands. */
#define HOST_DEVICE_PEAK_BPS 3350000000000.0

/* What the chosen tensors add to an iteration: per use, the bytes the
 * kernel can have touched (the tensor's size, or less when the kernel ran
 * too briefly to read it all: a gather of a few rows of an embedding
 * table), times the share of the tensor on the host, moved at
 * remote_bytes_per_s (ns; UINT64_MAX, forever, past 2^64). A kernel with
 * no recorded duration counts a whole pass. The choice itself assumes
 * whole passes. */
uint64_t host_pass_ns(const struct tensor_set *ts, const struct vital *v, uint64_t remote_bytes_per_s);

#endif
