/*
 * launch_view.h: whether the arena's fences can name the streams that may
 * still use freed memory, as one atomic word (common/cuda/um_backend.c).
 *
 * UNSEEN: no library follows the program's calls (before one subscribes,
 * an idle replay, after the exit path unsubscribes): a fence waits for the
 * whole context. PENDING: one has subscribed; the work queued before it
 * went unseen, so the next fence still waits for the whole context, and
 * claims the change (CLAIMED) before it does, so that its wait covers
 * every launch made before the subscription. SEEN after that wait, unless
 * launch_view_unseen or launch_view_seen came meanwhile: a fence never
 * undoes a later change.
 */
#ifndef UMKIT_LAUNCH_VIEW_H
#define UMKIT_LAUNCH_VIEW_H

#include <stdatomic.h>
#include <stdbool.h>

enum launch_view_state { LAUNCH_VIEW_SEEN, LAUNCH_VIEW_UNSEEN, LAUNCH_VIEW_PENDING, LAUNCH_VIEW_CLAIMED };
typedef _Atomic int launch_view;

/* A library subscribed; from_start: before the program had a context, so
 * before any work, and no fence needs to wait for the whole context. */
static inline void launch_view_seen(launch_view *v, bool from_start)
{
	atomic_store(v, from_start ? LAUNCH_VIEW_SEEN : LAUNCH_VIEW_PENDING);
}

static inline void launch_view_unseen(launch_view *v)
{
	atomic_store(v, LAUNCH_VIEW_UNSEEN);
}

/* At a fence, before its wait: whether it must wait for the whole context;
 * *claimed when that wait ends the unseen time (pass it to fence_end). */
static inline bool launch_view_fence_begin(launch_view *v, bool *claimed)
{
	int state = atomic_load(v);
	*claimed = state == LAUNCH_VIEW_PENDING && atomic_compare_exchange_strong(v, &state, LAUNCH_VIEW_CLAIMED);
	return *claimed || state != LAUNCH_VIEW_SEEN;
}

/* After the fence's wait for the whole context. */
static inline void launch_view_fence_end(launch_view *v, bool claimed)
{
	int expected = LAUNCH_VIEW_CLAIMED;
	if (claimed)
		atomic_compare_exchange_strong(v, &expected, LAUNCH_VIEW_SEEN);
}

#endif
