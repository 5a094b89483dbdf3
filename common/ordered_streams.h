/*
 * ordered_streams.h: the streams a thread has queued behind the arena's
 * newest fence order (common/cuda/fence_order.c), apart from CUDA so that
 * CI tests them.
 *
 * Device memory may be handed out before the fence of its last free
 * completed, once every stream's next work is to wait for that fence on
 * the GPU: an order, named by the fence's token, and tokens only rise. So
 * at each call that queues work, the calling thread queues the call's
 * stream behind the newest order unless it already did: its own wait is
 * queued before its own later calls there. Another thread's wait on the
 * same stream is not counted, so two threads may both wait, which costs a
 * wait and is never wrong; so the table needs no lock, one per thread.
 *
 * A stream is its handle and, for a special handle (the legacy or the
 * per-thread default stream, one per context), the context current. An
 * entry is void once the generation moved (a stream destroyed, whose
 * handle may come back as another's). A full table forgets its oldest
 * entry: that stream waits again.
 */
#ifndef UMKIT_ORDERED_STREAMS_H
#define UMKIT_ORDERED_STREAMS_H

#include <stdbool.h>
#include <stdint.h>

#define ORDERED_STREAMS 8

struct ordered_stream {
	const void *stream, *context;
	uint64_t token; /* 0: an empty entry */
	unsigned gen;
};

struct ordered_streams {
	struct ordered_stream e[ORDERED_STREAMS];
	unsigned next; /* the entry a new stream takes */
};

/* Whether stream in context is queued behind the order token already, as
 * of generation gen. */
bool ordered_streams_behind(const struct ordered_streams *t, const void *stream, const void *context,
			    uint64_t token, unsigned gen);

/* Notes that stream in context is now queued behind token. */
void ordered_streams_note(struct ordered_streams *t, const void *stream, const void *context, uint64_t token,
			  unsigned gen);

#endif
