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
 * changes from one iteration to the next. Large parameters hold stale words
 * too: the unused dimensions of a TensorIterator kernel's offset calculator,
 * the unused slots of a multi-tensor list or a concatenation's input array
 * (left from an earlier launch, often real pointers). So each function
 * (in each context: common/cuda/launch_info.c) remembers which words have
 * ever held anything but an arena address (param_slots), and
 *  - in a small parameter (functors, scalars, short pointer arrays: at most
 *    PARAM_SMALL_BYTES) a word once seen holding a nonzero non-address is no
 *    pointer slot from then on: it is not scanned. Unless the address was
 *    memory the runtime served instead of the arena (one pool's memory
 *    and not another's, say: common/cuda/um_pools.h), which makes the
 *    word a pointer that is not steady. The price: padding that happens
 *    to hold a stale pointer into the runtime's memory stays scanned, and
 *    when it holds one into the arena's, that is reported (not steady);
 *  - in a large one such a word, or one seen holding 0, is still scanned
 *    (a multi-tensor list reuses its slots for different tensors, so the
 *    slot of a real pointer may be stale in one launch and live in the
 *    next) but is not *steady*: only steady words name the launch in its
 *    execution ID, which is then the same in every iteration.
 */
#ifndef UMKIT_PARAM_SCAN_H
#define UMKIT_PARAM_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "addr_set.h"
#include "arena.h"

#define PARAM_SMALL_BYTES 64

/* Pointer words one launch keeps at most: every word of a 4 KB parameter
 * buffer. PyTorch's multi-tensor (foreach) kernels pass up to about 150
 * tensors' addresses in one struct (an optimizer step's parameters,
 * gradients and states), and a kernel whose words were dropped touches
 * memory the plan does not know it needs. */
#define PARAM_MAX_POINTERS 512

struct param_arg {
	uint32_t param_offset;    /* byte offset of the word in the buffer */
	struct arena_alloc alloc; /* the allocation the word points into */
	uint64_t offset;          /* word - alloc.address */
	bool steady;              /* the word has held an arena address at every
				     launch scanned with these slots so far
				     (one function's, in one context) */
};

/* Where a scan puts what it finds: up to cap args, then truncated. */
struct param_args {
	struct param_arg *args;
	uint32_t n, cap;
	bool truncated;
};

/* What a function's words have held; safe to share between threads. */
typedef struct param_slots param_slots;

/* For a parameter buffer of buffer_bytes; NULL when out of memory. */
param_slots *param_slots_create(uint32_t buffer_bytes);
void param_slots_destroy(param_slots *s);

/* Scans the len bytes at p, one parameter starting at byte base of the
 * buffer, appending the words that point into a's allocations to out.
 * slots (NULL: nothing known, every word steady) skips the ruled-out words
 * and learns from this launch; foreign (NULL: none) holds the memory the
 * runtime served. */
void param_scan(param_slots *slots, arena *a, struct addr_set *foreign, uint32_t base,
		const unsigned char *p, size_t len, struct param_args *out);

#endif
