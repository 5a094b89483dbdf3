/*
 * tensor.h: the allocations ("tensors") the planned iteration sees, how the
 * replayer will recognise each (plan.h's origins and ordinals), and where in
 * the iteration each one lives.
 *
 * The iteration is a cycle of p kernel positions. Times map to positions by
 * launch time: an allocation or free at CPU time t happens before the first
 * kernel launched at or after t. A tensor is live at the kernels launched
 * after its allocation and before its free; the live set is a cyclic
 * interval of positions:
 *  - PERSISTENT: allocated before the iteration and live at its start
 *    (weights, optimizer state, one-time allocations of the first
 *    iteration). Live from position 0, to its free if the program frees it
 *    during the iteration (only in a trace whose iterations differ), else
 *    the whole cycle.
 *  - ITERATION: the k-th allocation made from the iteration's first launch
 *    to the next iteration's first launch. Live from alloc_pos for live_len
 *    positions, wrapping past the end when the program frees it during the
 *    next iteration (a tensor that outlives the iteration boundary); the
 *    previous iteration's instance of the same ordinal is the one kernels
 *    use before the wrap point, and is mapped to the same tensor.
 *  - PREVIOUS: that previous instance where it is freed only after this
 *    iteration's instance was made, so that both are live at once: a
 *    tensor of its own, live from position 0 to its free, named by the
 *    ordinal it shares with its successor (the ITERATION tensor, which
 *    then ends with the iteration, or at its free within it).
 */
#ifndef UMKIT_TENSOR_H
#define UMKIT_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iter.h"
#include "plan.h"
#include "trace_load.h"

#define TENSOR_NONE UINT32_MAX

struct tensor {
	uint8_t origin;      /* enum plan_alloc_origin */
	uint64_t ordinal;    /* as plan_alloc.ordinal */
	uint64_t size;       /* bytes the program asked for */
	uint64_t bytes;      /* GPU footprint: the arena's reservation (>= size;
				0 for a zero-byte allocation) */
	uint64_t address;    /* the planned instance's address */
	uint32_t alloc_pos;  /* first live position, in [0, p) */
	uint32_t live_len;   /* live positions, cyclic from alloc_pos; p: all */
	bool freed;          /* freed at position (alloc_pos + live_len) % p */
	bool resident_at_start; /* live at the start (PERSISTENT, PREVIOUS)
				   and touched by a kernel before the
				   iteration, so assumed resident when it
				   starts; a PREVIOUS one: where its twin
				   hands on its memory, that instead
				   (planner.c); false for ITERATION */
	uint32_t twin;       /* PREVIOUS: the ITERATION tensor of its ordinal;
				ITERATION: the PREVIOUS one, if any; else
				TENSOR_NONE */
	bool hands_on;       /* ITERATION: its memory is the next iteration's
				PREVIOUS tensor, resident at the start, so it
				ends the iteration resident (planner.c) */
	size_t trace_alloc;  /* the planned instance's index in trace.allocs */
	bool host;           /* kept in host memory, mapped for the GPU
				(host.h): never resident, never migrated */
	uint64_t host_offset; /* when host: where the part on the host
				 starts, a block boundary; 0: all of it.
				 The bytes before it stay resident. */
};

/* The bytes of t's footprint that the plan keeps on the GPU: all of them,
 * none when t is on the host whole, the bytes before host_offset when only
 * its tail is. */
static inline uint64_t tensor_gpu_bytes(const struct tensor *t)
{
	return t->host ? t->host_offset : t->bytes;
}

/* The rest of the footprint: what the plan keeps on the host. */
static inline uint64_t tensor_host_bytes(const struct tensor *t)
{
	return t->bytes - tensor_gpu_bytes(t);
}

struct tensor_set {
	size_t first;        /* kernel position of the iteration's first kernel */
	uint32_t n_pos;      /* p: kernels in the iteration */
	size_t n;            /* tensors: those live at the start first (PERSISTENT,
				then PREVIOUS), each origin in ordinal order */
	struct tensor *t;
	size_t n_persistent; /* live at the start: PERSISTENT and PREVIOUS */
	size_t n_previous;   /* the last n_previous of those: PREVIOUS */
	/* Sizes of the allocations made during the iteration, by ordinal - 1
	 * (plan signature.alloc_sizes); ITERATION tensor with ordinal k is
	 * t[n_persistent + k - 1]. */
	size_t n_iteration;
	uint64_t *alloc_sizes;
	/* [n_pos]: how many of them were made before each position's launch
	 * (plan signature.alloc_before). */
	uint64_t *alloc_before;
	/* Tensor of each trace allocation the iteration can see, or TENSOR_NONE
	 * ([trace n_allocs]). */
	uint32_t *of_alloc;
	size_t prev_matched;  /* previous-iteration instances mapped by ordinal */
	size_t wrapping;      /* ITERATION tensors live across the iteration end */
	/* ITERATION tensors whose previous instance is freed after this one
	 * was made (the PREVIOUS tensors), and those instances' bytes. */
	size_t overlapping;
	uint64_t overlapping_bytes;
	/* Of those, the ones whose previous instance a kernel uses after
	 * this one was made. */
	size_t outliving;
	/* ITERATION tensors whose previous instance is freed only after the
	 * iteration (live into a third): that one is planned as a
	 * PERSISTENT tensor, named by its trace allocation, so umreplay
	 * applies its ops in the recorded iteration only. */
	size_t beyond_next;
};

/*
 * Builds the tensors of iteration it->chosen of t. Returns 0, or -1 with
 * err set (out of memory, an iteration too long for 32-bit positions).
 */
int tensor_build(const struct trace *t, const struct iter_result *it, struct tensor_set *out,
		 char *err, size_t errlen);

/* Whether ITERATION tensor y's memory goes on as the next iteration's
 * PREVIOUS tensor of its ordinal (y->twin): there is one, and y is not
 * freed in the iteration, so it ends with it. Made at the iteration's
 * first launch, y is live at every position, yet not the whole cycle:
 * the next iteration makes its ordinal anew there, while y's memory goes
 * on as the twin. */
static inline bool tensor_hands_on_memory(const struct tensor_set *s, const struct tensor *y)
{
	return y->origin == PLAN_ALLOC_ITERATION && y->twin < s->n &&
	       s->t[y->twin].origin == PLAN_ALLOC_PREVIOUS && !y->freed;
}

/* Whether x is live the whole cycle: from one iteration into the next
 * under its name, never made anew. An ITERATION tensor is made anew at
 * its allocation every iteration, even one made at the first launch and
 * not freed in the iteration, live at every position: its memory ends
 * with the iteration (tensor_build), or goes on as its twin. */
static inline bool tensor_whole_cycle(const struct tensor_set *s, const struct tensor *x)
{
	return x->live_len >= s->n_pos && !x->freed && x->origin != PLAN_ALLOC_ITERATION;
}

/* Frees what tensor_build filled and zeroes s. */
void tensor_set_free(struct tensor_set *s);

/* True when tensor x is live at position pos. */
bool tensor_live_at(const struct tensor_set *s, const struct tensor *x, uint32_t pos);

/* True when tensor x is live at one of the n positions from `from` on
 * (cyclic; n <= p). */
bool tensor_live_within(const struct tensor_set *s, const struct tensor *x, uint32_t from, uint32_t n);

/* The position of the free of a freed tensor, in [0, p). */
uint32_t tensor_free_pos(const struct tensor_set *s, const struct tensor *x);

/* Distance from the tensor's first live position to pos, cyclic, in [0, p):
 * orders positions along the tensor's lifetime. */
uint32_t tensor_age(const struct tensor_set *s, const struct tensor *x, uint32_t pos);

#endif
