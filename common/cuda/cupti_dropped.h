/*
 * cupti_dropped.h: the activity records CUPTI had no room for (its buffers
 * full), which every figure a tool takes from the records then lacks.
 */
#ifndef UMKIT_CUPTI_DROPPED_H
#define UMKIT_CUPTI_DROPPED_H

#include <stdatomic.h>
#include <stdint.h>

#include <cupti.h>

/* From a buffer-completed callback: adds the records CUPTI dropped for
 * (ctx, stream_id) to *count, warning at the first ones that "CUPTI
 * dropped N activity records: " consequence. */
void cupti_count_dropped(CUcontext ctx, uint32_t stream_id, atomic_uint_fast64_t *count, const char *consequence);

#endif
