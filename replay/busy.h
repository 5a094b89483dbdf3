/*
 * busy.h: how long the GPU was busy in each iteration.
 *
 * CUPTI's records give each kernel's and each migration's start and end on
 * the GPU's clock. Kernels of several streams overlap, so the time the GPU
 * computed is the length of the union of their intervals, not the sum; the
 * same holds per copy direction. The replayer's stats report that union
 * within each iteration's wall-clock window, which tells a program held
 * back on its host thread (the GPU idles) from one slowed on the GPU
 * (kernels take longer), and how long the copy engines moved data.
 */
#ifndef UMKIT_REPLAY_BUSY_H
#define UMKIT_REPLAY_BUSY_H

#include <stddef.h>
#include <stdint.h>

struct busy_interval {
	uint64_t start, end; /* ns; end >= start */
};

/* Sorts v[0 .. n) by start and merges intervals that overlap or touch, in
 * place; returns how many disjoint intervals are left, in ascending order. */
size_t busy_merge(struct busy_interval *v, size_t n);

/* The time within [from, to) that merged[0 .. n) (busy_merge's output)
 * covers. */
uint64_t busy_within(const struct busy_interval *merged, size_t n, uint64_t from, uint64_t to);

#endif
