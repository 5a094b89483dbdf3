/*
 * stream_calls.h: the driver calls other than kernel launches that queue
 * work on a stream the program names (asynchronous copies and memsets,
 * batched copies, host functions and stream callbacks, graph launches,
 * prefetches), and the stream each names.
 *
 * The arena's fences must follow every stream that may still touch freed
 * memory (um_backend.h), and a stream that only ever gets copies is one.
 */
#ifndef UMKIT_STREAM_CALLS_H
#define UMKIT_STREAM_CALLS_H

#include <stdbool.h>

#include <cuda.h>
#include <cupti.h>

/* The callback ids, for cuptiEnableCallback. */
extern const CUpti_CallbackId stream_call_cbids[];
extern const int stream_call_ncbids;

/* The stream the call cbid with parameters params names; false when cbid
 * is not one of stream_call_cbids. */
bool stream_call_stream(CUpti_CallbackId cbid, const void *params, CUstream *out);

/* Tells the arena's fences about the call's stream, at the call's entry and
 * at its exit (um_backend_stream_begin, um_backend_stream_queued); nothing
 * for a call not in the list. */
void stream_call_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

#endif
