/* sigcheck.c: the foreign-plan rule (see sigcheck.h). */
#include "grow.h"
#include "search.h"
#include "sigcheck.h"

#include <stdlib.h>
#include <string.h>

struct sigcheck {
	const struct plan_signature *sig;
	bool foreign;

	bool any_placed;
	uint64_t launches;         /* since the first placed one, or the start */
	uint64_t limit;            /* 10 * n_kernels + slack */
	uint32_t window;           /* W */
	bool window_open, kernels_ok;
	uint32_t seen, placed;     /* in the open window */

	uint64_t *want;            /* the signature's allocation sizes, sorted */
	bool in_iteration;         /* allocations are being collected */
	bool alloc_ok;             /* an iteration agreed: allocations judged */
	bool overflow;             /* this iteration: too many to agree, or no memory */
	bool no_memory;            /* this iteration: its sizes could not be kept */
	uint64_t *got;             /* this iteration's sizes so far */
	size_t n_got, cap_got;
	uint32_t tries;            /* complete iterations compared */
};

sigcheck *sigcheck_create(const struct plan_signature *sig, bool allocations)
{
	sigcheck *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->sig = sig;
	s->alloc_ok = !allocations; /* never judged, so never against */
	s->window = sig->n_kernels < SIGCHECK_WINDOW_MAX ? sig->n_kernels : SIGCHECK_WINDOW_MAX;
	s->limit = 10 * (uint64_t)sig->n_kernels + SIGCHECK_NO_HIT_SLACK;
	s->want = malloc((sig->n_alloc_sizes ? sig->n_alloc_sizes : 1) * sizeof *s->want);
	if (!s->want) {
		free(s);
		return NULL;
	}
	if (sig->n_alloc_sizes) {
		memcpy(s->want, sig->alloc_sizes, sig->n_alloc_sizes * sizeof *s->want);
		qsort(s->want, sig->n_alloc_sizes, sizeof *s->want, compare_u64);
	}
	return s;
}

void sigcheck_destroy(sigcheck *s)
{
	if (!s)
		return;
	free(s->want);
	free(s->got);
	free(s);
}

void sigcheck_launch(sigcheck *s, bool placed)
{
	if (s->kernels_ok || s->foreign)
		return;
	if (placed && !s->any_placed) {
		s->any_placed = true;
		s->launches = 0;
	}
	s->launches++;
	if (!s->window_open && placed) {
		s->window_open = true;
		s->seen = s->placed = 0;
	}
	if (s->window_open) {
		s->seen++;
		s->placed += placed;
		if (s->seen == s->window) {
			s->window_open = false;
			s->kernels_ok = 2 * (uint64_t)s->placed >= s->window;
		}
	}
	/* After the window this launch closes is judged: one agreeing at the
	 * last launch allowed agreed in time. */
	if (!s->kernels_ok && s->launches >= s->limit)
		s->foreign = true;
}

void sigcheck_alloc(sigcheck *s, uint64_t size)
{
	if (!s->in_iteration || s->overflow)
		return;
	/* So many that even all of the signature would be too small a share,
	 * with as many again kept for the iteration after, whose first ones a
	 * start found late takes from this one (sigcheck_iteration_start). */
	if ((uint64_t)(s->n_got + 1) * SIGCHECK_ALLOC_AGREE_PCT > 2 * 100 * (uint64_t)s->sig->n_alloc_sizes) {
		s->overflow = true;
		return;
	}
	uint64_t *p = room_for_one(s->got, s->n_got, &s->cap_got, sizeof *p, 256);
	if (!p) {
		s->overflow = s->no_memory = true;
		return;
	}
	s->got = p;
	s->got[s->n_got++] = size;
}

/* True when the iteration's sizes and the signature's, as multisets, share
 * at least SIGCHECK_ALLOC_AGREE_PCT % of the larger of the two. */
static bool iteration_agrees(sigcheck *s)
{
	if (s->overflow)
		return false;
	if (s->n_got)
		qsort(s->got, s->n_got, sizeof *s->got, compare_u64);
	size_t i = 0, j = 0, shared = 0, n_want = s->sig->n_alloc_sizes;
	while (i < s->n_got && j < n_want) {
		if (s->got[i] == s->want[j])
			shared++, i++, j++;
		else if (s->got[i] < s->want[j])
			i++;
		else
			j++;
	}
	size_t larger = s->n_got > n_want ? s->n_got : n_want;
	return 100 * (uint64_t)shared >= SIGCHECK_ALLOC_AGREE_PCT * (uint64_t)larger;
}

void sigcheck_iteration_start(sigcheck *s, uint64_t early)
{
	if (s->alloc_ok)
		return;
	/* The early allocations move to the new iteration. Where the window
	 * did not keep them (none was open, or it overflowed), the new one's
	 * first are unknown: it is not judged, and the next start opens the
	 * next. */
	bool kept = s->in_iteration && !s->overflow;
	size_t moved = !kept ? 0 : early < s->n_got ? (size_t)early : s->n_got;
	bool unknown = early && !kept;
	/* An iteration whose sizes could not be kept is not judged either:
	 * running out of memory says nothing of the program. */
	if (s->in_iteration && !s->no_memory) {
		s->n_got -= moved;
		if (iteration_agrees(s)) {
			s->alloc_ok = true;
			s->in_iteration = false;
			return;
		}
		if (++s->tries >= SIGCHECK_ALLOC_TRIES)
			s->foreign = true;
	}
	s->in_iteration = !s->foreign && !unknown;
	s->overflow = s->no_memory = false;
	if (moved)
		memmove(s->got, s->got + s->n_got, moved * sizeof *s->got);
	s->n_got = moved;
}

bool sigcheck_foreign(const sigcheck *s)
{
	return s->foreign;
}
