/*
 * um_backend.h: the arena backend on CUDA (common/arena.h's arena_backend).
 *
 * map: cuMemAllocManaged (or cuMemAlloc for device memory), through the
 * runtime's current context. Fences are CUDA events recorded on the legacy
 * default stream, which orders after all work on blocking streams, and on
 * each non-blocking stream that has seen work since the previous fence
 * (PyTorch's side streams are non-blocking). A fence the arena would wait
 * for before handing out device memory is ordered on the GPU instead
 * where it can be (fence_order.h).
 */
#ifndef UMKIT_UM_BACKEND_H
#define UMKIT_UM_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "arena.h"

/* Fills backend for managed (true) or plain device (false) memory. */
void um_backend_init(struct arena_backend *backend, bool managed);

/* The context whose memory the work of stream s sees: the one it was
 * created in, but a green context's device's primary context, whose
 * memory a green context shares (its own handle differs); for a special
 * handle, the calling thread's current context's. NULL when the driver
 * would not say. Not for a stream capturing a graph, where a query may
 * break the capture (stream_calls.c notes no captured work). */
CUcontext um_backend_stream_context(CUstream s);

/* The arena's memory is in context (as um_backend_stream_context names
 * it), claimed by the program's first allocation: work on another
 * context's streams (another GPU's) is none of the fences', nor does it
 * end the one stream order. */
void um_backend_serve_context(CUcontext context);

/* A call is about to queue work on stream (at its API entry): the stream
 * is queued behind the fences device memory was handed out before
 * (fence_order.h), and, outside the legacy stream, from now on fences
 * cannot assume one stream order. From the program's first call
 * outside the legacy stream, such calls are queued behind the work the
 * legacy stream had queued then, until that has run (and behind a discard
 * being issued then: um_backend_single_stream_hold). call names the API
 * call, for the debug log. */
void um_backend_stream_begin(CUstream stream, const char *call);

/* A synchronous call is about to queue work on the default stream
 * (CU_STREAM_LEGACY, or CU_STREAM_PER_THREAD for a _ptds call), at its
 * API entry: it is queued behind the fences device memory was handed out
 * before (fence_order.h), as um_backend_stream_begin queues the streams
 * that calls name. */
void um_backend_default_stream_begin(CUstream stream);

/* A call has queued work on stream (at its API exit, so that a fence taken
 * meanwhile by another thread's free cannot clear the mark before the work
 * is there): the next fence covers the stream. Thread-safe. */
void um_backend_stream_queued(CUstream stream);

/* Both, for a call that is its own work (cudaMallocAsync, cudaFreeAsync). */
void um_backend_note_stream(CUstream stream, const char *call);

/* A capture is about to begin on stream (at the call's entry): its work
 * queued so far is waited for, so that no fence made during the capture
 * needs an event on it (an event recorded there would join the graph).
 * Captures are rare and PyTorch synchronizes the device before each. A
 * per-thread default stream (CU_STREAM_PER_THREAD) cannot be asked about
 * from another thread: fences wait for synchronizes until its capture
 * ends (um_backend_capture_ends, at the end's exit). */
void um_backend_capture_begins(CUstream stream);
void um_backend_capture_ends(CUstream stream);
/* The beginning the last um_backend_capture_begins saw failed (at the
 * call's exit): no capture to count. */
void um_backend_capture_refused(CUstream stream);

/* stream is being destroyed: its handle may come back as another stream.
 * Work still queued on it is waited for by the next fence. */
void um_backend_stream_destroyed(CUstream stream);

/* After the arena answered the calling thread's allocation: if the runtime
 * refused a segment on the way, while the thread had no error pending, and
 * the allocation was served all the same (the arena made room and tried
 * again), the refusal is cleared from the thread's last error, which the
 * program, having its memory, must not find (PyTorch checks it after its
 * next launch). A failed allocation keeps it, as cudaMalloc's would. (On
 * a thread with an error pending, the refusal gives that error back at
 * once: cudart_quiet.) */
void um_backend_forget_refusal(bool served);

/* While launches go unseen (from the start until a library subscribes to
 * them, and while an idle replay does not follow them), no stream can be
 * named to a fence, so a fence waits for the whole context: for the next
 * synchronize, which an allocation makes when it needs the freed range
 * (not at the free, which may be made inside a capture, where a
 * synchronize breaks it). So does a fence made for another reason to wait
 * for the whole context (too many streams, a destroyed stream's work, a
 * capture events cannot cover: common/fence_streams.h). Once they are
 * seen (call it after subscribing), the next fence still synchronizes
 * (or, while a capture may be under way, waits for the next synchronize,
 * and the fence after it tries again), so that work queued on streams
 * never named has finished, and fences rely on the streams named from the
 * first that synchronized on: those known before are
 * forgotten (but one whose capture a callback has seen begin), since a
 * stream destroyed while launches went unseen (an idle replay is
 * subscribed to no destroy callback) left no word of it, and its handle
 * may name another stream by now. from_start (subscribed before
 * the program had a context, so before any work) skips both. Nothing
 * synchronizes in the call itself: a library may subscribe while the
 * program captures a CUDA graph, which a synchronize would break. */
void um_backend_launches_seen(bool from_start);
void um_backend_launches_unseen(void);

/* True once work was queued outside the legacy default stream's order. */
bool um_backend_multi_stream(void);

/* Holds the program to the legacy stream's order while the caller queues
 * work that relies on it (a discard ordered only before that stream): the
 * program's first call on another stream waits for the release, and its
 * work is then queued behind what the caller queued. Returns whether the
 * program still uses that one stream, as far as its calls were seen: false
 * while launches go unseen and, after they are seen again
 * (um_backend_launches_seen(false)), until the synchronize that finishes
 * the work queued unseen. Release whatever it returned. */
bool um_backend_single_stream_hold(void);
void um_backend_single_stream_release(void);

/* Where the end of that order cannot be marked on the GPU (launches went
 * unseen, as an idle replay's do until it wakes, or a graph capture may be
 * under way, which work on the legacy stream could break), the program's
 * first call on another stream calls wait instead, before its work is
 * queued and holding the program to that order meanwhile: it returns once
 * what was queued relying on the order (the replayer's discards) is done,
 * or gives up (the replayer's after a second), queueing nothing on the
 * program's streams. */
void um_backend_order_end_host_wait(void (*wait)(void));

/* The program is about to reset the primary context the arena's memory
 * lives in, or any before the arena mapped memory (cudaDeviceReset),
 * which finishes the work queued and destroys every stream and event: the
 * end of the one stream order is no longer waited for, and the streams
 * known are forgotten. The fences' events go with the arena's memory,
 * which the arena then no longer serves (um_alloc.c); an arena that
 * mapped nothing has made none. */
void um_backend_device_reset(void);

/* Host time spent blocked on fences so far. */
uint64_t um_backend_fence_wait_ns(void);

/* Whether the calling thread may synchronize the device now (a free of
 * real memory does): not while a graph capture the fences saw begin may be
 * under way, nor in a capture mode other than the global one, which a
 * program sets while it captures. */
bool um_backend_may_synchronize(void);

#endif
