/*
 * fence_streams.h: which streams a fence of the arena records its events
 * on (common/cuda/um_backend.c), apart from CUDA so that CI tests it.
 *
 * A fence records an event on each non-blocking stream that had work
 * since the last fence, and one on the legacy default stream, which orders
 * after the work of every blocking stream. A stream capturing a graph is
 * the exception: its work runs only at the graph's launch, and an event
 * recorded there would join the graph. So it gets none; its work from
 * before the capture was waited for when the capture began, where that was
 * seen (drained), and where not the fence must wait for the whole context.
 * And while a blocking stream captures, work on the legacy stream would
 * join that capture and invalidate it: then each blocking stream that does
 * not capture gets an event instead (work on a per-thread default stream
 * is not covered meanwhile).
 */
#ifndef UMKIT_FENCE_STREAMS_H
#define UMKIT_FENCE_STREAMS_H

#include <stdbool.h>

struct fenced {
	void *stream;
	bool nonblocking;
	bool dirty;     /* has had work since the last fence */
	bool drained;   /* its work from before its capture has finished */
	bool capturing; /* is capturing a graph now */
};

/* Moves the streams of fenced[0..n) that get an event to the front and
 * returns their number. *legacy: whether the legacy stream gets one too.
 * *lost: whether a capturing stream has work no event can cover, for the
 * fence to wait for the whole context (left alone otherwise). */
int fence_streams_choose(struct fenced *fenced, int n, bool *legacy, bool *lost);

#endif
