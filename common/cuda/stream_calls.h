/*
 * stream_calls.h: the driver calls other than kernel launches that queue
 * work on a stream the program names (asynchronous copies and memsets,
 * batched copies, host functions and stream callbacks, graph launches,
 * prefetches and discards, stream memory operations), and the stream each
 * names.
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

/* Tells the arena's fences about the stream of a kernel launch or of a
 * call in stream_call_cbids, at the call's entry and at its exit
 * (um_backend_stream_begin, um_backend_stream_queued), and about the
 * default stream of a synchronous copy or memset into device memory at its
 * entry (um_backend_default_stream_begin); nothing for any other call, nor
 * for work captured into a CUDA graph. Returns whether the
 * call's work is captured (capture_work_captured), so that a launch
 * callback need not ask the driver again. */
bool stream_call_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

#endif
