/*
 * synth.h: synthetic traces shaped like DNN training, for the planner's
 * property tests and its scaling benchmark (no GPU needed).
 *
 * The program: weights allocated and initialised first, some warm-up
 * kernels, then iterations of
 *   input batch (allocated, optionally filled by a host-to-device copy),
 *   forward (per layer an activation and kernels_per_layer kernels),
 *   loss (a small tensor read back to the host),
 *   backward (per layer a weight gradient and an input gradient; each
 *   activation and gradient freed after its last use),
 *   on the first iteration only: optimizer state allocated and zeroed,
 *   optimizer step (per layer; the weight gradient freed after it).
 * Sizes and kernel durations are drawn per layer from the seed and repeat
 * every iteration, so execution IDs repeat; launch and GPU times follow a
 * CPU that runs ahead of the GPU and waits at the loss read-back.
 * Allocations mimic the umkit arena: sizes above 1 MiB are 2 MiB-aligned and
 * rounded, smaller ones 512 B-aligned; a freed range is reused for the next
 * allocation of the same reserved size. Optionally: NVTX ranges per
 * iteration, on-demand migrations at each first touch of fresh memory
 * (a percentage of them stray outside the kernel's arguments, to exercise
 * recall), and kernels without GPU times.
 */
#ifndef UMKIT_SYNTH_H
#define UMKIT_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct synth_params {
	uint64_t seed;
	uint32_t layers;            /* >= 1 */
	uint32_t iterations;        /* >= 1 */
	uint32_t kernels_per_layer; /* forward kernels per layer, >= 1 */
	uint32_t warmup_kernels;    /* kernels before the first iteration */
	uint64_t min_bytes, max_bytes; /* tensor sizes, 1 <= min <= max */
	uint64_t min_kernel_ns, max_kernel_ns; /* kernel durations */
	uint64_t device_memory;     /* meta.device_memory; 0: left out */
	char nvtx[64];              /* "" : no NVTX; else ranges "NAME i" */
	bool faults;                /* on-demand migrations at first touches */
	uint32_t stray_fault_pct;   /* of those, % at addresses outside the args */
	bool input_copy;            /* a memcpy fills the input batch */
	bool untimed;               /* no GPU start/end times */
};

/* Defaults: seed 1, 8 layers, 6 iterations, 1 kernel per layer, 4 warm-up
 * kernels, 1 MiB .. 64 MiB tensors, 20 .. 400 us kernels, 16 GiB device,
 * no NVTX, faults with no strays, input copy on. */
void synth_defaults(struct synth_params *p);

/* Kernels the trace of p will hold (to size a run before writing it). */
uint64_t synth_kernel_count(const struct synth_params *p);

/*
 * Writes the trace to path (replacing a file there). Returns 0, or -1 with
 * err naming path and the problem (bad parameters, among them any whose
 * trace could hold a time or an address past 2^63 - 1; SQLite errors).
 */
int synth_write(const char *path, const struct synth_params *p, char *err, size_t errlen);

#endif
