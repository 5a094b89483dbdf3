/*
 * nvtx_open.h: the NVTX ranges open in a recorded process.
 *
 * A range is written to the trace when it closes, and one still open when
 * the recording ends is written then, as never closed. Push/pop ranges
 * nest per thread: a pop closes the newest range its thread pushed.
 * Start/end ranges are named by the ID nvtxRangeStart returned and may end
 * on another thread. Thread-safe; nothing here needs CUDA.
 */
#ifndef UMKIT_NVTX_OPEN_H
#define UMKIT_NVTX_OPEN_H

#include <stdbool.h>
#include <stdint.h>

#include "record/trace_writer.h"

typedef struct nvtx_open nvtx_open;

nvtx_open *nvtx_open_create(void);
void nvtx_open_destroy(nvtx_open *o);

/* Range r opens, pushed on r->thread_id, or started with ID id. False when
 * memory ran out: the range is not recorded (its pop or end then closes
 * an older range of the thread, or nothing). */
bool nvtx_open_push(nvtx_open *o, const struct trace_nvtx *r);
bool nvtx_open_start(nvtx_open *o, uint64_t id, const struct trace_nvtx *r);

/* Thread pops, or range id ends, at end_ns: true with the closed range in
 * *out (end_ns set); false when no such range is open (opened before the
 * recording began, or not recorded). */
bool nvtx_open_pop(nvtx_open *o, uint32_t thread_id, uint64_t end_ns, struct trace_nvtx *out);
bool nvtx_open_end(nvtx_open *o, uint64_t id, uint64_t end_ns, struct trace_nvtx *out);

/* Hands every range still open to fn, oldest first, with end_ns 0 (never
 * closed), and forgets them. */
void nvtx_open_drain(nvtx_open *o, void (*fn)(void *ctx, const struct trace_nvtx *r), void *ctx);

#endif
