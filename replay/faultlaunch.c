/*
 * faultlaunch.c: dating migrations by their kernel's launch (faultlaunch.h).
 *
 * The kernels whose launch was noted are sorted by start, each with the
 * latest end among it and those that started before it (its reach). The
 * kernels running at t are then among those started by t, and the walk back
 * from the last of them stops at the first whose reach ends by t: no kernel
 * before it runs at t either. With one stream the walk is one step.
 */
#include "faultlaunch.h"

#include <stdlib.h>

#include "search.h"

struct dated_span {
	uint64_t start_ns, end_ns, launch_ns;
	uint64_t reach_ns; /* the latest end_ns up to and including this one */
};

static int by_correlation(const void *a, const void *b)
{
	const struct launch_time *x = a, *y = b;
	return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

static int by_start(const void *a, const void *b)
{
	const struct dated_span *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* The kernels of k whose launch l notes, sorted by start with their reach;
 * NULL (with *m 0) when there are none or memory ran out. */
static struct dated_span *date_kernels(const struct kernel_span *k, size_t nk, const struct launch_time *l,
				       size_t nl, size_t *m)
{
	struct dated_span *d = nk ? malloc(nk * sizeof *d) : NULL;
	*m = 0;
	for (size_t i = 0; d && i < nk; i++) {
		size_t j = lower_bound_u64(l, nl, SEARCH_FIELD(struct launch_time, correlation), k[i].correlation);
		if (j < nl && l[j].correlation == k[i].correlation)
			d[(*m)++] = (struct dated_span){ k[i].start_ns, k[i].end_ns, l[j].ns, 0 };
	}
	if (d)
		qsort(d, *m, sizeof *d, by_start);
	uint64_t reach = 0;
	for (size_t i = 0; i < *m; i++) {
		reach = d[i].end_ns > reach ? d[i].end_ns : reach;
		d[i].reach_ns = reach;
	}
	return d;
}

size_t faultlaunch_date(struct fault_event *ev, size_t n, const struct kernel_span *k, size_t nk,
			struct launch_time *l, size_t nl)
{
	for (size_t i = 0; i < n; i++)
		ev[i].launch_ns = 0;
	if (nl) /* l may be NULL then, which qsort may not be given */
		qsort(l, nl, sizeof *l, by_correlation);
	size_t m, dated = 0;
	struct dated_span *d = date_kernels(k, nk, l, nl, &m);
	for (size_t e = 0; e < n; e++) {
		uint64_t t = ev[e].t_ns;
		size_t i = upper_bound_u64(d, m, SEARCH_FIELD(struct dated_span, start_ns), t);
		while (i-- > 0 && d[i].reach_ns > t)
			if (d[i].end_ns > t && d[i].launch_ns > ev[e].launch_ns)
				ev[e].launch_ns = d[i].launch_ns;
		dated += ev[e].launch_ns != 0;
	}
	free(d);
	return dated;
}
