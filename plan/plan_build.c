/* plan_build.c: the analysis and schedule as a struct plan (see plan_build.h). */
#include "plan_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "minmax.h"

/* Blocks of an allocation of size bytes. */
static uint64_t blocks_of(uint64_t size)
{
	return (size + PLAN_BLOCK_SIZE - 1) / PLAN_BLOCK_SIZE;
}

/* Blocks of t that the GPU holds: none of a tensor kept on the host whole,
 * those before the host part of one kept there in part. */
static uint64_t gpu_blocks(const struct tensor *t)
{
	return t->host ? t->host_offset / PLAN_BLOCK_SIZE : blocks_of(t->size);
}

static int build_corr(const struct plan_build_input *in, struct plan *pl, const uint32_t *plan_index,
		      char *err, size_t errlen)
{
	const struct access_set *a = in->access;
	const struct tensor_set *ts = in->tensors;
	const uint32_t p = ts->n_pos;
	if (corr_config_check(in->corr, err, errlen))
		return -1;
	/* Each kernel's list is cut at the per-execution cap: corr_build
	 * would keep only that many first blocks anyway. */
	uint64_t cap = in->corr->max_blocks_per_exec;
	uint64_t total = 0;
	for (uint32_t k = 0; k < p; k++) {
		uint64_t n = 0;
		for (uint32_t j = a->first[k]; j < a->first[k + 1]; j++)
			n += gpu_blocks(&ts->t[a->tensor[j]]);
		total += n < cap ? n : cap;
	}
	struct corr_block *blocks = malloc((total ? total : 1) * sizeof *blocks);
	struct corr_kernel_blocks *kb = malloc(p * sizeof *kb);
	if (!blocks || !kb) {
		free(blocks);
		free(kb);
		um_errmsg(err, errlen, "%s: out of memory building correlation tables", in->trace->path);
		return -1;
	}
	uint64_t at = 0;
	for (uint32_t k = 0; k < p; k++) {
		uint64_t start = at;
		for (uint32_t j = a->first[k]; j < a->first[k + 1] && at - start < cap; j++) {
			uint32_t x = a->tensor[j];
			uint64_t nb = gpu_blocks(&ts->t[x]);
			for (uint64_t b = 0; b < nb && at - start < cap; b++)
				blocks[at++] = (struct corr_block){ plan_index[x], (uint32_t)b };
		}
		kb[k] = (struct corr_kernel_blocks){ blocks + start, (size_t)(at - start) };
	}
	pl->corr = corr_build(in->corr, pl->signature.exec_ids, p, kb, err, errlen);
	free(blocks);
	free(kb);
	return pl->corr ? 0 : -1;
}

static int fill_provenance(const struct plan_build_input *in, struct plan *pl)
{
	struct plan_provenance *pv = &pl->provenance;
	pv->umkit_version = strdup(UMKIT_VERSION);
	pv->trace_path = strdup(in->trace->path);
	pv->trace_command = strdup(in->trace->command);
	pv->iteration_method = strdup(iter_method_name(in->iter->method));
	pv->trace_iteration = (uint32_t)in->iter->chosen;
	pv->trace_iterations = (uint32_t)in->iter->n_iters;
	pv->framework_cache = in->trace->framework_cache;
	return pv->umkit_version && pv->trace_path && pv->trace_command && pv->iteration_method ? 0 : -1;
}

struct plan *plan_build(const struct plan_build_input *in, char *err, size_t errlen)
{
	const struct tensor_set *ts = in->tensors;
	const struct sched_result *sr = in->sched;
	const uint32_t p = ts->n_pos;
	struct plan *pl = plan_create();
	uint32_t *plan_index = malloc((ts->n ? ts->n : 1) * sizeof *plan_index);
	if (!pl || !plan_index)
		goto oom;

	struct plan_signature *sg = &pl->signature;
	sg->n_kernels = p;
	sg->exec_ids = malloc(p * sizeof *sg->exec_ids);
	sg->shape_ids = malloc(p * sizeof *sg->shape_ids);
	sg->alloc_before = malloc(p * sizeof *sg->alloc_before);
	sg->n_alloc_sizes = (uint32_t)ts->n_iteration;
	sg->alloc_sizes = malloc((ts->n_iteration ? ts->n_iteration : 1) * sizeof *sg->alloc_sizes);
	if (!sg->exec_ids || !sg->shape_ids || !sg->alloc_before || !sg->alloc_sizes)
		goto oom;
	for (uint32_t k = 0; k < p; k++) {
		sg->exec_ids[k] = in->trace->kernels[ts->first + k].exec_id;
		sg->shape_ids[k] = in->trace->kernels[ts->first + k].shape_id;
	}
	memcpy(sg->alloc_sizes, ts->alloc_sizes, ts->n_iteration * sizeof *sg->alloc_sizes);
	memcpy(sg->alloc_before, ts->alloc_before, p * sizeof *sg->alloc_before);
	if (in->iter->ring_keys && in->iter->period == p) {
		sg->ring_keys = malloc(p * sizeof *sg->ring_keys);
		if (!sg->ring_keys)
			goto oom;
		memcpy(sg->ring_keys, in->iter->ring_keys, p * sizeof *sg->ring_keys);
		sg->ring_steps = (uint32_t)in->iter->rotation;
	}

	pl->assume.capacity_bytes = in->sched_options->capacity;
	pl->assume.htod_bytes_per_s = in->sched_options->htod_bytes_per_s;
	pl->assume.dtoh_bytes_per_s = in->sched_options->dtoh_bytes_per_s;
	pl->assume.call_cost_ns = in->sched_options->call_cost_ns;
	pl->assume.block_size = PLAN_BLOCK_SIZE;

	pl->predict.peak_residency_bytes = sr->peak;
	pl->predict.prefetch_bytes = sr->prefetch_bytes;
	pl->predict.evict_bytes = sr->evict_bytes;
	pl->predict.discard_bytes = sr->discard_bytes;
	/* The scheduler's stall is rough (sched.h); no schedule beats the
	 * floor, whose windows it may not have charged. */
	uint64_t predicted = add_sat_u64(add_sat_u64(in->vital->cycle_ns, sr->stall_ns), in->host_ns);
	pl->predict.iteration_ns = predicted > in->floor_ns ? predicted : in->floor_ns;
	if (fill_provenance(in, pl))
		goto oom;

	/* Allocations: every tensor an op names or a kernel uses (the block
	 * tables name those), in tensor order. */
	uint8_t *named = calloc(ts->n ? ts->n : 1, 1);
	if (!named)
		goto oom;
	for (size_t i = 0; i < sr->n_ops; i++)
		named[sr->ops[i].alloc] = 1;
	for (size_t x = 0; x < ts->n; x++)
		named[x] |= ts->t[x].host;
	if (in->corr)
		for (size_t i = 0; i < in->access->n_refs; i++)
			named[in->access->tensor[i]] = 1;
	uint32_t n = 0;
	for (size_t x = 0; x < ts->n; x++) {
		plan_index[x] = UINT32_MAX;
		if (named[x] && ts->t[x].size)
			plan_index[x] = n++;
	}
	free(named);
	pl->n_allocs = n;
	pl->allocs = calloc(n ? n : 1, sizeof *pl->allocs);
	pl->ops = malloc((sr->n_ops ? sr->n_ops : 1) * sizeof *pl->ops);
	pl->host = malloc((n ? n : 1) * sizeof *pl->host);
	if (!pl->allocs || !pl->ops || !pl->host)
		goto oom;
	for (size_t x = 0; x < ts->n; x++) {
		if (plan_index[x] == UINT32_MAX)
			continue;
		pl->allocs[plan_index[x]] = (struct plan_alloc){ ts->t[x].origin, ts->t[x].ordinal,
								  ts->t[x].size };
		if (!ts->t[x].host)
			continue;
		if (ts->t[x].host_offset && !pl->host_offset &&
		    !(pl->host_offset = calloc(n, sizeof *pl->host_offset)))
			goto oom;
		if (pl->host_offset)
			pl->host_offset[pl->n_host] = ts->t[x].host_offset;
		pl->host[pl->n_host++] = plan_index[x];
	}
	for (size_t i = 0; i < sr->n_ops; i++) {
		pl->ops[i] = sr->ops[i];
		pl->ops[i].alloc = plan_index[sr->ops[i].alloc];
	}
	pl->n_ops = sr->n_ops;

	if (in->corr && build_corr(in, pl, plan_index, err, errlen))
		goto fail;
	plan_finalize(pl);
	char name[512];
	snprintf(name, sizeof name, "internal error: the plan built from %s", in->trace->path);
	if (plan_validate(pl, name, err, errlen))
		goto fail;
	free(plan_index);
	return pl;
oom:
	um_errmsg(err, errlen, "%s: out of memory building the plan", in->trace->path);
fail:
	free(plan_index);
	plan_destroy(pl);
	return NULL;
}
