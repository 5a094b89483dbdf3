/*
 * fence_streams.h: which streams a fence of the arena records its events
 * on (common/cuda/um_backend.c), apart from CUDA so that CI tests it.
 *
 * A fence records an event on each non-blocking stream that had work
 * since the last fence, and one on the legacy default stream, which orders
 * after the work of every blocking stream. A stream capturing a graph is
 * the exception: its work runs only at the graph's launch, and an event
 * recorded there would join the graph. Its work from before the capture
 * was waited for when the capture began, where that was seen (drained).
 * Where it was not, or while a blocking stream captures (work on the
 * legacy stream would join that capture and invalidate it, so the legacy
 * stream cannot have its event), events cannot cover the work: the fence
 * then waits for the context's next synchronize instead.
 */
#ifndef UMKIT_FENCE_STREAMS_H
#define UMKIT_FENCE_STREAMS_H

#include <stdbool.h>

struct fenced {
	void *stream;
	bool nonblocking;
	bool busy;      /* has had work since the last fence */
	bool drained;   /* its work from before its capture has finished */
	bool capturing; /* is capturing a graph now */
};

/* Moves the streams of fenced[0..n) that get an event, besides the legacy
 * stream, to the front and returns their number; or returns -1 when events
 * cannot cover the work (the fence waits for the next synchronize), with
 * *why saying which capture keeps them from it. */
int fence_streams_choose(struct fenced *fenced, int n, const char **why);

#endif
