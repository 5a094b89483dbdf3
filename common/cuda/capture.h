/*
 * capture.h: CUDA graphs seen from the launch callbacks.
 *
 * A kernel launched into a stream that is capturing runs nothing: it
 * becomes a node of the graph being captured, and each launch of that
 * graph later runs it without any launch callback. So the recorder must
 * not count a captured launch as a kernel run, and the replayer cannot
 * follow a program past its first graph (docs/replay.md, "CUDA graphs").
 */
#ifndef UMKIT_CAPTURE_H
#define UMKIT_CAPTURE_H

#include <stdbool.h>

#include <cuda.h>
#include <cupti.h>

/* The calls that begin or end a stream capture or launch a graph, for
 * cuptiEnableCallback. */
extern const CUpti_CallbackId graph_cbids[];
extern const int graph_ncbids;

/* Whether cbid is one of graph_cbids. */
bool graph_cbid(CUpti_CallbackId cbid);

/* Notes a call of graph_cbids, at its entry and at its exit: from the
 * first capture begun on, capture_work_captured asks the driver, and the
 * fences hear of each capture's beginning (at the entry) and end (at the
 * exit: um_backend_capture_begins, um_backend_capture_ends; an end the
 * driver refused is one only if the stream captures no more). */
void capture_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

/* Whether the program runs with PyTorch's caching allocator off
 * (PYTORCH_NO_CUDA_MEMORY_CACHING=1), under which PyTorch cannot capture
 * a graph: the warnings at a capture say so. The recorder also notes it in
 * the trace (meta framework_cache). */
bool capture_pytorch_cache_off(void);

/* Whether this process runs PyTorch (its libc10_cuda is loaded) with the
 * caching allocator off, not on cudaMallocAsync: what the warnings at a
 * capture add. */
bool capture_pytorch_cannot_capture(void);

/* Whether the calling thread's stream capture mode is CUDA's default,
 * global one. An allocation is an unsafe call during a capture in that
 * mode, so a program that allocates while it captures switches modes
 * first (PyTorch's allocator does, to relaxed, when the current stream
 * captures): an allocation made in another mode may come from inside a
 * capture. Asks the driver (two calls). */
bool capture_mode_global(void);

/* Sets the calling thread's stream capture mode to relaxed, as PyTorch's
 * allocator sets it to call cudaMalloc: a graph capture under way, this
 * thread's or another's, then allows the calls the tools make of their own
 * (an allocation, an event query), where the default mode would refuse
 * them and break the capture. Not a synchronize, which breaks a capture
 * in any mode. Returns whether it was set; capture_relaxed_end puts
 * *saved back. */
bool capture_relaxed_begin(CUstreamCaptureMode *saved);
void capture_relaxed_end(bool begun, CUstreamCaptureMode saved);

/* From now on capture_work_captured asks the driver: for a subscriber
 * that attaches late, after a capture may have begun unseen. */
void capture_watch(void);

/* Whether a capture may be under way: one was seen beginning, or
 * capture_watch was called. */
bool capture_watching(void);

/* capture_relaxed_begin once a capture may be under way
 * (capture_watching); before, no call of the tools' own can break one,
 * and the mode is left as it is (two driver calls spared). Returns
 * whether it was set, for capture_relaxed_end. */
static inline bool capture_relaxed_if_watching(CUstreamCaptureMode *saved)
{
	return capture_watching() && capture_relaxed_begin(saved);
}

/* Whether work queued on stream now (a kernel, a copy, ...) is captured
 * into a graph instead of run. Free until a capture has begun in the
 * process or capture_watch (then capture_stream_capturing). */
bool capture_work_captured(CUstream stream);

/* Whether stream is capturing a graph now: one driver query, legal during
 * a capture. A stream whose status the driver refuses (the legacy stream
 * while a blocking stream captures, where work queued on it fails anyway)
 * counts as not capturing. */
bool capture_stream_capturing(CUstream stream);

#endif
