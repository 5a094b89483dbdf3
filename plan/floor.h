/*
 * floor.h: the least time any migration schedule can take per iteration
 * at a capacity, whatever its order (the capacity floor).
 *
 * The lower bound, max(kernel time, evicted bytes / DtoH, prefetched
 * bytes / HtoD), is the plan's own traffic spread over the whole
 * iteration. But room is needed at particular kernels. Take a window of
 * kernels j..k: every tensor a kernel in [j, k] uses that is still live
 * when kernel k starts was on the GPU at that use, and at most the
 * capacity of them can be there at k. The rest, E bytes, must have been
 * evicted after their use in the window began (at or after kernel j's
 * start) and before kernel k starts: E / DtoH of the link inside that
 * window. The kernels run one at a time at their recorded speed, so the
 * window lasts at least max(kernel time in [j, k), E / DtoH), and
 *
 *   iteration >= kernel time + max over windows (E / DtoH - kernel time in [j, k))
 *
 * for every schedule, on this one stream, under the link the planner and
 * the simulator model. Windows may wrap around the iteration's end (the
 * steady state). Windows that do not overlap ([j, k) then [k', ...) with
 * k <= k') stall the iteration one after the other: their evictions fall
 * in disjoint stretches of time, so their excesses add up, and the floor
 * takes the most any set of them in one iteration gives (dynamic
 * programming over the windows' ends), where that beats the tightest
 * window alone. Only what stays on the GPU counts (host placement's tails
 * never migrate); freed data is discarded, never evicted; prefetches are
 * left out, so the floor is lower still than one that charged them.
 */
#ifndef UMKIT_FLOOR_H
#define UMKIT_FLOOR_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "access.h"
#include "tensor.h"
#include "vital.h"

/* A window of kernels from .. to (cyclic, to the iteration's positions):
 * the bytes it must evict, and the kernels' time before `to` in it. */
struct floor_window {
	uint32_t from, to;
	uint64_t evict_bytes, kernel_ns;
};

/* The most disjoint windows a floor keeps: past them the ones whose
 * excess is least are dropped, which only lowers the floor. */
#define FLOOR_MAX_WINDOWS 32

struct capacity_floor {
	uint64_t ns;          /* the floor: kernel_ns plus the windows' excess */
	uint64_t kernel_ns;   /* the kernels' recorded time, one after another */
	/* The tightest window alone (evict_bytes 0: none needs evicting; then
	 * the floor is kernel_ns). */
	uint32_t from, to;
	uint64_t evict_bytes, window_kernel_ns;
	/* Disjoint windows within the iteration (none wraps) whose excesses
	 * add up to more than the tightest window's: n_windows 0 when none
	 * do, and the floor is the tightest window's. */
	size_t n_windows;
	struct floor_window windows[FLOOR_MAX_WINDOWS];
	uint32_t starts_tried; /* window starts evaluated (every position, or
				  a stride of them past FLOOR_MAX_WORK) */
};

/* Past this many (start, end) pairs the window starts are strided: a
 * subset of windows still gives a floor, only a lower one. */
#define FLOOR_MAX_WORK (1ull << 24)

/*
 * The capacity floor of the iteration ts, a and v describe at capacity
 * bytes, with evictions at dtoh_bytes_per_s. Returns 0, or -1 when memory
 * ran out.
 */
int capacity_floor(const struct tensor_set *ts, const struct access_set *a, const struct vital *v,
		   uint64_t capacity, uint64_t dtoh_bytes_per_s, struct capacity_floor *out);

/* Adds f's fields to the JSON object o (--json, --simulate --json):
 * ns, kernel_ns, from, to, evict_bytes, window_kernel_ns, and windows: an
 * array of {from, to, evict_bytes, kernel_ns}, empty when the tightest
 * window alone sets the floor. False when memory ran out. */
bool capacity_floor_json(cJSON *o, const struct capacity_floor *f);

#endif
