/* stats.c: the statistics file (see stats.h; keys in docs/replay.md). */
#include "stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "replace_file.h"
#include "search.h"

#define STATS_FORMAT_VERSION 1

/* The batch kinds' JSON names, by enum engine_op. */
static const char *const op_keys[4] = { "prefetch", "evict", "discard", "discard_prefetch" };

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void put_u64(FILE *f, const char *key, uint64_t v, const char *after)
{
	fprintf(f, "\"%s\": %llu%s", key, (unsigned long long)v, after);
}

static void put_array(FILE *f, const uint64_t *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
	fputc(']', f);
}

static void put_engine(FILE *f, const struct engine_stats *s)
{
	fputs("  \"engine\": {\n    ", f);
	put_u64(f, "launches", s->launches, ", ");
	put_u64(f, "matched", s->matched, ", ");
	put_u64(f, "matched_by_shape", s->shaped, ", ");
	put_u64(f, "resynced", s->resynced, ", ");
	put_u64(f, "lost", s->lost, ", ");
	put_u64(f, "ring_moves", s->ring_moves, ",\n    ");
	put_u64(f, "iterations", s->iterations, ", ");
	fprintf(f, "\"signature_mismatch\": %s,\n    \"ops\": {",
		s->signature_mismatch ? "true" : "false");
	for (int k = 0; k < 4; k++)
		fprintf(f, "%s\n      \"%s\": {\"calls\": %llu, \"bytes\": %llu}", k ? "," : "",
			op_keys[k], (unsigned long long)s->ops[k], (unsigned long long)s->bytes[k]);
	fputs("\n    },\n    ", f);
	put_u64(f, "budget_evictions", s->budget_evictions, ", ");
	put_u64(f, "discards_beside_evictions", s->discards_beside_evictions, ", ");
	put_u64(f, "budget_overruns", s->budget_overruns, ", ");
	put_u64(f, "refault_blocks", s->refault_blocks, ", ");
	put_u64(f, "refault_budget_blocks", s->refault_budget_blocks, ", ");
	put_u64(f, "refault_shared_blocks", s->refault_shared_blocks, ",\n    ");
	put_u64(f, "unread_evicted_blocks", s->unread_evicted_blocks, ", ");
	put_u64(f, "unread_evicted_budget_blocks", s->unread_evicted_budget_blocks, ",\n    ");
	put_u64(f, "skipped_discards", s->skipped_discards, ", ");
	put_u64(f, "unmodelled_allocs", s->unmodelled_allocs, ",\n    ");
	put_u64(f, "corr_launches", s->corr_launches, ", ");
	put_u64(f, "placed_on_host", s->host_allocs, ", ");
	put_u64(f, "placed_on_host_bytes", s->host_bytes, ",\n    ");
	put_u64(f, "modelled_peak_bytes", s->modelled_peak_bytes, ",\n    ");
	fprintf(f, "\"started_idle\": %s, ", s->started_idle ? "true" : "false");
	put_u64(f, "woke_at_alloc", s->woke_at_alloc, ", ");
	put_u64(f, "wake_deferrals", s->wake_deferrals, ", ");
	put_u64(f, "gated_launches", s->gated_launches, ", ");
	put_u64(f, "late_gated_launches", s->late_gated_launches, ", ");
	put_u64(f, "unissued_blocks", s->unissued_blocks, "\n  },\n");
}

static void put_fault_sources(FILE *f, const struct replay_measured *m)
{
	fputs("    \"fault_sources\": {", f);
	put_u64(f, "migrations", m->fault_window_migrations, ", ");
	put_u64(f, "unattributed", m->fault_totals.unattributed, ", ");
	put_u64(f, "by_launch", m->fault_totals.by_launch, ", ");
	put_u64(f, "owner_changed", m->fault_totals.owner_changed, ", ");
	put_u64(f, "sources", m->fault_totals.sources, ", \"top\": [");
	for (size_t i = 0; i < m->n_fault_sources; i++) {
		const struct fault_source *s = &m->fault_sources[i];
		fprintf(f, "%s\n      {\"origin\": \"%s\", ", i ? "," : "",
			s->origin == PLAN_ALLOC_ITERATION ? "iteration" : "persistent");
		put_u64(f, "ordinal", s->ordinal, ", ");
		put_u64(f, "alloc_id", s->alloc_id, ", ");
		put_u64(f, "size", s->size, ", ");
		if (s->plan_alloc >= 0)
			fprintf(f, "\"plan_alloc\": %d, ", (int)s->plan_alloc);
		else
			fputs("\"plan_alloc\": null, ", f);
		put_u64(f, "migrations", s->migrations, ", ");
		put_u64(f, "bytes", s->bytes, "}");
	}
	fputs(m->n_fault_sources ? "\n    ]},\n" : "]},\n", f);
}

static void put_lost_kernels(FILE *f, const struct replay_measured *m)
{
	fputs("    \"lost_kernels\": {", f);
	put_u64(f, "launches", m->lost_totals.launches, ", ");
	put_u64(f, "distinct", m->lost_totals.distinct, ", \"top\": [");
	for (size_t i = 0; i < m->n_lost_kernels; i++)
		fprintf(f, "%s\n      {\"exec_id\": \"0x%016llx\", \"launches\": %llu}", i ? "," : "",
			(unsigned long long)m->lost_kernels[i].exec_id,
			(unsigned long long)m->lost_kernels[i].launches);
	fputs(m->n_lost_kernels ? "\n    ]},\n" : "]},\n", f);
}

static void put_measured(FILE *f, const struct replay_measured *m)
{
	if (!m) {
		fputs("  \"measured\": null\n", f);
		return;
	}
	static const char *const spans[] = { "whole run", "from the wake", "none: idle throughout" };
	fputs("  \"measured\": {\n    ", f);
	put_u64(f, "wall_ns", m->wall_ns, ", ");
	fprintf(f, "\"traffic_counted\": \"%s\",\n    ", spans[m->counted]);
	put_u64(f, "htod_bytes", m->htod_bytes, ", ");
	put_u64(f, "dtoh_bytes", m->dtoh_bytes, ",\n    ");
	put_u64(f, "fault_migrations", m->fault_migrations, ", ");
	put_u64(f, "fault_bytes", m->fault_bytes, ", ");
	put_u64(f, "fault_records", m->fault_records, ",\n    ");
	put_u64(f, "speculative_migrations", m->speculative_migrations, ", ");
	put_u64(f, "speculative_bytes", m->speculative_bytes, ",\n");
	put_fault_sources(f, m);
	put_lost_kernels(f, m);
	fputs("    ", f);
	put_u64(f, "peak_residency_bytes", m->peak_residency_bytes, ", ");
	put_u64(f, "budget_bytes", m->budget_bytes, ", ");
	put_u64(f, "dropped_discards", m->dropped_discards, ", ");
	put_u64(f, "fresh_prefetched", m->fresh_prefetched, ", ");
	put_u64(f, "failed_driver_calls", m->failed_driver_calls, ", ");
	put_u64(f, "dropped_records", m->dropped_records, ", ");
	fprintf(f, "\"kernel_times\": %s, ", m->kernels_timed ? "true" : "false");
	fprintf(f, "\"stopped_at_graph\": %s, ", m->stopped_at_graph ? "true" : "false");
	fprintf(f, "\"stopped_at_device_reset\": %s, ", m->stopped_at_reset ? "true" : "false");
	put_u64(f, "other_context_launches", m->other_context_launches, ",\n    \"host\": {");
	put_u64(f, "callback_ns", m->callback_ns, ", ");
	put_u64(f, "executor_ns", m->executor_ns, ", ");
	put_u64(f, "discard_waits", m->discard_waits, ", ");
	put_u64(f, "discard_wait_ns", m->discard_wait_ns, ", ");
	put_u64(f, "migration_queue_peak", m->migration_queue_peak, ",\n      ");
	put_u64(f, "room_waits", m->room_waits, ", ");
	put_u64(f, "room_waits_expired", m->room_waits_expired, ", ");
	put_u64(f, "room_wait_ns", m->room_wait_ns, ", ");
	put_u64(f, "discard_prefetches_ahead", m->discard_prefetches_ahead, ", ");
	put_u64(f, "discard_prefetches_ahead_in_part", m->discard_prefetches_ahead_in_part, ", ");
	put_u64(f, "discards_ahead", m->discards_ahead, ",\n      ");
	fprintf(f, "\"markers\": {\"recorded\": %llu, \"ns\": %llu}, ", (unsigned long long)m->markers,
		(unsigned long long)m->marker_ns);
	fprintf(f, "\"prefetch_gates\": {\"waits\": %llu, \"unissued\": %llu, \"ns\": %llu, ",
		(unsigned long long)m->gate_waits, (unsigned long long)m->gates_unissued,
		(unsigned long long)m->gate_ns);
	fprintf(f, "\"issue_waits\": %llu, \"issue_waits_expired\": %llu, \"issue_wait_ns\": %llu},\n      \"allocator\": {",
		(unsigned long long)m->issue_waits, (unsigned long long)m->issue_waits_expired,
		(unsigned long long)m->issue_wait_ns);
	put_u64(f, "allocs", m->allocator.allocs, ", ");
	put_u64(f, "frees", m->allocator.frees, ", ");
	put_u64(f, "ns", m->allocator.ns, ", ");
	put_u64(f, "fence_waits", m->allocator.fence_waits, ", ");
	put_u64(f, "fence_wait_ns", m->allocator.fence_wait_ns, ", ");
	put_u64(f, "fence_orders", m->allocator.fence_orders, ", ");
	put_u64(f, "fence_refusals", m->allocator.fence_refusals, ", ");
	put_u64(f, "last_resort_waits", m->allocator.last_resort_waits, ", ");
	put_u64(f, "runtime_allocs", m->allocator.runtime_allocs, ", ");
	put_u64(f, "runtime_bytes", m->allocator.runtime_bytes, ", ");
	put_u64(f, "driver_allocs", m->allocator.driver_allocs, ", ");
	put_u64(f, "driver_bytes", m->allocator.driver_bytes, ", ");
	put_u64(f, "driver_peak_bytes", m->allocator.driver_peak_bytes, ", ");
	put_u64(f, "driver_managed_allocs", m->allocator.driver_managed_allocs, ", ");
	put_u64(f, "driver_managed_bytes", m->allocator.driver_managed_bytes, ", ");
	put_u64(f, "driver_managed_peak_bytes", m->allocator.driver_managed_peak_bytes, ", ");
	fprintf(f, "\"one_stream\": %s},\n      \"driver_calls\": {", m->allocator.one_stream ? "true" : "false");
	for (int k = 0; k < 4; k++)
		fprintf(f, "%s\n        \"%s\": {\"calls\": %llu, \"ns\": %llu}", k ? "," : "", op_keys[k],
			(unsigned long long)m->driver_calls[k], (unsigned long long)m->driver_call_ns[k]);
	fputs("\n      }\n    },\n    \"iterations\": [", f);
	bool have = m->iterations && m->n_iterations;
	for (size_t i = 0; have && i < m->n_iterations; i++) {
		const struct replay_iteration *it = &m->iterations[i];
		fprintf(f, "%s\n      {", i ? "," : "");
		put_u64(f, "fault_migrations", it->fault_migrations, ", ");
		put_u64(f, "speculative_migrations", it->speculative_migrations, ", ");
		put_u64(f, "htod_bytes", it->htod_bytes, ", ");
		put_u64(f, "dtoh_bytes", it->dtoh_bytes, ", ");
		put_u64(f, "callback_ns", it->callback_ns, ", ");
		put_u64(f, "allocator_ns", it->allocator_ns, ", ");
		put_u64(f, "resynced", it->resynced, ", ");
		put_u64(f, "lost", it->lost, ", ");
		put_u64(f, "refault_blocks", it->refault_blocks, ", ");
		put_u64(f, "unissued_blocks", it->unissued_blocks, ", ");
		put_u64(f, "unread_evicted_blocks", it->unread_evicted_blocks, ",\n       ");
		put_u64(f, "htod_busy_ns", it->htod_busy_ns, ", ");
		put_u64(f, "dtoh_busy_ns", it->dtoh_busy_ns, ", ");
		if (m->kernels_timed)
			put_u64(f, "kernel_busy_ns", it->kernel_busy_ns, "}");
		else
			fputs("\"kernel_busy_ns\": null}", f);
	}
	fputs(have ? "\n    ]\n  }\n" : "]\n  }\n", f);
}

bool replay_stats_median(const uint64_t *v, size_t n, uint64_t *out)
{
	uint64_t *sorted = n ? malloc(n * sizeof *sorted) : NULL;
	if (!sorted)
		return false;
	memcpy(sorted, v, n * sizeof *sorted);
	qsort(sorted, n, sizeof *sorted, compare_u64);
	*out = sorted[n / 2];
	free(sorted);
	return true;
}

const char *replay_stats_median_text(char *buf, size_t len, const uint64_t *v, size_t n)
{
	uint64_t median;
	if (replay_stats_median(v, n, &median))
		snprintf(buf, len, "median %.2f ms", median / 1e6);
	else
		snprintf(buf, len, "no median");
	return buf;
}

int replay_stats_write_json(FILE *f, const char *policy, const struct engine_stats *s,
			    const uint64_t *iter_ns, size_t n_iters, const struct replay_measured *m)
{
	uint64_t median;
	bool have_median = replay_stats_median(iter_ns, n_iters, &median);
	if (n_iters && !have_median)
		return -1;
	fprintf(f, "{\n  \"format\": \"" REPLAY_STATS_FORMAT "\", \"format_version\": %d,\n"
		   "  \"umkit_version\": ",
		STATS_FORMAT_VERSION);
	put_string(f, UMKIT_VERSION);
	fputs(", \"policy\": ", f);
	put_string(f, policy);
	fputs(",\n", f);
	put_engine(f, s);
	fputs("  \"iteration_ns\": ", f);
	put_array(f, iter_ns, n_iters);
	if (have_median)
		fprintf(f, ",\n  \"iteration_median_ns\": %llu,\n", (unsigned long long)median);
	else
		fputs(",\n  \"iteration_median_ns\": null,\n", f);
	put_measured(f, m);
	fputs("}\n", f);
	return fflush(f) != 0 || ferror(f) ? -1 : 0;
}

int replay_stats_write_file(const char *path, const char *policy, const struct engine_stats *s,
			    const uint64_t *iter_ns, size_t n_iters, const struct replay_measured *m, char *err,
			    size_t errlen)
{
	struct replace_file r;
	if (replace_file_begin(&r, path, err, errlen))
		return -1;
	errno = 0;
	if (replay_stats_write_json(r.f, policy, s, iter_ns, n_iters, m)) {
		um_errmsg(err, errlen, "%s: cannot write: %s", path, errno ? strerror(errno) : "out of memory");
		replace_file_abandon(&r);
		return -1;
	}
	return replace_file_commit(&r, err, errlen);
}
