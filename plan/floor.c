/* floor.c: the capacity floor (see floor.h). */
#include "floor.h"

#include <stdlib.h>
#include <string.h>

#include "json_value.h"

#define NEVER UINT64_MAX

/* The unwrapped position where the instance of x live at unwrapped
 * position u is freed: the first at which it is not live. NEVER for a
 * tensor live the whole cycle. */
static uint64_t freed_at(const struct tensor_set *ts, const struct tensor *x, uint64_t u)
{
	if (x->live_len >= ts->n_pos)
		return NEVER;
	return u + x->live_len - tensor_age(ts, x, (uint32_t)(u % ts->n_pos));
}

/* The window's bytes: the tensors used since its start and live now,
 * each once, with a list per unwrapped position (offset from the start)
 * of those whose instance is freed there. */
struct window {
	uint64_t bytes;
	uint64_t *freed;    /* [tensor]: where its instance in the window is freed */
	uint32_t *stamp;    /* [tensor]: the start it was added in, + 1 */
	uint32_t *next;     /* [tensor]: the next in its list */
	uint32_t *head;     /* [n_pos + 2]: by offset; UINT32_MAX: empty */
};

static void expire(struct window *w, const struct tensor_set *ts, uint32_t stamp, uint64_t off, uint64_t at)
{
	for (uint32_t t = w->head[off]; t != UINT32_MAX; t = w->next[t])
		if (w->stamp[t] == stamp && w->freed[t] == at) {
			w->bytes -= tensor_gpu_bytes(&ts->t[t]);
			w->stamp[t] = 0;
		}
}

/* Adds the tensors kernel u uses; returns their bytes on the GPU, its own
 * working set. */
static uint64_t add_uses(struct window *w, const struct tensor_set *ts, const struct access_set *a, uint32_t stamp,
			 uint64_t start, uint64_t u)
{
	uint32_t k = (uint32_t)(u % ts->n_pos);
	uint64_t own = 0;
	for (uint32_t i = a->first[k]; i < a->first[k + 1]; i++) {
		uint32_t t = a->tensor[i];
		const struct tensor *x = &ts->t[t];
		own += tensor_gpu_bytes(x);
		/* In the window already: the same instance, since one freed
		 * earlier has left it (expire). */
		if (w->stamp[t] == stamp || !tensor_gpu_bytes(x))
			continue;
		w->stamp[t] = stamp;
		w->freed[t] = freed_at(ts, x, u);
		w->bytes += tensor_gpu_bytes(x);
		if (w->freed[t] <= start + ts->n_pos) {
			uint64_t off = w->freed[t] - start;
			w->next[t] = w->head[off];
			w->head[off] = t;
		}
	}
	return own;
}

static double excess_ns(const struct floor_window *w, uint64_t dtoh_bytes_per_s)
{
	return (double)w->evict_bytes * 1e9 / (double)dtoh_bytes_per_s - (double)w->kernel_ns;
}

/* Keeps the window x in out, after those kept (it starts after them);
 * once FLOOR_MAX_WINDOWS are, the kept one of least excess makes way, or
 * x is dropped if its own excess is less. Returns the change in the kept
 * windows' excess. */
static double keep_window(struct capacity_floor *out, const struct floor_window *x, uint64_t dtoh_bytes_per_s)
{
	double e = excess_ns(x, dtoh_bytes_per_s), dropped = 0;
	if (out->n_windows == FLOOR_MAX_WINDOWS) {
		size_t least = 0;
		for (size_t i = 1; i < FLOOR_MAX_WINDOWS; i++)
			if (excess_ns(&out->windows[i], dtoh_bytes_per_s) <
			    excess_ns(&out->windows[least], dtoh_bytes_per_s))
				least = i;
		dropped = excess_ns(&out->windows[least], dtoh_bytes_per_s);
		if (e <= dropped)
			return 0;
		out->n_windows--;
		memmove(&out->windows[least], &out->windows[least + 1],
			(out->n_windows - least) * sizeof *out->windows);
	}
	out->windows[out->n_windows++] = *x;
	return e - dropped;
}

int capacity_floor(const struct tensor_set *ts, const struct access_set *a, const struct vital *v,
		   uint64_t capacity, uint64_t dtoh_bytes_per_s, struct capacity_floor *out)
{
	const uint32_t p = ts->n_pos;
	*out = (struct capacity_floor){ 0 };
	for (uint32_t k = 0; k < p; k++)
		out->kernel_ns += vital_kernel_ns(v, k);
	out->ns = out->kernel_ns;
	if (!p || !dtoh_bytes_per_s)
		return 0;
	struct window w = { 0 };
	size_t n = ts->n ? ts->n : 1; /* malloc(0) may return NULL */
	w.freed = malloc(n * sizeof *w.freed);
	w.stamp = calloc(n, sizeof *w.stamp);
	w.next = malloc(n * sizeof *w.next);
	w.head = malloc(((size_t)p + 2) * sizeof *w.head);
	/* most[j]: the most excess disjoint windows within [j, p) add up to;
	 * pick[j]: the end of the window from j that gives it (0: none). */
	double *most = calloc((size_t)p + 1, sizeof *most);
	uint32_t *pick = calloc((size_t)p + 1, sizeof *pick);
	struct floor_window *from_j = malloc((size_t)p * sizeof *from_j);
	if (!w.freed || !w.stamp || !w.next || !w.head || !most || !pick || !from_j) {
		free(w.freed), free(w.stamp), free(w.next), free(w.head), free(most), free(pick), free(from_j);
		return -1;
	}
	uint64_t pairs = (uint64_t)p * (p + 1), stride = pairs / FLOOR_MAX_WORK + 1;
	double best = 0; /* ns: a link slow enough takes longer than 2^64 */
	/* From the last start down, so that most[] past each window's end is
	 * known when the window is. */
	uint32_t last = (uint32_t)((p - 1) / stride * stride);
	for (uint32_t j = p; j-- > 0;) {
		most[j] = most[j + 1];
		if (j > last || j % stride)
			continue;
		uint32_t stamp = ++out->starts_tried;
		w.bytes = 0;
		for (uint32_t o = 0; o < p + 2; o++)
			w.head[o] = UINT32_MAX;
		uint64_t in_window = 0; /* kernel time of [j, u) */
		for (uint64_t u = j; u <= (uint64_t)j + p; u++) {
			expire(&w, ts, stamp, u - j, u);
			/* A kernel that cannot fit has its own working set for
			 * target, as the scheduler's (sched.h). */
			uint64_t own = add_uses(&w, ts, a, stamp, j, u), room = own > capacity ? own : capacity;
			if (w.bytes > room) {
				struct floor_window win = { j, (uint32_t)(u % p), w.bytes - room, in_window };
				double excess = excess_ns(&win, dtoh_bytes_per_s);
				/* Ties go to the earliest start, then the earliest end. */
				if (excess > best || (excess == best && excess > 0 && j < out->from)) {
					best = excess;
					out->from = win.from;
					out->to = win.to;
					out->evict_bytes = win.evict_bytes;
					out->window_kernel_ns = win.kernel_ns;
				}
				if (u <= p && excess > 0 && excess + most[u] > most[j]) {
					most[j] = excess + most[u];
					pick[j] = (uint32_t)u;
					from_j[j] = win;
				}
			}
			in_window += vital_kernel_ns(v, (uint32_t)(u % p));
		}
	}
	/* The windows the dynamic programming chose, from the start on. */
	double windows = 0;
	for (uint32_t j = 0; most[0] > best && j < p;) {
		if (pick[j]) {
			windows += keep_window(out, &from_j[j], dtoh_bytes_per_s);
			j = pick[j];
		} else {
			j++;
		}
	}
	if (windows <= best)
		out->n_windows = 0;
	double total = (double)out->kernel_ns + (windows > best ? windows : best);
	out->ns = total < 0x1p64 ? (uint64_t)total : UINT64_MAX;
	free(w.freed), free(w.stamp), free(w.next), free(w.head), free(most), free(pick), free(from_j);
	return 0;
}

bool capacity_floor_json(cJSON *o, const struct capacity_floor *f)
{
	cJSON *windows = json_add_u64(o, "ns", f->ns) && json_add_u64(o, "kernel_ns", f->kernel_ns) &&
				 json_add_u64(o, "from", f->from) && json_add_u64(o, "to", f->to) &&
				 json_add_u64(o, "evict_bytes", f->evict_bytes) &&
				 json_add_u64(o, "window_kernel_ns", f->window_kernel_ns)
			 ? cJSON_AddArrayToObject(o, "windows")
			 : NULL;
	for (size_t i = 0; windows && i < f->n_windows; i++) {
		const struct floor_window *x = &f->windows[i];
		cJSON *e = cJSON_CreateObject();
		bool filled = e && json_add_u64(e, "from", x->from) && json_add_u64(e, "to", x->to) &&
			      json_add_u64(e, "evict_bytes", x->evict_bytes) && json_add_u64(e, "kernel_ns", x->kernel_ns);
		if (!filled || !cJSON_AddItemToArray(windows, e)) {
			cJSON_Delete(e);
			return false;
		}
	}
	return windows != NULL;
}
