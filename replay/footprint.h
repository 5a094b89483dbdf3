/*
 * footprint.h: a set of 2 MB block numbers, kept as sorted, disjoint and
 * non-adjacent intervals.
 *
 * An idle engine (engine.h, engine_follows_launches) counts every block an
 * allocation has ever covered as resident, and does nothing else per block:
 * it keeps that footprint here. The arena packs allocations into a few
 * segments, so the set stays a handful of intervals, and whether an
 * allocation adds blocks costs one binary search however many blocks it
 * covers. Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_FOOTPRINT_H
#define UMKIT_REPLAY_FOOTPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct footprint footprint;

/* An empty set, or NULL when out of memory. */
footprint *footprint_create(void);
void footprint_destroy(footprint *f);

/* How many of blocks [first, first + n) the set lacks. */
uint64_t footprint_missing(const footprint *f, uint64_t first, uint64_t n);

/* Adds blocks [first, first + n). Returns 0, or -1 when out of memory (the
 * set is then unchanged). */
int footprint_add(footprint *f, uint64_t first, uint64_t n);

/* Blocks in the set. */
uint64_t footprint_blocks(const footprint *f);

/* The i-th interval in increasing order, as its first block and length;
 * false when there are i intervals or fewer. */
bool footprint_interval(const footprint *f, size_t i, uint64_t *first, uint64_t *n);

#endif
