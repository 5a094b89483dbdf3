/* dryrun_report.c: what umreplay --dry-run prints (see dryrun.h). */
#include <inttypes.h>

#include "dryrun.h"
#include "size.h"

static const char table_header[] =
	"iteration  recorded_ms  launches  resynced      lost  prefetch_MiB  evict_MiB  discard_MiB  "
	"discard_prefetch_MiB  budget_evictions  refault_blocks  of_them_budget  of_them_shared  "
	"unread_evicted\n";

/* Whole MiB: the engine's ops move whole 2 MiB blocks. */
static uint64_t mib(uint64_t bytes)
{
	return bytes >> 20;
}

/* One row of the table, aligned under table_header; ms "-" where the
 * recording gives no time. */
static void put_row(FILE *f, const char *label, const char *ms, const struct dryrun_counts *c)
{
	fprintf(f, "%9s  %11s  %8" PRIu64 "  %8" PRIu64 "  %8" PRIu64 "  %12" PRIu64 "  %9" PRIu64 "  %11" PRIu64
		   "  %20" PRIu64 "  %16" PRIu64 "  %14" PRIu64 "  %14" PRIu64 "  %14" PRIu64 "  %14" PRIu64 "\n",
		label, ms, c->launches, c->resynced, c->lost, mib(c->bytes[ENGINE_OP_PREFETCH]),
		mib(c->bytes[ENGINE_OP_EVICT]), mib(c->bytes[ENGINE_OP_DISCARD]),
		mib(c->bytes[ENGINE_OP_DISCARD_PREFETCH]), c->budget_evictions, c->refault_blocks,
		c->refault_budget_blocks, c->refault_shared_blocks, c->unread_evicted_blocks);
}

static void put_table(FILE *f, const struct dryrun_result *r)
{
	fputs(table_header, f);
	for (size_t i = 0; i < r->n_iterations; i++) {
		char label[24], ms[32] = "-";
		snprintf(label, sizeof label, "%zu", i + 1);
		if (i < r->n_iteration_ns)
			snprintf(ms, sizeof ms, "%.3f", (double)r->iteration_ns[i] / 1e6);
		put_row(f, label, ms, &r->iterations[i]);
	}
	put_row(f, "tail", "-", &r->tail);
	put_row(f, "total", "-", &r->total);
}

static void put_summary(FILE *f, const struct trace *t, const struct engine_config *cfg, const char *plan_path,
			const struct dryrun_result *r)
{
	const struct engine_stats *st = &r->stats;
	char budget[48] = "no budget", size[32], peak[48] = "no residency model", recorded[32] = "",
	     placed[160] = "";
	if (cfg->gpu_budget && cfg->policy != ENGINE_IDEAL) /* ideal migrates nothing: no budget */
		snprintf(budget, sizeof budget, "budget %s", um_size_format(cfg->gpu_budget, size, sizeof size));
	/* ideal keeps no model (everything resident): its peak reads 0, which
	 * is no residency at all. */
	if (cfg->policy != ENGINE_IDEAL)
		snprintf(peak, sizeof peak, "modelled peak %s",
			 um_size_format(st->modelled_peak_bytes, size, sizeof size));
	if (st->launches != t->n_kernels)
		snprintf(recorded, sizeof recorded, " of %zu", t->n_kernels);
	if (cfg->plan) /* only a plan places launches */
		snprintf(placed, sizeof placed, " (%" PRIu64 " matched, %" PRIu64 " by shape, %" PRIu64
			 " resynchronised, %" PRIu64 " lost)", st->matched, st->shaped, st->resynced, st->lost);
	fprintf(f, "umreplay --dry-run: %s under %s (%s%s), %s: %" PRIu64 "%s launches%s, %" PRIu64
		   " iterations, %s\n",
		t->path, engine_policy_name(cfg->policy), plan_path ? "plan " : "no plan", plan_path ? plan_path : "",
		budget, st->launches, recorded, placed, st->iterations, peak);
	if (!cfg->plan)
		fputs("no plan: iterations are passes over a plan's kernels, so none are counted\n", f);
	else if (st->launches && st->launches == st->lost)
		fputs(st->started_idle ? "no launch followed from the wake on was placed in the plan: the "
					 "program had left the plan's iterations by then, or the plan is "
					 "another program's\n"
				       : "no launch was placed in the plan: it may be made for another program\n",
		      f);
	if (st->started_idle && !st->woke_at_alloc)
		fprintf(f, "idle: the plan has nothing to do within the %s, so no launch was followed\n",
			cfg->gpu_budget ? "budget" : "plan's capacity");
	else if (st->started_idle)
		fprintf(f, "started idle (the plan had nothing to do); launches followed from allocation %" PRIu64
			   " on\n",
			st->woke_at_alloc);
	/* A real replay follows the program no more from its first stream
	 * capture or graph launch (docs/replay.md, "CUDA graphs"), a time the
	 * trace does not hold: neither is recorded, only the graphs' kernels
	 * on the GPU's clock. An engine that never woke follows nothing either
	 * way. */
	if (t->graph_kernels && !(st->started_idle && !st->woke_at_alloc))
		fprintf(f, "the recorded run used CUDA graphs (%zu kernels ran from them): a real replay stops "
			   "following at the program's first capture or graph launch, which the trace does not "
			   "date; this dry run fed every launch recorded, those after it too\n",
			t->graph_kernels);
	if (r->foreign_at)
		fprintf(f, "the plan was judged foreign at launch %" PRIu64 " (made for another program: its kernels "
			   "or allocations differ); nothing after it was replayed\n",
			r->foreign_at);
	if (st->budget_overruns)
		fprintf(f, "%" PRIu64 " kernels needed more than the budget on their own\n", st->budget_overruns);
	if (st->host_allocs)
		fprintf(f, "%" PRIu64 " allocations (%s) kept in host memory by the plan\n", st->host_allocs,
			um_size_format(st->host_bytes, size, sizeof size));
}

int dryrun_print(FILE *f, const struct trace *t, const struct engine_config *cfg, const char *plan_path,
		 const struct dryrun_result *r, bool summary_only)
{
	put_summary(f, t, cfg, plan_path, r);
	if (!summary_only)
		put_table(f, r);
	return ferror(f) ? -1 : 0;
}
