/* plan_json.c: a plan as JSON (see plan_json.h). */
#include "plan_json.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_value.h"

/* Builders that remember the first allocation failure, so the code below
 * reads as the document it produces and checks once at the end. */
struct jb {
	bool oom;
};

static cJSON *check(struct jb *j, cJSON *item)
{
	if (!item)
		j->oom = true;
	return item;
}

static void add(struct jb *j, cJSON *obj, const char *key, cJSON *item)
{
	if (!item || !obj || !cJSON_AddItemToObject(obj, key, item)) {
		j->oom = true;
		cJSON_Delete(item);
	}
}

static void push(struct jb *j, cJSON *arr, cJSON *item)
{
	if (!item || !arr || !cJSON_AddItemToArray(arr, item)) {
		j->oom = true;
		cJSON_Delete(item);
	}
}

static cJSON *u64(struct jb *j, uint64_t v)
{
	return check(j, json_u64(v));
}

static cJSON *hex(struct jb *j, uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)v);
	return check(j, cJSON_CreateString(buf));
}

static cJSON *pos(struct jb *j, uint32_t v)
{
	return v == PLAN_POS_NONE ? check(j, cJSON_CreateNull()) : u64(j, v);
}

static cJSON *str(struct jb *j, const char *s)
{
	return check(j, json_text(s));
}

static cJSON *obj(struct jb *j)
{
	return check(j, cJSON_CreateObject());
}

static cJSON *arr(struct jb *j)
{
	return check(j, cJSON_CreateArray());
}

/* v[0 .. n) as hex strings. */
static cJSON *hex_array(struct jb *j, const uint64_t *v, uint32_t n)
{
	cJSON *a = arr(j);
	for (uint32_t i = 0; i < n; i++)
		push(j, a, hex(j, v[i]));
	return a;
}

/* v[0 .. n) as numbers. */
static cJSON *u64_array(struct jb *j, const uint64_t *v, uint32_t n)
{
	cJSON *a = arr(j);
	for (uint32_t i = 0; i < n; i++)
		push(j, a, u64(j, v[i]));
	return a;
}

static cJSON *signature_json(struct jb *j, const struct plan_signature *sig)
{
	cJSON *o = obj(j);
	add(j, o, "hash", hex(j, sig->hash));
	add(j, o, "n_kernels", u64(j, sig->n_kernels));
	add(j, o, "n_alloc_sizes", u64(j, sig->n_alloc_sizes));
	add(j, o, "exec_ids", hex_array(j, sig->exec_ids, sig->n_kernels));
	if (sig->shape_ids)
		add(j, o, "shape_ids", hex_array(j, sig->shape_ids, sig->n_kernels));
	if (sig->alloc_before)
		add(j, o, "alloc_before", u64_array(j, sig->alloc_before, sig->n_kernels));
	if (sig->ring_keys) {
		add(j, o, "ring_steps", u64(j, sig->ring_steps));
		add(j, o, "ring_keys", u64_array(j, sig->ring_keys, sig->n_kernels));
	}
	add(j, o, "alloc_sizes", u64_array(j, sig->alloc_sizes, sig->n_alloc_sizes));
	return o;
}

static cJSON *allocs_json(struct jb *j, const struct plan *p)
{
	cJSON *a = arr(j);
	for (uint32_t i = 0; i < p->n_allocs; i++) {
		const struct plan_alloc *al = &p->allocs[i];
		const char *origin = plan_alloc_origin_name(al->origin);
		cJSON *o = obj(j);
		add(j, o, "index", u64(j, i));
		add(j, o, "origin", origin ? str(j, origin) : u64(j, al->origin));
		add(j, o, "ordinal", u64(j, al->ordinal));
		add(j, o, "size", u64(j, al->size));
		push(j, a, o);
	}
	return a;
}

static cJSON *ops_json(struct jb *j, const struct plan *p)
{
	cJSON *a = arr(j);
	for (uint64_t i = 0; i < p->n_ops && !j->oom; i++) {
		const struct plan_op *op = &p->ops[i];
		const char *kind = plan_op_kind_name(op->kind);
		cJSON *o = obj(j);
		add(j, o, "position", u64(j, op->position));
		add(j, o, "kind", kind ? str(j, kind) : u64(j, op->kind));
		add(j, o, "alloc", u64(j, op->alloc));
		add(j, o, "offset", u64(j, op->offset));
		add(j, o, "bytes", u64(j, op->bytes));
		add(j, o, "after", pos(j, op->after));
		add(j, o, "deadline", pos(j, op->deadline));
		push(j, a, o);
	}
	return a;
}

static cJSON *host_json(struct jb *j, const struct plan *p)
{
	cJSON *a = arr(j);
	for (uint32_t i = 0; i < p->n_host; i++)
		push(j, a, u64(j, p->host[i]));
	return a;
}

/* Where each host entry's host part starts (0: the whole allocation). */
static cJSON *host_offsets_json(struct jb *j, const struct plan *p)
{
	cJSON *a = arr(j);
	for (uint32_t i = 0; i < p->n_host; i++)
		push(j, a, u64(j, p->host_offset ? p->host_offset[i] : 0));
	return a;
}

static cJSON *corr_json(struct jb *j, const corr_tables *t)
{
	const struct corr_config *cfg = corr_config_of(t);
	struct corr_stats st;
	corr_get_stats(t, &st);
	cJSON *o = obj(j), *c = obj(j), *s = obj(j), *execs = arr(j), *blocks = arr(j);
	add(j, c, "rows", u64(j, cfg->rows));
	add(j, c, "ways", u64(j, cfg->ways));
	add(j, c, "successors", u64(j, cfg->successors));
	add(j, c, "max_blocks_per_exec", u64(j, cfg->max_blocks_per_exec));
	add(j, c, "max_block_entries", u64(j, cfg->max_block_entries));
	add(j, c, "block_size", u64(j, cfg->block_size));
	add(j, c, "wrap", check(j, cJSON_CreateBool(cfg->wrap)));
	add(j, s, "rows_used", u64(j, st.rows_used));
	add(j, s, "exec_entries", u64(j, st.exec_entries));
	add(j, s, "successor_links", u64(j, st.successor_links));
	add(j, s, "exec_evictions", u64(j, st.exec_evictions));
	add(j, s, "block_lists", u64(j, st.block_lists));
	add(j, s, "block_entries", u64(j, st.block_entries));
	add(j, s, "blocks_dropped", u64(j, st.blocks_dropped));
	/* Only occupied slots: a default table is 4096 slots, mostly empty. */
	for (size_t i = 0; i < corr_exec_slot_count(t) && !j->oom; i++) {
		struct corr_exec_slot sl;
		corr_exec_slot_get(t, i, &sl);
		if (!sl.exec_id)
			continue;
		cJSON *e = obj(j), *succ = arr(j);
		add(j, e, "set", u64(j, i / cfg->ways));
		add(j, e, "way", u64(j, i % cfg->ways));
		add(j, e, "exec_id", hex(j, sl.exec_id));
		add(j, e, "last_seen", u64(j, sl.last_seen));
		for (uint32_t k = 0; k < sl.n_successors; k++)
			push(j, succ, hex(j, sl.successors[k]));
		add(j, e, "successors", succ);
		push(j, execs, e);
	}
	for (size_t i = 0; i < corr_block_list_count(t) && !j->oom; i++) {
		const struct corr_block *b;
		size_t n;
		uint64_t id = corr_block_list_get(t, i, &b, &n);
		cJSON *e = obj(j), *list = arr(j);
		add(j, e, "exec_id", hex(j, id));
		for (size_t k = 0; k < n; k++) {
			cJSON *pair = arr(j);
			push(j, pair, u64(j, b[k].alloc));
			push(j, pair, u64(j, b[k].block));
			push(j, list, pair);
		}
		add(j, e, "blocks", list);
		push(j, blocks, e);
	}
	add(j, o, "config", c);
	add(j, o, "summary", s);
	add(j, o, "exec_table", execs);
	add(j, o, "block_tables", blocks);
	return o;
}

cJSON *plan_json(const struct plan *p)
{
	struct jb j = { false };
	cJSON *root = obj(&j);
	add(&j, root, "format_version",
	    u64(&j, p->format_version ? p->format_version : PLANFILE_VERSION));

	const struct plan_provenance *pv = &p->provenance;
	cJSON *prov = obj(&j);
	add(&j, prov, "umkit_version", str(&j, pv->umkit_version));
	add(&j, prov, "trace_path", str(&j, pv->trace_path));
	add(&j, prov, "trace_command", str(&j, pv->trace_command));
	add(&j, prov, "iteration_method", str(&j, pv->iteration_method));
	add(&j, prov, "trace_iteration", u64(&j, pv->trace_iteration));
	add(&j, prov, "trace_iterations", u64(&j, pv->trace_iterations));
	add(&j, prov, "framework_cache", check(&j, cJSON_CreateBool(pv->framework_cache)));
	add(&j, root, "provenance", prov);

	const struct plan_assumptions *a = &p->assume;
	cJSON *as = obj(&j);
	add(&j, as, "capacity_bytes", u64(&j, a->capacity_bytes));
	add(&j, as, "htod_bytes_per_s", u64(&j, a->htod_bytes_per_s));
	add(&j, as, "dtoh_bytes_per_s", u64(&j, a->dtoh_bytes_per_s));
	add(&j, as, "call_cost_ns", u64(&j, a->call_cost_ns));
	add(&j, as, "block_size", u64(&j, a->block_size));
	add(&j, root, "assumptions", as);

	const struct plan_predictions *pr = &p->predict;
	cJSON *pd = obj(&j);
	add(&j, pd, "peak_residency_bytes", u64(&j, pr->peak_residency_bytes));
	add(&j, pd, "prefetch_bytes", u64(&j, pr->prefetch_bytes));
	add(&j, pd, "evict_bytes", u64(&j, pr->evict_bytes));
	add(&j, pd, "discard_bytes", u64(&j, pr->discard_bytes));
	add(&j, pd, "iteration_ns", u64(&j, pr->iteration_ns));
	add(&j, root, "predictions", pd);

	add(&j, root, "signature", signature_json(&j, &p->signature));
	add(&j, root, "n_allocs", u64(&j, p->n_allocs));
	add(&j, root, "allocs", allocs_json(&j, p));
	add(&j, root, "n_ops", u64(&j, p->n_ops));
	add(&j, root, "ops", ops_json(&j, p));
	add(&j, root, "host", host_json(&j, p));
	add(&j, root, "host_offsets", host_offsets_json(&j, p));
	add(&j, root, "correlation", p->corr ? corr_json(&j, p->corr) : check(&j, cJSON_CreateNull()));
	if (j.oom) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

char *plan_json_text(const struct plan *p)
{
	cJSON *root = plan_json(p);
	if (!root)
		return NULL;
	char *text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return NULL;
	/* cJSON's allocator is malloc by default; re-home the text so callers
	 * free() it with the newline added. */
	size_t n = strlen(text);
	char *out = malloc(n + 2);
	if (out) {
		memcpy(out, text, n);
		out[n] = '\n';
		out[n + 1] = 0;
	}
	cJSON_free(text);
	return out;
}
