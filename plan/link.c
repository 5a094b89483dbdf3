/* link.c: the link's occupancy on a cyclic time axis (see link.h). */
#include "link.h"
#include "search.h"

#include <stdlib.h>
#include <string.h>

void link_init(struct link *l, int64_t cycle_ns)
{
	memset(l, 0, sizeof *l);
	l->cycle_ns = cycle_ns > 0 ? cycle_ns : 1;
}

void link_free(struct link *l)
{
	free(l->s);
	free(l->e);
	memset(l, 0, sizeof *l);
}

static int64_t mod(int64_t t, int64_t c)
{
	int64_t r = t % c;
	return r < 0 ? r + c : r;
}

int64_t link_earliest(const struct link *l, int64_t t, int64_t d)
{
	if (d <= 0 || l->n == 0)
		return d > l->cycle_ns ? LINK_NONE : t;
	if (d > l->cycle_ns)
		return LINK_NONE;
	int64_t x = mod(t, l->cycle_ns), base = t - x;
	/* First interval ending after x. */
	size_t lo = upper_bound_i64(l->e, l->n, sizeof *l->e, 0, x);
	int64_t cand = x;
	for (size_t j = 0; j <= l->n; j++) {
		size_t idx = (lo + j) % l->n;
		int64_t lap = (int64_t)((lo + j) / l->n) * l->cycle_ns;
		int64_t s = l->s[idx] + lap, e = l->e[idx] + lap;
		if (cand + d <= s)
			return base + cand;
		if (e > cand)
			cand = e;
	}
	return LINK_NONE;
}

int64_t link_latest(const struct link *l, int64_t t, int64_t d)
{
	if (d <= 0 || l->n == 0)
		return d > l->cycle_ns ? LINK_NONE : t - (d > 0 ? d : 0);
	if (d > l->cycle_ns)
		return LINK_NONE;
	int64_t y = mod(t, l->cycle_ns), base = t - y;
	if (y == 0) { /* the end of the previous lap, so intervals compare right */
		y = l->cycle_ns;
		base -= l->cycle_ns;
	}
	/* Number of intervals starting before y: the last of them is lo - 1. */
	size_t lo = lower_bound_i64(l->s, l->n, sizeof *l->s, 0, y);
	int64_t cand = y; /* end of the free stretch being examined */
	for (size_t j = 0; j <= l->n; j++) {
		/* Walk intervals backwards from lo - 1, wrapping to earlier laps. */
		int64_t k = (int64_t)lo - 1 - (int64_t)j;
		int64_t laps = 0;
		while (k < 0) {
			k += (int64_t)l->n;
			laps++;
		}
		int64_t s = l->s[k] - laps * l->cycle_ns, e = l->e[k] - laps * l->cycle_ns;
		if (e <= cand - d)
			return base + cand - d;
		if (s < cand)
			cand = s;
	}
	return LINK_NONE;
}

static int insert(struct link *l, int64_t s, int64_t e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		int64_t *ns = realloc(l->s, cap * sizeof *ns);
		if (!ns)
			return -1;
		l->s = ns;
		int64_t *ne = realloc(l->e, cap * sizeof *ne);
		if (!ne)
			return -1;
		l->e = ne;
		l->cap = cap;
	}
	size_t i = lower_bound_i64(l->s, l->n, sizeof *l->s, 0, s);
	/* Merge with touching neighbours to keep the list short. */
	if (i > 0 && l->e[i - 1] == s) {
		l->e[i - 1] = e;
		if (i < l->n && l->s[i] == e) {
			l->e[i - 1] = l->e[i];
			memmove(l->s + i, l->s + i + 1, (l->n - i - 1) * sizeof *l->s);
			memmove(l->e + i, l->e + i + 1, (l->n - i - 1) * sizeof *l->e);
			l->n--;
		}
		return 0;
	}
	if (i < l->n && l->s[i] == e) {
		l->s[i] = s;
		return 0;
	}
	memmove(l->s + i + 1, l->s + i, (l->n - i) * sizeof *l->s);
	memmove(l->e + i + 1, l->e + i, (l->n - i) * sizeof *l->e);
	l->s[i] = s;
	l->e[i] = e;
	l->n++;
	return 0;
}

int link_reserve(struct link *l, int64_t start, int64_t d)
{
	if (d <= 0)
		return 0;
	if (d > l->cycle_ns)
		d = l->cycle_ns;
	int64_t x = mod(start, l->cycle_ns);
	if (x + d <= l->cycle_ns)
		return insert(l, x, x + d);
	if (insert(l, x, l->cycle_ns))
		return -1;
	return insert(l, 0, x + d - l->cycle_ns);
}
