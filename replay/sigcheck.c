/* sigcheck.c: the foreign-plan rule (see sigcheck.h). */
#include "sigcheck.h"

#include <stdlib.h>

struct sigcheck {
	const struct plan_signature *sig;
	bool foreign;

	bool any_placed;
	uint64_t launches;         /* since the first placed one, or the start */
	uint64_t limit;            /* 10 * n_kernels + slack */
	uint32_t window;           /* W */
	bool window_open, kernels_ok;
	uint32_t seen, placed;     /* in the open window */

	bool in_iteration;         /* allocations are being compared */
	bool alloc_ok;             /* an iteration agreed: allocations judged */
	bool agree;                /* this iteration so far */
	uint64_t n_allocs;         /* this iteration so far */
	uint32_t tries;            /* complete iterations compared */
};

sigcheck *sigcheck_create(const struct plan_signature *sig)
{
	sigcheck *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->sig = sig;
	s->window = sig->n_kernels < SIGCHECK_WINDOW_MAX ? sig->n_kernels : SIGCHECK_WINDOW_MAX;
	s->limit = 10 * (uint64_t)sig->n_kernels + SIGCHECK_NO_HIT_SLACK;
	return s;
}

void sigcheck_destroy(sigcheck *s)
{
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
	if (++s->launches >= s->limit) {
		s->foreign = true;
		return;
	}
	if (!s->window_open) {
		if (!placed)
			return;
		s->window_open = true;
		s->seen = s->placed = 0;
	}
	s->seen++;
	s->placed += placed;
	if (s->seen < s->window)
		return;
	s->window_open = false;
	s->kernels_ok = 2 * (uint64_t)s->placed >= s->window;
}

void sigcheck_alloc(sigcheck *s, uint64_t size)
{
	if (!s->in_iteration)
		return;
	s->n_allocs++;
	if (s->n_allocs > s->sig->n_alloc_sizes || s->sig->alloc_sizes[s->n_allocs - 1] != size)
		s->agree = false;
}

void sigcheck_iteration_start(sigcheck *s)
{
	if (s->alloc_ok)
		return;
	if (s->in_iteration) {
		if (s->agree && s->n_allocs == s->sig->n_alloc_sizes) {
			s->alloc_ok = true;
			s->in_iteration = false;
			return;
		}
		if (++s->tries >= SIGCHECK_ALLOC_TRIES)
			s->foreign = true;
	}
	s->in_iteration = !s->foreign;
	s->agree = true;
	s->n_allocs = 0;
}

bool sigcheck_foreign(const sigcheck *s)
{
	return s->foreign;
}
