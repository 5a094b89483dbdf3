/* host_iteration_probe.c (session 28): would host placement take evicted
 * bytes if it could place iteration tensors (activations)? For each
 * iteration tensor, the first of host.c's rules it fails (whole 2 MB
 * blocks, at most HOST_MAX_USES uses, no kernel that re-reads its
 * operands, a pass per use cheaper than a migration), and how many of its
 * bytes the schedule evicts per iteration.
 *
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -Icommon -I. -o probe \
 *     bench/results/2026-11-23/s28/host_iteration_probe.c \
 *     build/lib/libumkit_plan.a build/lib/libumkit_common.a -lsqlite3 -lzstd -lm -ldl -pthread -lcjson
 *   ./probe TRACE.db CAPACITY_BYTES
 */
#include <stdio.h>
#include <stdlib.h>
#include "plan/planner.h"
#include "plan/host.h"
static bool rereads(const struct planner *p, uint32_t pos)
{
	const uint64_t *ob = p->access.ws_bytes;
	if (!ob || !ob[pos]) return false;
	double ns = (double)(p->vital.end_ns[pos] - p->vital.start_ns[pos]);
	return ns * HOST_DEVICE_PEAK_BPS / 1e9 > HOST_MAX_REUSE * (double)ob[pos];
}
int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s TRACE.db CAPACITY_BYTES\n", argv[0]);
		return 2;
	}
	struct planner_options o; planner_options_default(&o);
	o.capacity = strtoull(argv[2], 0, 10);
	struct planner *p; char err[512];
	if (planner_run(argv[1], &o, &p, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
	const struct tensor_set *ts = &p->tensors; const struct vital *v = &p->vital;
	double pass = 1.0 / o.remote_bytes_per_s, migrate = 1.0 / o.dtoh_bytes_per_s + 1.0 / o.htod_bytes_per_s;
	uint64_t by_reason[5] = {0}, n_by[5] = {0};
	const char *why[5] = {"eligible", "not whole blocks", "too many uses", "a re-reading kernel", "pass cost"};
	uint64_t *ev = calloc(ts->n, sizeof *ev);
	for (size_t k = 0; k < p->sched.n_ops; k++)
		if (p->sched.ops[k].kind == PLAN_OP_EVICT)
			ev[p->sched.ops[k].alloc] += p->sched.ops[k].bytes;
	uint64_t ev_by[5] = {0}, ev_pers = 0;
	for (size_t i = 0; i < ts->n_persistent; i++) ev_pers += ev[i];
	for (size_t i = ts->n_persistent; i < ts->n; i++) {
		const struct tensor *t = &ts->t[i];
		uint32_t uses = v->tv[i].n_uses; int r = 0;
		bool owns = t->address % PLAN_BLOCK_SIZE == 0 && t->bytes % PLAN_BLOCK_SIZE == 0 && t->bytes > 0;
		if (!owns) r = 1;
		else if (uses > HOST_MAX_USES) r = 2;
		else { for (uint32_t k = 0; k < uses; k++) if (rereads(p, v->uses[v->tv[i].use_first + k])) r = 3;
		       if (!r && !(uses * pass < migrate)) r = 4; }
		by_reason[r] += t->bytes; n_by[r]++; ev_by[r] += ev[i];
	}
	printf("iteration tensors: %zu; capacity %.2f GiB; host bytes chosen (persistent) %.2f GiB\n", ts->n - ts->n_persistent, o.capacity / 1073741824.0, p->host_bytes / 1073741824.0);
	for (int r = 0; r < 5; r++) printf("  %-22s %5llu tensors %8.2f GiB, of their bytes evicted %6.2f GiB\n", why[r], (unsigned long long)n_by[r], by_reason[r] / 1073741824.0, ev_by[r] / 1073741824.0);
	printf("persistent tensors' evicted bytes %.2f GiB\n", ev_pers / 1073741824.0);
	printf("schedule: evicted %.2f GiB, prefetched %.2f GiB per iteration\n", p->sched.evict_bytes / 1073741824.0, p->sched.prefetch_bytes / 1073741824.0);
	return 0;
}
