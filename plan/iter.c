/* iter.c: iteration detection (see iter.h). */
#include "iter.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errmsg.h"
#include "execid.h"

int iter_options_parse(const char *text, struct iter_options *out)
{
	memset(out, 0, sizeof *out);
	if (strcmp(text, "auto") == 0)
		return 0;
	if (strncmp(text, "nvtx:", 5) == 0) {
		if (!text[5] || strlen(text + 5) >= sizeof out->nvtx_name)
			return -1;
		out->mode = ITER_MODE_NVTX;
		snprintf(out->nvtx_name, sizeof out->nvtx_name, "%s", text + 5);
		return 0;
	}
	if (!isdigit((unsigned char)text[0]))
		return -1;
	char *end;
	unsigned long long v = strtoull(text, &end, 10);
	if (*end || v > SIZE_MAX / 2)
		return -1;
	out->mode = ITER_MODE_INDEX;
	out->index = (size_t)v;
	return 0;
}

const char *iter_method_name(enum iter_method m)
{
	switch (m) {
	case ITER_BY_NVTX: return "nvtx";
	case ITER_BY_PERIOD: return "period";
	case ITER_WHOLE: return "whole";
	}
	return "?";
}

/* ---- the period search ---- */

/* prev[i]: the largest j < i with ids[j] == ids[i], or SIZE_MAX. One pass
 * with an open-addressing table of last positions. */
static size_t *previous_occurrences(const uint64_t *ids, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	size_t *prev = malloc((n ? n : 1) * sizeof *prev);
	uint64_t *keys = malloc(cap * sizeof *keys);
	size_t *last = malloc(cap * sizeof *last);
	if (!prev || !keys || !last) {
		free(prev);
		free(keys);
		free(last);
		return NULL;
	}
	for (size_t i = 0; i < cap; i++)
		last[i] = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = ids[i];
		size_t h = (size_t)((k * 0x9e3779b97f4a7c15ULL) >> 17) & (cap - 1);
		while (last[h] != SIZE_MAX && keys[h] != k)
			h = (h + 1) & (cap - 1);
		prev[i] = last[h];
		keys[h] = k;
		last[h] = i;
	}
	free(keys);
	free(last);
	return prev;
}

struct stretch {
	size_t p, first, end; /* ids[first..end) is p-periodic */
};

/* Whether position i repeats position i - p. An unknown ID (0) repeats
 * nothing: a run of unknown kernels is no evidence of a period. */
static bool repeats(const uint64_t *ids, size_t i, size_t p)
{
	return ids[i] != 0 && ids[i] == ids[i - p];
}

/* The maximal p-periodic stretch through position a (a >= p). */
static struct stretch stretch_through(const uint64_t *ids, size_t n, size_t p, size_t a, size_t *work)
{
	size_t lo = a, hi = a + 1;
	while (lo > p && repeats(ids, lo - 1, p))
		lo--;
	while (hi < n && repeats(ids, hi, p))
		hi++;
	*work += hi - lo;
	/* Positions lo..hi-1 each equal the one p before; ids[a] == ids[a-p]
	 * holds by construction of the candidate. */
	return (struct stretch){ p, lo - p, hi };
}

size_t iter_find_period(const uint64_t *ids, size_t n, size_t *first, size_t *end)
{
	*first = *end = 0;
	if (n < 2)
		return 0;
	size_t *prev = previous_occurrences(ids, n);
	if (!prev)
		return 0;
	struct stretch best = { 0, 0, 0 };
	/* Anchors spread over the second half, where the steady state is; one
	 * of them lies inside the true stretch unless the steady state is
	 * shorter than n/8. */
	size_t work = 0, budget = 64 * n + 4096;
	for (int j = 0; j <= 4 && work < budget; j++) {
		size_t a = n - 1 - (size_t)((uint64_t)j * n / 8);
		if (ids[a] == 0)
			continue;
		if (best.p && a >= best.first + best.p && a < best.end)
			continue; /* already inside the best stretch: no new candidates */
		for (size_t q = prev[a]; q != SIZE_MAX && work < budget; q = prev[q]) {
			size_t p = a - q;
			if (2 * p > n)
				break;
			if (best.p && p % best.p == 0 && best.first + p <= a && a < best.end)
				continue; /* a multiple of a period that already covers a */
			struct stretch s = stretch_through(ids, n, p, a, &work);
			size_t len = s.end - s.first;
			if (len < 2 * p)
				continue;
			size_t best_len = best.end - best.first;
			if (!best.p || len > best_len || (len == best_len && p < best.p))
				best = s;
		}
	}
	free(prev);
	*first = best.first;
	*end = best.end;
	return best.p;
}

/* ---- NVTX ---- */

static const char *const auto_names[] = {
	"iteration", "iter", "step", "train_step", "training_step", "ProfilerStep", "batch",
};

/* Whether text is name as a word, in any case: followed by its end or a
 * non-letter ("step 3", "ProfilerStep#3", "step_3"), but not by '_' and a
 * letter, which joins words into one ("batch_norm", "iteration_count"). */
static bool name_matches(const char *text, const char *name)
{
	size_t len = strlen(name);
	if (strncasecmp(text, name, len) != 0)
		return false;
	const char *rest = text + len;
	if (*rest == '_')
		rest++;
	return !isalpha((unsigned char)*rest);
}

/* The top-level ranges whose text matches name, in start order: a range
 * starting inside the previous kept one is nested or overlapping and is
 * left out. Returns how many were written to out (capacity t->n_nvtx). */
static size_t matching_ranges(const struct trace *t, const char *name, size_t *out)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n_nvtx; i++) {
		if (!name_matches(trace_string(t, t->nvtx[i].name), name))
			continue;
		if (n > 0) {
			const struct trace_nvtx *p = &t->nvtx[out[n - 1]];
			if (p->end_ns != TRACE_NS_NEVER && t->nvtx[i].start_ns < p->end_ns)
				continue;
		}
		out[n++] = i;
	}
	return n;
}

/* The kernels of range i of the m in ranges: from its start to the next
 * one's (the last to its end); n = 0 when it holds none. */
static struct iter_span range_span(const struct trace *t, const size_t *ranges, size_t m, size_t i)
{
	const struct trace_nvtx *rg = &t->nvtx[ranges[i]];
	size_t first = trace_position_at(t, rg->start_ns);
	size_t end = i + 1 < m ? trace_position_at(t, t->nvtx[ranges[i + 1]].start_ns)
	                       : (rg->end_ns == TRACE_NS_NEVER ? t->n_kernels
	                                                       : trace_position_at(t, rg->end_ns));
	return (struct iter_span){ first, end > first ? end - first : 0 };
}

/* How many of the m ranges hold a kernel: the iterations they make. */
static size_t spans_with_kernels(const struct trace *t, const size_t *ranges, size_t m)
{
	size_t n = 0;
	for (size_t i = 0; i < m; i++)
		n += range_span(t, ranges, m, i).n > 0;
	return n;
}

static int spans_from_ranges(const struct trace *t, const size_t *ranges, size_t m,
			     struct iter_result *r)
{
	r->iters = malloc((m ? m : 1) * sizeof *r->iters);
	if (!r->iters)
		return -1;
	r->n_iters = 0;
	for (size_t i = 0; i < m; i++) {
		struct iter_span s = range_span(t, ranges, m, i);
		if (s.n)
			r->iters[r->n_iters++] = s;
	}
	return 0;
}

/* ---- choosing the phase of a period ---- */

/* Live allocation bytes at each position of [w0, w0 + p): an allocation is
 * live at the kernels launched after its allocation and before its free. */
static uint64_t *live_bytes(const struct trace *t, size_t w0, size_t p)
{
	int64_t *diff = calloc(p + 1, sizeof *diff);
	uint64_t *live = malloc(p * sizeof *live);
	if (!diff || !live) {
		free(diff);
		free(live);
		return NULL;
	}
	for (size_t i = 0; i < t->n_allocs; i++) {
		const struct trace_alloc *a = &t->allocs[i];
		size_t pa = trace_position_at(t, a->alloc_ns);
		size_t pf = a->free_ns == TRACE_NS_NEVER ? t->n_kernels : trace_position_at(t, a->free_ns);
		size_t lo = pa > w0 ? pa : w0, hi = pf < w0 + p ? pf : w0 + p;
		if (lo >= hi)
			continue;
		diff[lo - w0] += (int64_t)a->size;
		diff[hi - w0] -= (int64_t)a->size;
	}
	int64_t run = 0;
	for (size_t k = 0; k < p; k++) {
		run += diff[k];
		live[k] = (uint64_t)run;
	}
	free(diff);
	return live;
}

/* The offset in [0, p) of the window [w0, w0 + p) where an iteration should
 * start: the first position of the longest cyclic run of minimal live bytes
 * (the trough after an optimizer step, before the next forward pass). */
static size_t trough_offset(const struct trace *t, size_t w0, size_t p)
{
	uint64_t *live = live_bytes(t, w0, p);
	if (!live)
		return 0;
	uint64_t min = UINT64_MAX;
	for (size_t k = 0; k < p; k++)
		if (live[k] < min)
			min = live[k];
	size_t best = 0, best_len = 0;
	bool all = true;
	for (size_t k = 0; k < p; k++)
		all = all && live[k] == min;
	if (!all) {
		for (size_t k = 0; k < p; k++) {
			if (live[k] != min || live[(k + p - 1) % p] == min)
				continue; /* not the start of a run */
			size_t len = 0;
			while (len < p && live[(k + len) % p] == min)
				len++;
			if (len > best_len) {
				best = k;
				best_len = len;
			}
		}
	}
	free(live);
	return best;
}

/* ---- persistent buffers in rotation ---- */

/* Which allocations live through the whole stretch [first, end): made
 * before it and not freed within it. NULL when out of memory. */
static bool *persistent_through(const struct trace *t, size_t first, size_t end)
{
	bool *persistent = malloc((t->n_allocs ? t->n_allocs : 1) * sizeof *persistent);
	for (size_t i = 0; persistent && i < t->n_allocs; i++) {
		const struct trace_alloc *a = &t->allocs[i];
		persistent[i] = trace_position_at(t, a->alloc_ns) <= first &&
				(a->free_ns == TRACE_NS_NEVER || trace_position_at(t, a->free_ns) >= end);
	}
	return persistent;
}

/* For each kernel of [first, end), a hash of the persistent allocations it
 * uses, so that ring_rotation compares two kernels in one step: its
 * search may pass over most of a long stretch for each k. Two different
 * sets hash alike once in 2^64 pairs. NULL when out of memory. */
static uint64_t *persistent_sets(const struct trace *t, const bool *persistent, size_t first,
				 size_t end)
{
	uint64_t *sets = malloc((end - first) * sizeof *sets);
	for (size_t i = first; sets && i < end; i++) {
		uint64_t h = EXECID_FNV_SEED;
		for (uint32_t a = t->arg_first[i]; a < t->arg_first[i + 1]; a++)
			if (persistent[t->arg_alloc[a]])
				h = execid_fnv1a(h, &t->arg_alloc[a], sizeof t->arg_alloc[a]);
		sets[i - first] = h;
	}
	return sets;
}

/*
 * The smallest k for which the persistent allocations each kernel of a
 * stretch of n kernels uses (sets: persistent_sets) repeat every k * p
 * kernels, as its execution IDs repeat every p; 1 when none up to
 * ITER_MAX_ROTATION does with two repetitions. Execution IDs name an
 * allocation by its size and offset, so a loop over same-sized persistent
 * buffers in turn (a ring of input buffers) repeats its IDs every kernel
 * but its memory only once around the ring, and a plan of p kernels would
 * use one buffer and leave the others idle. Allocations made or freed
 * inside the stretch are left out: per-iteration tensors differ from one
 * iteration to the next.
 */
static size_t ring_rotation(const uint64_t *sets, size_t n, size_t p)
{
	for (size_t k = 1; k <= ITER_MAX_ROTATION && 2 * k * p <= n; k++) {
		size_t i = k * p;
		while (i < n && sets[i] == sets[i - k * p])
			i++;
		if (i == n)
			return k;
	}
	return 1;
}

/* Whether kernel uses allocation alloc (its argument list is sorted). */
static bool uses(const struct trace *t, size_t kernel, uint32_t alloc)
{
	uint32_t lo = t->arg_first[kernel], hi = t->arg_first[kernel + 1];
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->arg_alloc[mid] < alloc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->arg_first[kernel + 1] && t->arg_alloc[lo] == alloc;
}

/* The ring keys (iter_result.ring_keys) of the iteration [w0, w0 + period)
 * of a ring of `rotation` steps: for each kernel, the first persistent
 * allocation it uses that the kernels a multiple of period / rotation away
 * do not, as its ordinal; 0 for none. NULL when out of memory. */
static uint64_t *ring_keys(const struct trace *t, const bool *persistent, size_t w0, size_t period,
			   size_t rotation)
{
	uint64_t *keys = calloc(period, sizeof *keys);
	size_t step = period / rotation;
	for (size_t j = 0; keys && j < period; j++) {
		for (uint32_t a = t->arg_first[w0 + j]; a < t->arg_first[w0 + j + 1] && !keys[j]; a++) {
			uint32_t x = t->arg_alloc[a];
			bool own = persistent[x];
			for (size_t m = 1; own && m < rotation; m++)
				own = !uses(t, w0 + (j + m * step) % period, x);
			if (own)
				keys[j] = t->allocs[x].id;
		}
	}
	return keys;
}

static int by_period(const struct trace *t, const uint64_t *ids, struct iter_result *r)
{
	size_t first, end;
	size_t p = iter_find_period(ids, t->n_kernels, &first, &end);
	if (!p)
		return 1;
	bool *persistent = persistent_through(t, first, end);
	uint64_t *sets = persistent ? persistent_sets(t, persistent, first, end) : NULL;
	if (!sets) {
		free(persistent);
		return -1;
	}
	r->rotation = ring_rotation(sets, end - first, p);
	free(sets);
	p *= r->rotation;
	size_t phase = trough_offset(t, end - p, p);
	size_t s0 = first + ((end - p + phase) - first) % p;
	size_t k = (end - s0) / p;
	if (r->rotation > 1)
		r->ring_keys = ring_keys(t, persistent, s0, p, r->rotation);
	free(persistent);
	r->iters = malloc(k * sizeof *r->iters);
	if (!r->iters || (r->rotation > 1 && !r->ring_keys))
		return -1;
	for (size_t i = 0; i < k; i++)
		r->iters[i] = (struct iter_span){ s0 + i * p, p };
	r->n_iters = k;
	r->period = p;
	r->method = ITER_BY_PERIOD;
	return 0;
}

static bool same_sequence(const uint64_t *ids, struct iter_span a, struct iter_span b)
{
	return a.n == b.n && memcmp(ids + a.first, ids + b.first, a.n * sizeof *ids) == 0;
}

/* Compares the chosen iteration c with its predecessor prev, position by
 * position, for the report's "NOT steady" line. */
static void compare_with_previous(const uint64_t *ids, struct iter_span c, struct iter_span prev,
				  struct iter_result *r)
{
	size_t common = c.n < prev.n ? c.n : prev.n;
	r->n_differ = c.n + prev.n - 2 * common;
	r->first_differ = common;
	for (size_t i = common; i-- > 0;) {
		if (ids[c.first + i] != ids[prev.first + i]) {
			r->n_differ++;
			r->first_differ = i;
		}
	}
	r->steady = r->n_differ == 0;
}

int iter_detect(const struct trace *t, const struct iter_options *o, struct iter_result *r,
		char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	if (t->n_kernels == 0 && t->after_reset_kernels) {
		um_errmsg(err, errlen, "%s: every kernel was launched after the program reset the device "
			  "(cudaDeviceReset), in memory umkit did not manage: nothing to plan", t->path);
		return -1;
	}
	if (t->n_kernels == 0 && t->other_context_kernels) {
		um_errmsg(err, errlen, "%s: every kernel ran in another CUDA context than the one umkit's memory "
			  "is in (another GPU's, or one the program made): nothing to plan", t->path);
		return -1;
	}
	if (t->n_kernels == 0) {
		um_errmsg(err, errlen, "%s: the trace has no kernels with a launch record%s", t->path,
			  t->status && strcmp(t->status, "failed") == 0
				  ? " (its recording failed to start: meta.error says why)"
				  : "");
		return -1;
	}
	uint64_t *ids = malloc(t->n_kernels * sizeof *ids);
	size_t *ranges = malloc((t->n_nvtx ? t->n_nvtx : 1) * sizeof *ranges);
	if (!ids || !ranges) {
		free(ids);
		free(ranges);
		um_errmsg(err, errlen, "%s: out of memory detecting iterations", t->path);
		return -1;
	}
	for (size_t i = 0; i < t->n_kernels; i++)
		ids[i] = t->kernels[i].exec_id;

	int rc = 0;
	size_t m = 0;
	if (o->mode == ITER_MODE_NVTX) {
		m = matching_ranges(t, o->nvtx_name, ranges);
		if (m == 0) {
			um_errmsg(err, errlen, "%s: no NVTX range named '%s' (%zu ranges in the trace)",
				t->path, o->nvtx_name, t->n_nvtx);
			rc = -1;
			goto out;
		}
		snprintf(r->nvtx_name, sizeof r->nvtx_name, "%s", o->nvtx_name);
	} else {
		/* The name whose ranges make the most iterations, at least
		 * two: ranges that hold no kernel (a loader's, before the
		 * first launch) make none, and the period is looked for. */
		size_t best = 0;
		for (size_t i = 0; i < sizeof auto_names / sizeof auto_names[0]; i++) {
			size_t c = matching_ranges(t, auto_names[i], ranges);
			size_t k = c >= 2 ? spans_with_kernels(t, ranges, c) : 0;
			if (k >= 2 && k > best) {
				best = k;
				snprintf(r->nvtx_name, sizeof r->nvtx_name, "%s", auto_names[i]);
			}
		}
		if (best)
			m = matching_ranges(t, r->nvtx_name, ranges);
	}
	if (m) {
		r->method = ITER_BY_NVTX;
		if (spans_from_ranges(t, ranges, m, r)) {
			rc = -1;
			goto oom;
		}
		if (r->n_iters == 0) {
			um_errmsg(err, errlen, "%s: the NVTX ranges named '%s' contain no kernels",
				t->path, r->nvtx_name);
			rc = -1;
			goto out;
		}
	} else {
		int pr = by_period(t, ids, r);
		if (pr < 0)
			goto oom;
		if (pr > 0) {
			r->iters = malloc(sizeof *r->iters);
			if (!r->iters)
				goto oom;
			r->iters[0] = (struct iter_span){ 0, t->n_kernels };
			r->n_iters = 1;
			r->method = ITER_WHOLE;
		}
	}
	r->warmup = r->iters[0].first;
	const struct iter_span *last = &r->iters[r->n_iters - 1];
	r->tail = t->n_kernels - (last->first + last->n);

	if (o->mode == ITER_MODE_INDEX) {
		if (o->index >= r->n_iters) {
			um_errmsg(err, errlen, "%s: iteration %zu asked for, but the trace has %zu "
				"(0..%zu, found by %s)", t->path, o->index, r->n_iters,
				r->n_iters - 1, iter_method_name(r->method));
			rc = -1;
			goto out;
		}
		r->chosen = o->index;
	} else {
		/* Latest steady iteration that has a successor, else the latest
		 * with a successor: the last one's allocations run into the
		 * tail (a checksum, an evaluation), so a plan made from it would
		 * not know the iterations it is replayed on. */
		r->chosen = r->n_iters >= 2 ? r->n_iters - 2 : 0;
		for (size_t i = r->n_iters >= 2 ? r->n_iters - 2 : 0; i >= 1; i--) {
			if (same_sequence(ids, r->iters[i], r->iters[i - 1])) {
				r->chosen = i;
				break;
			}
		}
	}
	struct iter_span c = r->iters[r->chosen];
	if (r->chosen > 0)
		compare_with_previous(ids, c, r->iters[r->chosen - 1], r);
	else if (c.first >= c.n)
		compare_with_previous(ids, c, (struct iter_span){ c.first - c.n, c.n }, r);
	goto out;
oom:
	um_errmsg(err, errlen, "%s: out of memory detecting iterations", t->path);
	rc = -1;
out:
	free(ids);
	free(ranges);
	if (rc)
		iter_result_free(r);
	return rc;
}

void iter_result_free(struct iter_result *r)
{
	free(r->iters);
	free(r->ring_keys);
	r->ring_keys = NULL;
	r->iters = NULL;
	r->n_iters = 0;
}
