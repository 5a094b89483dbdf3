/*
 * report.h: umplan --report (a person's summary of the trace and the plan)
 * and --json (the same facts, machine-readable).
 *
 * Contents: the trace (kernels, allocations), the iterations found and the
 * one planned, allocations by origin, access sets and their recall, live,
 * in-use and planned memory over the iteration (peaks and a curve in ten
 * segments), the distribution of inactive-period lengths (tensors and 2 MB
 * blocks), the capacity and where it came from, what the plan moves and
 * when, the predicted peak residency against the capacity, and the kernels
 * that cannot fit on their own.
 */
#ifndef UMKIT_REPORT_H
#define UMKIT_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "planner.h"

/* Writes the text report to out. Returns 0, or -1 when out of memory or the
 * write failed. */
int report_text(const struct planner *p, FILE *out);

/* The summary as a cJSON object the caller owns, or NULL when out of
 * memory. */
cJSON *report_json(const struct planner *p);

#endif
