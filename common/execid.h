/*
 * execid.h: execution IDs (DeepUM): a 64-bit hash that names "the same
 * kernel call" across iterations and runs.
 *
 * The hash covers the kernel's name, grid, block and dynamic shared memory,
 * and each steady parameter word that points into a managed allocation
 * (param_scan.h): its offset in the parameter buffer and, in
 * allocation-relative form, the allocation's size and the offset into it,
 * since addresses differ between iterations and runs. Other parameter
 * values are left out on purpose: scalars such as random seeds and step
 * counters change every iteration while the memory a kernel touches does
 * not.
 */
#ifndef UMKIT_EXECID_H
#define UMKIT_EXECID_H

#include <stddef.h>
#include <stdint.h>

struct execid_arg {
	uint32_t param_offset; /* where the word sits in the parameter buffer */
	uint64_t alloc_size;   /* size of the allocation it points into */
	uint64_t offset;       /* offset into that allocation */
};

struct execid_launch {
	const char *name;
	uint64_t name_state; /* execid_name_state(name), or 0 to hash name here */
	uint32_t grid[3], block[3];
	uint32_t shared_mem;
	const struct execid_arg *args; /* in param_offset order */
	size_t nargs;
};

/* The hash state after the name: the part of an ID that depends on the
 * kernel alone, worth computing once per kernel (mangled names are long). */
uint64_t execid_name_state(const char *name);

/* The execution ID of a launch. Never 0 (0 means "unknown" in traces).
 * With shape_id, also the launch's shape ID: the same hash over the name,
 * grid, block and shared memory alone (what execid_shape_of returns), for
 * one pass over the launch where both are wanted. */
uint64_t execid_of(const struct execid_launch *l, uint64_t *shape_id);

/* execid_of one argument at a time, for a caller that holds its arguments
 * in another form (launch_decode, which has no room on the launching
 * thread's stack for a copy of up to PARAM_MAX_POINTERS of them):
 * execid_begin hashes l without l->args (and gives the shape ID as
 * execid_of does), execid_add_arg adds each argument, in param_offset
 * order, and execid_end gives the ID. */
uint64_t execid_begin(const struct execid_launch *l, uint64_t *shape_id);
uint64_t execid_add_arg(uint64_t h, const struct execid_arg *arg);
uint64_t execid_end(uint64_t h);

/* The shape ID: what names a launch when its pointer words drift between
 * runs (a stale word in a multi-tensor list): the kernel and its launch
 * shape, without the arguments. Never 0. */
uint64_t execid_shape_of(const struct execid_launch *l);

/* FNV-1a 64 over bytes, continuing from h (start with EXECID_FNV_SEED). */
#define EXECID_FNV_SEED 0xcbf29ce484222325ULL
uint64_t execid_fnv1a(uint64_t h, const void *data, size_t len);

#endif
