/* report.c: the --report text and the --json summary (see report.h). */
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "floor.h"
#include "json_value.h"
#include "size.h"

#define SEGMENTS 10
#define LISTED_OPS 12
#define LISTED_UNFIT 8
#define LISTED_HOST 8

/* Figures both outputs share, computed once. */
struct facts {
	uint32_t p;
	uint64_t *live;            /* [p] allocated bytes per position */
	uint64_t live_peak, active_peak, ws_peak;
	uint32_t live_at, active_at, ws_at;
	uint64_t pers_bytes, iter_bytes;
	uint64_t block_refs;       /* blocks over all kernels' access sets */
	struct {
		uint32_t from, to;
		uint64_t live, active, planned;
		size_t ops[PLAN_OP_KIND_MAX + 1];
		uint64_t bytes[PLAN_OP_KIND_MAX + 1];
	} seg[SEGMENTS];
	size_t n_seg;
	size_t ops_by_kind[PLAN_OP_KIND_MAX + 1];
	/* Prefetches issued at the kernel that needs them (position =
	 * deadline): the model has that kernel start with the copy, so it
	 * waits for it. */
	size_t prefetches_at_use;
	uint64_t prefetch_bytes_at_use;
};

static int facts_build(const struct planner *pl, struct facts *f)
{
	memset(f, 0, sizeof *f);
	const struct tensor_set *ts = &pl->tensors;
	const struct sched_result *sr = &pl->sched;
	const uint32_t p = ts->n_pos;
	f->p = p;
	f->live = calloc(p, sizeof *f->live);
	int64_t *diff = calloc((size_t)p + 1, sizeof *diff);
	if (!f->live || !diff) {
		free(diff);
		free(f->live);
		return -1;
	}
	/* Live bytes by difference array over each cyclic lifetime. */
	for (size_t t = 0; t < ts->n; t++) {
		const struct tensor *x = &ts->t[t];
		if (x->origin == PLAN_ALLOC_PERSISTENT)
			f->pers_bytes += x->bytes;
		else if (x->origin == PLAN_ALLOC_ITERATION)
			f->iter_bytes += x->bytes;
		uint64_t a = x->alloc_pos, e = a + (x->live_len < p ? x->live_len : p);
		if (e <= p) {
			diff[a] += (int64_t)x->bytes;
			diff[e] -= (int64_t)x->bytes;
		} else {
			diff[a] += (int64_t)x->bytes;
			diff[p] -= (int64_t)x->bytes;
			diff[0] += (int64_t)x->bytes;
			diff[e - p] -= (int64_t)x->bytes;
		}
	}
	int64_t run = 0;
	for (uint32_t k = 0; k < p; k++) {
		run += diff[k];
		f->live[k] = (uint64_t)run;
		if (f->live[k] > f->live_peak) {
			f->live_peak = f->live[k];
			f->live_at = k;
		}
		if (sr->baseline[k] > f->active_peak) {
			f->active_peak = sr->baseline[k];
			f->active_at = k;
		}
		f->block_refs += pl->access.ws_blocks[k];
		if (pl->access.ws_bytes[k] > f->ws_peak) {
			f->ws_peak = pl->access.ws_bytes[k];
			f->ws_at = k;
		}
	}
	free(diff);
	f->n_seg = p < SEGMENTS ? p : SEGMENTS;
	for (size_t s = 0; s < f->n_seg; s++) {
		f->seg[s].from = (uint32_t)((uint64_t)p * s / f->n_seg);
		f->seg[s].to = (uint32_t)((uint64_t)p * (s + 1) / f->n_seg);
		for (uint32_t k = f->seg[s].from; k < f->seg[s].to; k++) {
			if (f->live[k] > f->seg[s].live)
				f->seg[s].live = f->live[k];
			if (sr->baseline[k] > f->seg[s].active)
				f->seg[s].active = sr->baseline[k];
			if (sr->residency[k] > f->seg[s].planned)
				f->seg[s].planned = sr->residency[k];
		}
	}
	const struct plan *plan = pl->plan;
	for (size_t i = 0; i < plan->n_ops; i++) {
		const struct plan_op *op = &plan->ops[i];
		/* The last segment whose first kernel is at or before the
		 * op's: the inverse of the boundaries' rounding above. */
		size_t s = (size_t)((((uint64_t)op->position + 1) * f->n_seg - 1) / p);
		f->seg[s].ops[op->kind]++;
		f->seg[s].bytes[op->kind] += op->bytes;
		f->ops_by_kind[op->kind]++;
		if (op->kind == PLAN_OP_PREFETCH && op->position == op->deadline) {
			f->prefetches_at_use++;
			f->prefetch_bytes_at_use += op->bytes;
		}
	}
	return 0;
}

static const char *size_str(uint64_t bytes, char *buf, size_t len)
{
	return um_size_format(bytes, buf, len);
}

static const char *capacity_source(const struct planner *pl, char *buf, size_t len)
{
	char held[32];
	switch (pl->capacity_source) {
	case PLANNER_CAPACITY_OPTION: return "--capacity";
	case PLANNER_CAPACITY_DEVICE:
		if (!pl->trace->driver_alloc_peak_bytes)
			return "the trace's device memory (default)";
		snprintf(buf, len, "the trace's device memory less the %s the program held past umkit (default)",
			 size_str(pl->trace->driver_alloc_peak_bytes, held, sizeof held));
		return buf;
	case PLANNER_CAPACITY_PEAK: return "unknown device memory: the unplanned peak (default)";
	}
	return "?";
}

static const char *kernel_name(const struct planner *pl, uint32_t pos)
{
	return trace_string(pl->trace, pl->trace->kernels[pl->tensors.first + pos].name);
}

static const char *method_words(const struct planner *pl, char *buf, size_t len)
{
	const struct iter_result *it = &pl->iter;
	switch (it->method) {
	case ITER_BY_NVTX:
		snprintf(buf, len, "by NVTX ranges named '%s'", it->nvtx_name);
		break;
	case ITER_BY_PERIOD:
		if (it->rotation > 1)
			snprintf(buf, len, "by the period of the execution-ID sequence (%zu kernels: "
				 "the IDs repeat every %zu, the persistent allocations they touch "
				 "every %zu)", it->period, it->period / it->rotation, it->period);
		else
			snprintf(buf, len, "by the period of the execution-ID sequence (%zu kernels)",
				 it->period);
		break;
	case ITER_WHOLE:
		snprintf(buf, len, "none repeats: the whole trace is planned as one iteration");
		break;
	}
	return buf;
}

/* Sizes that fit a 7-column table cell: "512B", "60M", "1.1G". */
static const char *compact_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "BKMGTP";
	double v = (double)bytes;
	int u = 0;
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v >= 10)
		snprintf(buf, len, "%.0f%c", v, units[u]);
	else
		snprintf(buf, len, "%.1f%c", v, units[u]);
	return buf;
}

static void print_hist(FILE *out, const char *label, const uint64_t *counts, const uint64_t *bytes)
{
	char b[32];
	fprintf(out, "  %-8s", label);
	for (int i = 0; i < VITAL_BUCKETS; i++)
		fprintf(out, " %7s", vital_bucket_name(i));
	fprintf(out, "\n  %-8s", "count");
	for (int i = 0; i < VITAL_BUCKETS; i++)
		fprintf(out, " %7llu", (unsigned long long)counts[i]);
	fprintf(out, "\n");
	if (!bytes)
		return;
	fprintf(out, "  %-8s", "bytes");
	for (int i = 0; i < VITAL_BUCKETS; i++)
		fprintf(out, " %7s", compact_size(bytes[i], b, sizeof b));
	fprintf(out, "\n");
}

/* The largest ops, for "what moves when": by bytes, then position. */
static int cmp_op_size(const void *a, const void *b, void *ctx)
{
	const struct plan_op *ops = ctx;
	const struct plan_op *x = &ops[*(const size_t *)a], *y = &ops[*(const size_t *)b];
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->position != y->position)
		return x->position < y->position ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

static size_t *largest_ops(const struct plan *plan, size_t *n)
{
	size_t m = 0;
	for (size_t i = 0; i < plan->n_ops; i++)
		m += plan->ops[i].kind == PLAN_OP_EVICT || plan->ops[i].kind == PLAN_OP_PREFETCH;
	size_t *idx = malloc((m ? m : 1) * sizeof *idx);
	if (!idx)
		return NULL;
	m = 0;
	for (size_t i = 0; i < plan->n_ops; i++)
		if (plan->ops[i].kind == PLAN_OP_EVICT || plan->ops[i].kind == PLAN_OP_PREFETCH)
			idx[m++] = i;
	qsort_r(idx, m, sizeof *idx, cmp_op_size, plan->ops);
	*n = m < LISTED_OPS ? m : LISTED_OPS;
	return idx;
}

/* Tensors kept on the host, most bytes there first, then tensor order. */
static int cmp_host_bytes(const void *a, const void *b, void *ctx)
{
	const struct tensor *t = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	uint64_t x = tensor_host_bytes(&t[i]), y = tensor_host_bytes(&t[j]);
	if (x != y)
		return x < y ? 1 : -1;
	return (i > j) - (i < j);
}

/* The floor set by disjoint windows (floor.h): how many, what they evict
 * in all and in how much of their kernels' time, and the tightest alone. */
static void report_windows(FILE *out, const struct capacity_floor *fl, uint64_t dtoh_bytes_per_s)
{
	char a[32], b[32];
	uint64_t bytes = 0, kernel_ns = 0;
	for (size_t i = 0; i < fl->n_windows; i++) {
		bytes += fl->windows[i].evict_bytes;
		kernel_ns += fl->windows[i].kernel_ns;
	}
	fprintf(out, "floor        %.3f ms an iteration, whatever the schedule: %zu stretches of kernels apart must\n"
		     "             evict %s in all first (%.3f ms at DtoH) in %.3f ms of their kernels; the tightest\n"
		     "             alone, kernels %u..%u, %s; the kernels alone take %.3f ms\n",
		fl->ns / 1e6, fl->n_windows, size_str(bytes, a, sizeof a), (double)bytes / (double)dtoh_bytes_per_s * 1e3,
		kernel_ns / 1e6, fl->from, fl->to, size_str(fl->evict_bytes, b, sizeof b), fl->kernel_ns / 1e6);
}

/* "  largest on the host:" and up to LISTED_HOST of them: how much of each
 * is there, from where, and how many kernels use it per iteration. */
static int list_host(const struct tensor_set *ts, const struct vital *v, FILE *out)
{
	size_t m = 0;
	for (size_t i = 0; i < ts->n; i++)
		m += ts->t[i].host;
	if (!m)
		return 0;
	size_t *idx = malloc(m * sizeof *idx);
	if (!idx)
		return -1;
	m = 0;
	for (size_t i = 0; i < ts->n; i++)
		if (ts->t[i].host)
			idx[m++] = i;
	qsort_r(idx, m, sizeof *idx, cmp_host_bytes, ts->t);
	fprintf(out, "  largest on the host:\n");
	for (size_t k = 0; k < m && k < LISTED_HOST; k++) {
		const struct tensor *t = &ts->t[idx[k]];
		char a[32], b[32], from[64] = "";
		if (t->host_offset)
			snprintf(from, sizeof from, " from byte %llu", (unsigned long long)t->host_offset);
		fprintf(out, "    %s allocation %llu  %10s of %s%s, %u uses per iteration\n",
			plan_alloc_origin_name(t->origin), (unsigned long long)t->ordinal,
			size_str(tensor_host_bytes(t), a, sizeof a), size_str(t->bytes, b, sizeof b),
			from, v->tv[idx[k]].n_uses);
	}
	if (m > LISTED_HOST)
		fprintf(out, "    ... and %zu more\n", m - LISTED_HOST);
	free(idx);
	return 0;
}

int report_text(const struct planner *pl, FILE *out)
{
	struct facts f;
	if (facts_build(pl, &f))
		return -1;
	const struct trace *t = pl->trace;
	const struct iter_result *it = &pl->iter;
	const struct tensor_set *ts = &pl->tensors;
	const struct access_set *ac = &pl->access;
	const struct vital *v = &pl->vital;
	const struct sched_result *sr = &pl->sched;
	const struct plan *plan = pl->plan;
	char a[32], b[32], c[32], words[160];

	fprintf(out, "umplan report: %s\n\n", t->path);
	fprintf(out, "device       %s, %s\n", t->device_name[0] ? t->device_name : "unknown",
		t->device_memory ? size_str(t->device_memory, a, sizeof a) : "memory unknown");
	fprintf(out, "trace        %zu kernels, %zu pointer arguments, %zu allocations, recording %s\n",
		t->n_kernels, t->n_args, t->n_allocs, t->status[0] ? t->status : "status unknown");
	fprintf(out, "             UM traffic recorded: %s to the GPU (%s on demand), %s to the host\n",
		size_str(t->htod_bytes, a, sizeof a), size_str(t->fault_bytes, b, sizeof b),
		size_str(t->dtoh_bytes, c, sizeof c));
	if (t->graph_kernels || t->unlaunched_kernels || t->untimed_kernels)
		fprintf(out, "             %zu kernels in CUDA graphs and %zu without a launch callback (not "
			"planned), %zu without GPU times\n",
			t->graph_kernels, t->unlaunched_kernels, t->untimed_kernels);
	if (t->after_reset_kernels)
		fprintf(out, "             %zu kernels launched after the program reset the device (not planned)\n",
			t->after_reset_kernels);
	if (t->other_context_kernels)
		fprintf(out, "             %zu kernels launched in another CUDA context than the arena's, another "
			"GPU's or one the program made (not planned)\n", t->other_context_kernels);
	if (t->runtime_allocs)
		fprintf(out, "             %" PRIu64 " allocations (%s) the runtime served in the arena's stead: "
			"not in the trace, not planned\n",
			t->runtime_allocs, size_str(t->runtime_alloc_bytes, a, sizeof a));
	if (t->driver_allocs)
		fprintf(out, "             %" PRIu64 " allocations (%s) made through the driver, past umkit's "
			"allocator: not in the trace, not planned\n",
			t->driver_allocs, size_str(t->driver_alloc_bytes, a, sizeof a));
	if (t->driver_managed_allocs)
		fprintf(out, "             %" PRIu64 " allocations (%s) of managed memory made through the driver, "
			"past umkit's allocator, at most %s held at once: not in the trace, not planned, not taken "
			"off the capacity\n",
			t->driver_managed_allocs, size_str(t->driver_managed_alloc_bytes, a, sizeof a),
			size_str(t->driver_managed_alloc_peak_bytes, b, sizeof b));
	if (t->framework_cache)
		fprintf(out, "             recorded with PyTorch's caching allocator on: the allocations are "
			"its segments, and umreplay keeps it on\n");
	if (t->launch_reordered)
		fprintf(out, "             some launch times run backwards (several launching threads?): "
			"positions follow launch order\n");
	fprintf(out, "iterations   %zu found %s\n", it->n_iters, method_words(pl, words, sizeof words));
	fprintf(out, "             %zu kernels of warm-up before the first (one-time work), %zu after the last\n",
		it->warmup, it->tail);
	const struct iter_span *sp = &it->iters[it->chosen];
	fprintf(out, "planned      iteration %zu: kernels %zu..%zu (%zu per iteration), %.3f ms, %s\n",
		it->chosen, sp->first, sp->first + sp->n - 1, sp->n, v->cycle_ns / 1e6,
		it->steady ? "steady (same kernels as the one before)"
		: it->n_differ ? "NOT steady (differs from the one before)"
			       : "not compared (no iteration before it)");
	if (it->n_differ) {
		fprintf(out, "             %zu of its positions hold another kernel call than the one before; ",
			it->n_differ);
		if (it->first_differ < sp->n)
			fprintf(out, "the first, %zu, is %s\n", it->first_differ,
				kernel_name(pl, (uint32_t)it->first_differ));
		else
			fprintf(out, "the one before has %zu more kernels\n",
				it->iters[it->chosen - 1].n - sp->n);
	}
	fprintf(out, "allocations  %zu persistent (%s), %zu made during the iteration (%s), %zu live across its end\n",
		ts->n_persistent - ts->n_previous, size_str(f.pers_bytes, a, sizeof a), ts->n_iteration,
		size_str(f.iter_bytes, b, sizeof b), ts->wrapping);
	if (ts->prev_matched)
		fprintf(out, "             %zu previous-iteration instances matched by ordinal\n",
			ts->prev_matched);
	if (t->n_managed_allocs)
		fprintf(out, "             %zu of the trace's are the program's own managed memory (cudaMallocManaged): "
			"the host may write it, so it is never discarded while it lives (a birth where capacity "
			"binds gets a plain prefetch)\n",
			t->n_managed_allocs);
	if (ts->overlapping)
		fprintf(out, "             %zu whose previous instance is freed after they are made (%s), %zu of them "
			"still used meanwhile: those instances are planned as tensors of their own\n",
			ts->overlapping, size_str(ts->overlapping_bytes, a, sizeof a), ts->outliving);

	fprintf(out, "\naccess sets  %.2f tensors and %.1f blocks per kernel; %zu accesses added from observed migrations/faults\n",
		(double)ac->n_refs / f.p, (double)f.block_refs / f.p, ac->observed_added);
	if (ac->refs_unmapped)
		fprintf(out, "             %zu pointer arguments name no live allocation (stale words): ignored\n",
			ac->refs_unmapped);
	double recall = access_recall(ac);
	if (recall < 0)
		fprintf(out, "recall       no on-demand migrations in the trace to compare with\n");
	else
		fprintf(out, "recall       %.1f%% of %zu (kernel, 2 MB block) on-demand migrations lie in the argument-based sets\n",
			100 * recall, ac->fault_pairs);

	fprintf(out, "\nmemory over the iteration\n");
	fprintf(out, "  live (allocated)        peak %s before kernel %u (%s)\n",
		size_str(f.live_peak, a, sizeof a), f.live_at, kernel_name(pl, f.live_at));
	fprintf(out, "  active (first to last use) peak %s at kernel %u (%s)\n",
		size_str(f.active_peak, a, sizeof a), f.active_at, kernel_name(pl, f.active_at));
	fprintf(out, "  one kernel's working set peak %s at kernel %u (%s)\n",
		size_str(f.ws_peak, a, sizeof a), f.ws_at, kernel_name(pl, f.ws_at));
	fprintf(out, "  %-15s %11s %11s %11s  %s\n", "kernels", "live", "active", "planned", "ops (evict/prefetch/discard/fresh)");
	for (size_t s = 0; s < f.n_seg; s++) {
		char range[32];
		snprintf(range, sizeof range, "%u..%u", f.seg[s].from, f.seg[s].to - 1);
		fprintf(out, "  %-15s %11s %11s %11s  %zu/%zu/%zu/%zu\n", range,
			size_str(f.seg[s].live, a, sizeof a), size_str(f.seg[s].active, b, sizeof b),
			size_str(f.seg[s].planned, c, sizeof c), f.seg[s].ops[PLAN_OP_EVICT],
			f.seg[s].ops[PLAN_OP_PREFETCH], f.seg[s].ops[PLAN_OP_DISCARD],
			f.seg[s].ops[PLAN_OP_DISCARD_PREFETCH]);
	}

	fprintf(out, "\ninactive periods (idle time between uses; %zu periods, %zu deaths)\n",
		v->n_periods, v->deaths);
	print_hist(out, "tensors", v->tensor_hist, v->tensor_hist_bytes);
	print_hist(out, "blocks", v->block_hist, NULL);
	fprintf(out, "  (%llu distinct 2 MB blocks in use)\n", (unsigned long long)v->n_blocks);

	fprintf(out, "\ncapacity     %s, from %s", size_str(plan->assume.capacity_bytes, a, sizeof a),
		capacity_source(pl, words, sizeof words));
	if (pl->budget > plan->assume.capacity_bytes)
		fprintf(out, ": %s less %u %% headroom", size_str(pl->budget, b, sizeof b),
			(unsigned)pl->opt.headroom_pct);
	fputc('\n', out);
	fprintf(out, "links        HtoD %.1f GB/s, DtoH %.1f GB/s, %.3f ms per call\n",
		plan->assume.htod_bytes_per_s / 1e9, plan->assume.dtoh_bytes_per_s / 1e9,
		plan->assume.call_cost_ns / 1e6);
	const struct capacity_floor *fl = &pl->floor;
	if (fl->ns == UINT64_MAX)
		fprintf(out, "floor        without end: kernels %u..%u must evict %s, more than the link carries\n",
			fl->from, fl->to, size_str(fl->evict_bytes, a, sizeof a));
	else if (fl->n_windows)
		report_windows(out, fl, plan->assume.dtoh_bytes_per_s);
	else if (fl->evict_bytes)
		fprintf(out, "floor        %.3f ms an iteration, whatever the schedule: kernels %u..%u must evict %s first\n"
			     "             (%.3f ms at DtoH) in %.3f ms of kernels; the kernels alone take %.3f ms\n",
			fl->ns / 1e6, fl->from, fl->to, size_str(fl->evict_bytes, a, sizeof a),
			(fl->ns - fl->kernel_ns + fl->window_kernel_ns) / 1e6, fl->window_kernel_ns / 1e6,
			fl->kernel_ns / 1e6);
	else
		fprintf(out, "floor        %.3f ms an iteration, the kernels alone: no stretch of them needs an eviction\n",
			fl->ns / 1e6);
	fprintf(out, "plan moves   %zu evictions (%s to the host), %zu prefetches (%s to the GPU)\n",
		f.ops_by_kind[PLAN_OP_EVICT], size_str(sr->evict_bytes, a, sizeof a),
		f.ops_by_kind[PLAN_OP_PREFETCH], size_str(sr->prefetch_bytes, b, sizeof b));
	if (sr->tail_evict_bytes)
		fprintf(out, "             %s of it past a tensor's last use, before the program frees it: copied,\n"
			     "             never read back (freed at the last use, it would be discarded)\n",
			size_str(sr->tail_evict_bytes, a, sizeof a));
	fprintf(out, "             %zu discards at deaths (%s never copied), %zu fresh allocations discard-prefetched (%s)\n",
		f.ops_by_kind[PLAN_OP_DISCARD], size_str(sr->discard_bytes, a, sizeof a),
		f.ops_by_kind[PLAN_OP_DISCARD_PREFETCH], size_str(sr->discard_prefetch_bytes, b, sizeof b));
	/* One link: the driver migrates one way at a time (sched.h). */
	double dtoh = 100.0 * sr->dtoh_busy_ns / v->cycle_ns, htod = 100.0 * sr->htod_busy_ns / v->cycle_ns;
	fprintf(out, "             link busy %.1f%% of the iteration (DtoH %.1f%%, HtoD %.1f%%)%s\n", dtoh + htod,
		dtoh, htod, dtoh + htod > 100 ? ": more than it can carry, expect stalls" : "");
	if (sr->stall_ns == UINT64_MAX) /* a transfer that never ends (sched.c) */
		snprintf(words, sizeof words, "stall without end: the links cannot carry a transfer");
	else
		snprintf(words, sizeof words, "stall about %.3f ms", sr->stall_ns / 1e6);
	fprintf(out, "             %zu evictions not hidden behind computation (%s), %zu dropped as unnecessary\n",
		sr->forced, words, sr->dropped);
	if (sr->smart_left_out) { /* sched.h: the schedule without smart eviction */
		if (sr->smart_stall_ns == UINT64_MAX)
			snprintf(words, sizeof words, "a stall without end");
		else
			snprintf(words, sizeof words, "a stall of about %.3f ms", sr->smart_stall_ns / 1e6);
		fprintf(out, "             smart eviction left out: the schedule with it predicted %s\n", words);
	}
	if (f.prefetches_at_use)
		fprintf(out, "             %zu prefetches (%s, %.0f%% of the bytes prefetched) issued at the kernel that needs them "
			"(no room or link time earlier): umreplay has that kernel wait for the copy\n",
			f.prefetches_at_use, size_str(f.prefetch_bytes_at_use, a, sizeof a),
			100.0 * (double)f.prefetch_bytes_at_use / (double)sr->prefetch_bytes);
	if (sr->late_prefetches)
		fprintf(out, "             %zu prefetches (%s) land, by the model, after the kernel that needs them "
			"starts (those issued at it among them): where a replay's faults are likeliest\n",
			sr->late_prefetches, size_str(sr->late_prefetch_bytes, a, sizeof a));
	size_t n_listed = 0;
	size_t *idx = largest_ops(plan, &n_listed);
	if (!idx)
		goto oom;
	if (n_listed)
		fprintf(out, "  largest transfers:\n");
	for (size_t i = 0; i < n_listed; i++) {
		const struct plan_op *op = &plan->ops[idx[i]];
		const struct plan_alloc *al = &plan->allocs[op->alloc];
		/* Across the iteration's end (plan.h): an eviction after a
		 * kernel at or past its own position waits for that kernel's
		 * launch in the previous iteration, and a prefetch for one
		 * before it is for the next iteration's. */
		char when[64];
		if (op->kind == PLAN_OP_EVICT && op->after == PLAN_POS_NONE)
			snprintf(when, sizeof when, "(unused)");
		else if (op->kind == PLAN_OP_EVICT)
			snprintf(when, sizeof when, "after kernel %u%s", op->after,
				 op->after >= op->position ? " of the previous iteration" : "");
		else
			snprintf(when, sizeof when, "for kernel %u%s", op->deadline,
				 op->deadline < op->position ? " of the next iteration" : "");
		fprintf(out, "    kernel %6u %-9s %10s  %s allocation %llu  %s\n", op->position,
			plan_op_kind_name(op->kind), size_str(op->bytes, a, sizeof a),
			plan_alloc_origin_name(al->origin), (unsigned long long)al->ordinal, when);
	}
	free(idx);

	if (plan->n_host) {
		uint32_t partial = 0;
		for (uint32_t i = 0; plan->host_offset && i < plan->n_host; i++)
			partial += plan->host_offset[i] != 0;
		if (partial)
			snprintf(words, sizeof words, "; of %u only the tail, the rest resident", partial);
		fprintf(out, "\nhost         %u tensors (%s%s) stay in host memory, mapped for the GPU: "
			"their kernels' passes cost at most about %.3f ms per iteration\n", plan->n_host,
			size_str(pl->host_bytes, a, sizeof a), partial ? words : "",
			(double)pl->host_ns / 1e6);
		if (list_host(ts, v, out))
			goto oom;
	}
	fprintf(out, "\npredicted    peak residency %s of %s capacity (%s counting evictions in flight; %s without a plan)\n",
		size_str(sr->peak, a, sizeof a), size_str(plan->assume.capacity_bytes, b, sizeof b),
		size_str(sr->inflight_peak, c, sizeof c), size_str(sr->baseline_peak, words, sizeof words));
	if (!sr->n_unfit)
		fprintf(out, "cannot fit   none: every kernel's working set fits the capacity\n");
	else
		fprintf(out, "cannot fit   %zu kernels need more than the capacity on their own:\n", sr->n_unfit);
	for (size_t i = 0; i < sr->n_unfit && i < LISTED_UNFIT; i++) {
		uint32_t k = sr->unfit[i];
		fprintf(out, "    kernel %u (%s) uses %s\n", k, kernel_name(pl, k),
			size_str(ac->ws_bytes[k], a, sizeof a));
	}
	if (sr->n_unfit > LISTED_UNFIT)
		fprintf(out, "    ... and %zu more\n", sr->n_unfit - LISTED_UNFIT);
	free(f.live);
	return ferror(out) ? -1 : 0;
oom:
	free(f.live);
	return -1;
}

/* Text from the trace (a path, names). */
static void add_text(cJSON *o, const char *key, const char *s)
{
	json_add(o, key, json_text(s));
}

static cJSON *hist_json(const uint64_t *counts)
{
	cJSON *h = cJSON_CreateObject();
	for (int i = 0; h && i < VITAL_BUCKETS; i++)
		json_add_u64(h, vital_bucket_name(i), counts[i]);
	return h;
}

cJSON *report_json(const struct planner *pl)
{
	struct facts f;
	if (facts_build(pl, &f))
		return NULL;
	const struct trace *t = pl->trace;
	const struct iter_result *it = &pl->iter;
	const struct tensor_set *ts = &pl->tensors;
	const struct access_set *ac = &pl->access;
	const struct vital *v = &pl->vital;
	const struct sched_result *sr = &pl->sched;
	const struct plan *plan = pl->plan;
	cJSON *root = cJSON_CreateObject();
	cJSON *o;

	o = cJSON_AddObjectToObject(root, "trace");
	add_text(o, "path", t->path);
	add_text(o, "device_name", t->device_name);
	json_add_u64(o, "device_memory", t->device_memory);
	add_text(o, "status", t->status);
	json_add_u64(o, "kernels", t->n_kernels);
	json_add_u64(o, "graph_kernels", t->graph_kernels);
	json_add_u64(o, "unlaunched_kernels", t->unlaunched_kernels);
	json_add_u64(o, "after_reset_kernels", t->after_reset_kernels);
	json_add_u64(o, "other_context_kernels", t->other_context_kernels);
	json_add_u64(o, "untimed_kernels", t->untimed_kernels);
	json_add_u64(o, "allocations", t->n_allocs);
	json_add_u64(o, "managed_allocations", t->n_managed_allocs);
	json_add_u64(o, "runtime_allocations", t->runtime_allocs);
	json_add_u64(o, "runtime_allocation_bytes", t->runtime_alloc_bytes);
	json_add_u64(o, "driver_allocations", t->driver_allocs);
	json_add_u64(o, "driver_allocation_bytes", t->driver_alloc_bytes);
	json_add_u64(o, "driver_allocation_peak_bytes", t->driver_alloc_peak_bytes);
	json_add_u64(o, "driver_managed_allocations", t->driver_managed_allocs);
	json_add_u64(o, "driver_managed_allocation_bytes", t->driver_managed_alloc_bytes);
	json_add_u64(o, "driver_managed_allocation_peak_bytes", t->driver_managed_alloc_peak_bytes);
	json_add_u64(o, "pointer_arguments", t->n_args);
	json_add_u64(o, "htod_bytes", t->htod_bytes);
	json_add_u64(o, "dtoh_bytes", t->dtoh_bytes);
	json_add_u64(o, "fault_bytes", t->fault_bytes);
	cJSON_AddBoolToObject(o, "launch_reordered", t->launch_reordered);
	cJSON_AddBoolToObject(o, "framework_cache", t->framework_cache);

	o = cJSON_AddObjectToObject(root, "iterations");
	cJSON_AddStringToObject(o, "method", iter_method_name(it->method));
	if (it->method == ITER_BY_NVTX)
		add_text(o, "nvtx_name", it->nvtx_name);
	json_add_u64(o, "count", it->n_iters);
	json_add_u64(o, "period", it->period);
	json_add_u64(o, "rotation", it->rotation);
	json_add_u64(o, "warmup_kernels", it->warmup);
	json_add_u64(o, "tail_kernels", it->tail);
	json_add_u64(o, "chosen", it->chosen);
	cJSON_AddBoolToObject(o, "steady", it->steady);
	json_add_u64(o, "positions_differing", it->n_differ);
	json_add_u64(o, "first_kernel", it->iters[it->chosen].first);
	json_add_u64(o, "kernels", it->iters[it->chosen].n);
	json_add_u64(o, "iteration_ns", v->cycle_ns);

	o = cJSON_AddObjectToObject(root, "allocations");
	json_add_u64(o, "persistent", ts->n_persistent - ts->n_previous);
	json_add_u64(o, "persistent_bytes", f.pers_bytes);
	json_add_u64(o, "iteration", ts->n_iteration);
	json_add_u64(o, "iteration_bytes", f.iter_bytes);
	json_add_u64(o, "live_across_end", ts->wrapping);
	json_add_u64(o, "previous_instances_matched", ts->prev_matched);
	json_add_u64(o, "previous_instance_used_after", ts->outliving);
	json_add_u64(o, "previous_instance_freed_after", ts->overlapping);
	json_add_u64(o, "previous_instance_freed_after_bytes", ts->overlapping_bytes);
	json_add_u64(o, "previous_instance_freed_after_next", ts->beyond_next);

	o = cJSON_AddObjectToObject(root, "access");
	json_add_u64(o, "uses", ac->n_refs);
	json_add_u64(o, "observed_added", ac->observed_added);
	json_add_u64(o, "unmapped_refs", ac->refs_unmapped);
	json_add_u64(o, "fault_pairs", ac->fault_pairs);
	json_add_u64(o, "fault_pairs_covered", ac->fault_pairs_covered);
	double recall = access_recall(ac);
	if (recall < 0)
		cJSON_AddNullToObject(o, "recall");
	else
		cJSON_AddNumberToObject(o, "recall", recall);

	o = cJSON_AddObjectToObject(root, "memory");
	json_add_u64(o, "live_peak", f.live_peak);
	json_add_u64(o, "live_peak_kernel", f.live_at);
	json_add_u64(o, "active_peak", f.active_peak);
	json_add_u64(o, "active_peak_kernel", f.active_at);
	json_add_u64(o, "working_set_peak", f.ws_peak);
	json_add_u64(o, "working_set_peak_kernel", f.ws_at);
	cJSON *segs = cJSON_AddArrayToObject(o, "segments");
	for (size_t s = 0; segs && s < f.n_seg; s++) {
		cJSON *e = cJSON_CreateObject();
		if (!e)
			break;
		json_add_u64(e, "first_kernel", f.seg[s].from);
		json_add_u64(e, "last_kernel", f.seg[s].to - 1);
		json_add_u64(e, "live_peak", f.seg[s].live);
		json_add_u64(e, "active_peak", f.seg[s].active);
		json_add_u64(e, "planned_peak", f.seg[s].planned);
		for (int k = PLAN_OP_KIND_MIN; k <= PLAN_OP_KIND_MAX; k++)
			json_add_u64(e, plan_op_kind_name((uint8_t)k), f.seg[s].ops[k]);
		cJSON_AddItemToArray(segs, e);
	}

	o = cJSON_AddObjectToObject(root, "inactive_periods");
	json_add_u64(o, "periods", v->n_periods);
	json_add_u64(o, "deaths", v->deaths);
	json_add_u64(o, "blocks", v->n_blocks);
	cJSON_AddItemToObject(o, "tensors", hist_json(v->tensor_hist));
	cJSON_AddItemToObject(o, "tensor_bytes", hist_json(v->tensor_hist_bytes));
	cJSON_AddItemToObject(o, "blocks_by_length", hist_json(v->block_hist));

	o = cJSON_AddObjectToObject(root, "plan");
	json_add_u64(o, "capacity", plan->assume.capacity_bytes);
	json_add_u64(o, "capacity_before_headroom", pl->budget);
	cJSON_AddStringToObject(o, "capacity_source",
				pl->capacity_source == PLANNER_CAPACITY_OPTION ? "option"
				: pl->capacity_source == PLANNER_CAPACITY_DEVICE ? "device" : "peak");
	json_add_u64(o, "htod_bytes_per_s", plan->assume.htod_bytes_per_s);
	json_add_u64(o, "dtoh_bytes_per_s", plan->assume.dtoh_bytes_per_s);
	json_add_u64(o, "call_cost_ns", plan->assume.call_cost_ns);
	for (int k = PLAN_OP_KIND_MIN; k <= PLAN_OP_KIND_MAX; k++)
		json_add_u64(o, plan_op_kind_name((uint8_t)k), f.ops_by_kind[k]);
	json_add_u64(o, "evict_bytes", sr->evict_bytes);
	json_add_u64(o, "tail_evict_bytes", sr->tail_evict_bytes);
	json_add_u64(o, "prefetch_bytes", sr->prefetch_bytes);
	json_add_u64(o, "discard_bytes", sr->discard_bytes);
	json_add_u64(o, "discard_prefetch_bytes", sr->discard_prefetch_bytes);
	json_add_u64(o, "evictions_not_hidden", sr->forced);
	json_add_u64(o, "evictions_dropped", sr->dropped);
	json_add_u64(o, "prefetches_at_use", f.prefetches_at_use);
	json_add_u64(o, "prefetch_bytes_at_use", f.prefetch_bytes_at_use);
	json_add_u64(o, "late_prefetches", sr->late_prefetches);
	json_add_u64(o, "late_prefetch_bytes", sr->late_prefetch_bytes);
	json_add_u64(o, "dtoh_busy_ns", sr->dtoh_busy_ns);
	json_add_u64(o, "htod_busy_ns", sr->htod_busy_ns);
	json_add_u64(o, "stall_ns", sr->stall_ns);
	cJSON_AddBoolToObject(o, "smart_eviction_left_out", sr->smart_left_out);
	json_add_u64(o, "stall_ns_with_smart_eviction", sr->smart_left_out ? sr->smart_stall_ns : sr->stall_ns);
	json_add_u64(o, "host_tensors", plan->n_host);
	json_add_u64(o, "host_bytes", pl->host_bytes);
	json_add_u64(o, "host_pass_ns", pl->host_ns);
	json_add_u64(o, "baseline_peak", sr->baseline_peak);
	json_add_u64(o, "predicted_peak", sr->peak);
	json_add_u64(o, "predicted_peak_inflight", sr->inflight_peak);
	json_add_u64(o, "predicted_iteration_ns", plan->predict.iteration_ns);
	cJSON *fl = cJSON_AddObjectToObject(o, "capacity_floor");
	if (fl)
		capacity_floor_json(fl, &pl->floor);
	cJSON *unfit = cJSON_AddArrayToObject(o, "unfit_kernels");
	for (size_t i = 0; unfit && i < sr->n_unfit; i++)
		cJSON_AddItemToArray(unfit, cJSON_CreateNumber(sr->unfit[i]));
	free(f.live);
	return root;
}
