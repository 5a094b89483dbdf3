/*
 * param_scan.h: finding the words of a kernel's parameter buffer that point
 * into arena allocations.
 *
 * Every parameter's bytes are scanned in 8-byte words, so pointers inside
 * struct parameters count too (PyTorch passes its tensors' data pointers in
 * an array inside a struct).
 *
 * A word can hold padding: PyTorch's elementwise kernels take a functor
 * capturing a float, whose other 4 bytes are whatever the host stack held,
 * often half of an earlier pointer. Such a word sometimes lands in the arena;
 * the kernel then seems to touch a random allocation, and its execution ID
 * changes from one iteration to the next. So each function has a set of
 * ruled-out words (param_slots): a word of a small parameter (functors,
 * scalars, short pointer arrays: at most PARAM_SMALL_BYTES) once seen holding
 * a value that is neither 0 nor an arena address is no pointer slot from then
 * on. Large parameters are exempt: a multi-tensor list reuses its slots for
 * different tensors and leaves the unused ones stale or uninitialised.
 */
#ifndef UMKIT_PARAM_SCAN_H
#define UMKIT_PARAM_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"

#define PARAM_SMALL_BYTES 64

struct param_arg {
	uint32_t param_offset;    /* byte offset of the word in the buffer */
	struct arena_alloc alloc; /* the allocation the word points into */
	uint64_t offset;          /* word - alloc.address */
};

/* Where a scan puts what it finds: up to cap args, then truncated. */
struct param_args {
	struct param_arg *args;
	uint32_t n, cap;
	bool truncated;
};

/* A function's ruled-out words; safe to share between threads. */
typedef struct param_slots param_slots;

/* For a parameter buffer of buffer_bytes; NULL when out of memory. */
param_slots *param_slots_create(uint32_t buffer_bytes);
void param_slots_destroy(param_slots *s);

/* Scans the len bytes at p, one parameter starting at byte base of the
 * buffer, appending the words that point into a's allocations to out.
 * slots (NULL: none) skips the ruled-out words and learns new ones. */
void param_scan(param_slots *slots, arena *a, uint32_t base, const unsigned char *p,
		size_t len, struct param_args *out);

#endif
