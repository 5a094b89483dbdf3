/*
 * Session 41 (written by a review helper): the bytes a plan evicts, by the
 * kind of inactive period the eviction starts (plan/vital.h: GAP, TAIL,
 * HEAD, UNUSED). Build and run from the repository root after make:
 *   cc -std=c11 -D_GNU_SOURCE -Icommon -I. -Iplan -o /tmp/evict_kinds \
 *      bench/results/2026-11-26/s41/evict_kinds.c build/lib/libumkit_plan.a \
 *      build/lib/libumkit_common.a -lcjson -lsqlite3 -lzstd -lm -pthread
 *   /tmp/evict_kinds tests/fixtures/h100_bert_large.db 3G
 */
#include <stdio.h>
#include <stdlib.h>
#include "plan/planner.h"
#include "plan/sched.h"
#include "size.h"
int main(int argc, char **argv)
{
	struct planner_options o; planner_options_default(&o);
	um_size_parse(argv[2], &o.capacity);
	if (argc > 3) o.remote_bytes_per_s = 0;
	struct planner *p; char err[512];
	if (planner_run(argv[1], &o, &p, err, sizeof err)) { puts(err); return 1; }
	const struct tensor_set *ts = &p->tensors; const struct vital *v = &p->vital;
	uint64_t tail_b = 0, tail_freed_b = 0, ev_b = 0, head_b = 0, unused_b = 0, gap_b = 0; size_t n_tail = 0;
	for (size_t i = 0; i < p->sched.n_ops; i++) {
		const struct plan_op *op = &p->sched.ops[i];
		if (op->kind != PLAN_OP_EVICT) continue;
		ev_b += op->bytes;
		/* find the period: evict_at == position for this tensor */
		for (size_t k = 0; k < v->n_periods; k++) {
			const struct vital_period *pe = &v->periods[k];
			if (pe->tensor != op->alloc || pe->evict_at != op->position) continue;
			if (pe->kind == VITAL_TAIL) { tail_b += op->bytes; n_tail++; if (ts->t[pe->tensor].freed) tail_freed_b += op->bytes; }
			else if (pe->kind == VITAL_HEAD) head_b += op->bytes;
			else if (pe->kind == VITAL_UNUSED) unused_b += op->bytes;
			else gap_b += op->bytes;
			break;
		}
	}
	size_t bad_idle = 0;
	for (size_t k = 0; k < v->n_periods; k++) if (v->periods[k].idle_ns > v->cycle_ns) bad_idle++;
	printf("%s cap %s: evicted %.1f MiB: gap %.1f tail %.1f (of freed tensors %.1f, %zu ops) head %.1f unused %.1f; over %zu; idle>cycle %zu; host %.1f MiB\n",
	       argv[1], argv[2], ev_b / 1048576.0, gap_b / 1048576.0, tail_b / 1048576.0, tail_freed_b / 1048576.0, n_tail, head_b / 1048576.0, unused_b / 1048576.0, p->sched.over, bad_idle, p->host_bytes/1048576.0);
	planner_free(p);
	return 0;
}
