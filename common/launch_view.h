/*
 * launch_view.h: whether the arena's fences can name the streams that may
 * still use freed memory, as one atomic word (common/cuda/um_backend.c).
 *
 * UNSEEN: no library follows the program's calls (before one subscribes,
 * an idle replay, after the exit path unsubscribes): a fence waits for the
 * whole context. PENDING: one has subscribed; the work queued before it
 * went unseen, so the next fence still waits for the whole context, and
 * claims the change (CLAIMED) before it does, so that its wait covers
 * every launch made before the subscription. SEEN after that wait
 * (PENDING again where it could not be made, a synchronize refused), unless
 * the view changed meanwhile: every change bumps a generation kept in the
 * same word, so a fence never undoes a later change, even one that came
 * back to CLAIMED by another fence's claim.
 */
#ifndef UMKIT_LAUNCH_VIEW_H
#define UMKIT_LAUNCH_VIEW_H

#include <stdatomic.h>
#include <stdbool.h>

enum launch_view_state { LAUNCH_VIEW_SEEN, LAUNCH_VIEW_UNSEEN, LAUNCH_VIEW_PENDING, LAUNCH_VIEW_CLAIMED };
/* state | generation << 2 */
typedef _Atomic unsigned launch_view;
#define LAUNCH_VIEW_INIT LAUNCH_VIEW_UNSEEN

static inline void launch_view_set(launch_view *v, unsigned state)
{
	unsigned w = atomic_load(v);
	while (!atomic_compare_exchange_weak(v, &w, (w & ~3u) + 4 + state))
		;
}

/* A library subscribed; from_start: before the program had a context, so
 * before any work, and no fence needs to wait for the whole context. */
static inline void launch_view_seen(launch_view *v, bool from_start)
{
	launch_view_set(v, from_start ? LAUNCH_VIEW_SEEN : LAUNCH_VIEW_PENDING);
}

static inline void launch_view_unseen(launch_view *v)
{
	launch_view_set(v, LAUNCH_VIEW_UNSEEN);
}

/* At a fence, before its wait: whether it must wait for the whole context.
 * *claim is the word it claimed, or 0 when its wait ends nothing (pass it
 * to launch_view_fence_end). */
static inline bool launch_view_fence_begin(launch_view *v, unsigned *claim)
{
	unsigned w = atomic_load(v);
	*claim = 0;
	if ((w & 3) == LAUNCH_VIEW_PENDING) {
		unsigned claimed = (w & ~3u) + 4 + LAUNCH_VIEW_CLAIMED;
		if (atomic_compare_exchange_strong(v, &w, claimed))
			*claim = claimed;
	}
	return *claim || (w & 3) != LAUNCH_VIEW_SEEN;
}

/* After the fence's wait for the whole context: SEEN once it was made;
 * when it could not be (a synchronize refused), PENDING again, for the
 * next fence to claim. */
static inline void launch_view_fence_end(launch_view *v, unsigned claim, bool waited)
{
	if (claim)
		atomic_compare_exchange_strong(v, &claim,
					       (claim & ~3u) + 4 + (waited ? LAUNCH_VIEW_SEEN : LAUNCH_VIEW_PENDING));
}

#endif
