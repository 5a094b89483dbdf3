/*
 * capture_threads.h: the threads capturing a CUDA graph on their
 * per-thread default stream (cudaStreamPerThread), apart from CUDA so
 * that CI tests them.
 *
 * No other thread can ask the driver whether such a stream captures (the
 * handle means the asking thread's own stream), so the fences
 * (common/cuda/um_backend.c) count these threads from the launch
 * callbacks instead: from a capture's beginning to its end. While any is
 * counted, the fences neither record an event on that stream nor
 * synchronize, either of which would break the capture.
 *
 * A thread is counted once however many beginnings it makes. A beginning
 * the driver refused is taken back at its exit, if it was the one that
 * counted the thread. A thread that exits while counted is uncounted then
 * (its capture can no longer end), so that one stray thread does not keep
 * every later fence from being waited for. A forked child counts the
 * forking thread alone.
 */
#ifndef UMKIT_CAPTURE_THREADS_H
#define UMKIT_CAPTURE_THREADS_H

#include <stdbool.h>

/* The calling thread began a capture on its per-thread default stream
 * (at the call's entry). */
void capture_threads_begin(void);

/* The driver refused the calling thread's last beginning (at the call's
 * exit). */
void capture_threads_refused(void);

/* The calling thread's capture on its per-thread default stream ended. */
void capture_threads_end(void);

/* Whether any thread is counted now. */
bool capture_threads_any(void);

#endif
