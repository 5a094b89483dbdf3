/*
 * plan.c: the in-memory plan, its validation and its sections in plan.bin
 * (see plan.h; docs/plan-format.md has the encodings).
 *
 * Decoding checks only what it needs to stay in bounds (counts against the
 * bytes present, strings, trailing bytes); everything the plan means is then
 * checked once, by plan_validate, the same function plan_save runs, so a
 * file that loads is a plan that could have been saved.
 */
#include "plan.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "errmsg.h"
#include "execid.h"

struct plan *plan_create(void)
{
	struct plan *p = calloc(1, sizeof *p);
	if (p)
		p->assume.block_size = PLAN_BLOCK_SIZE;
	return p;
}

void plan_destroy(struct plan *p)
{
	if (!p)
		return;
	free(p->signature.exec_ids);
	free(p->signature.shape_ids);
	free(p->signature.ring_keys);
	free(p->signature.alloc_before);
	free(p->signature.alloc_sizes);
	free(p->provenance.umkit_version);
	free(p->provenance.trace_path);
	free(p->provenance.trace_command);
	free(p->provenance.iteration_method);
	free(p->allocs);
	free(p->ops);
	corr_destroy(p->corr);
	free(p->host);
	free(p->host_offset);
	free(p);
}

const char *plan_op_kind_name(uint8_t kind)
{
	switch (kind) {
	case PLAN_OP_DISCARD: return "discard";
	case PLAN_OP_EVICT: return "evict";
	case PLAN_OP_DISCARD_PREFETCH: return "discard_prefetch";
	case PLAN_OP_PREFETCH: return "prefetch";
	}
	return NULL;
}

const char *plan_alloc_origin_name(uint8_t origin)
{
	switch (origin) {
	case PLAN_ALLOC_PERSISTENT: return "persistent";
	case PLAN_ALLOC_ITERATION: return "iteration";
	case PLAN_ALLOC_PREVIOUS: return "previous";
	}
	return NULL;
}

static uint64_t hash_u64(uint64_t h, uint64_t v)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	return execid_fnv1a(h, b, sizeof b);
}

static uint64_t hash_u32(uint64_t h, uint32_t v)
{
	unsigned char b[4];
	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	return execid_fnv1a(h, b, sizeof b);
}

uint64_t plan_signature_hash(const uint64_t *exec_ids, uint32_t n_kernels,
			     const uint64_t *alloc_sizes, uint32_t n_sizes)
{
	uint64_t h = hash_u32(EXECID_FNV_SEED, n_kernels);
	for (uint32_t i = 0; i < n_kernels; i++)
		h = hash_u64(h, exec_ids[i]);
	h = hash_u32(h, n_sizes);
	for (uint32_t i = 0; i < n_sizes; i++)
		h = hash_u64(h, alloc_sizes[i]);
	return h;
}

#define CMP(a, b) \
	do { \
		if ((a) != (b)) \
			return (a) < (b) ? -1 : 1; \
	} while (0)

/* The order plan.h promises: (position, kind, alloc, offset). */
static int op_key_cmp(const struct plan_op *x, const struct plan_op *y)
{
	CMP(x->position, y->position);
	CMP(x->kind, y->kind);
	CMP(x->alloc, y->alloc);
	CMP(x->offset, y->offset);
	return 0;
}

/* The key, then every other field: qsort is not stable, so ties must be
 * broken by content for equal op sets to give equal files. */
static int op_full_cmp(const void *a, const void *b)
{
	const struct plan_op *x = a, *y = b;
	int c = op_key_cmp(x, y);
	if (c)
		return c;
	CMP(x->bytes, y->bytes);
	CMP(x->after, y->after);
	CMP(x->deadline, y->deadline);
	return 0;
}

void plan_finalize(struct plan *p)
{
	if (p->n_ops)
		qsort(p->ops, (size_t)p->n_ops, sizeof *p->ops, op_full_cmp);
	p->signature.hash = plan_signature_hash(p->signature.exec_ids, p->signature.n_kernels,
						p->signature.alloc_sizes,
						p->signature.n_alloc_sizes);
}

/* ---- validation ---- */

static int by_origin_ordinal(const void *a, const void *b)
{
	const struct plan_alloc *x = *(const struct plan_alloc *const *)a;
	const struct plan_alloc *y = *(const struct plan_alloc *const *)b;
	CMP(x->origin, y->origin);
	CMP(x->ordinal, y->ordinal);
	return 0;
}

static int validate_allocs(const struct plan *p, const char *name, char *err, size_t errlen)
{
	const struct plan_signature *sig = &p->signature;
	for (uint32_t i = 0; i < p->n_allocs; i++) {
		const struct plan_alloc *a = &p->allocs[i];
		if (!plan_alloc_origin_name(a->origin)) {
			um_errmsg(err, errlen, "%s: allocation %u has unknown origin %u", name,
			       (unsigned)i, (unsigned)a->origin);
			return -1;
		}
		if (a->ordinal == 0 || a->size == 0) {
			um_errmsg(err, errlen, "%s: allocation %u has %s 0", name, (unsigned)i,
			       a->ordinal == 0 ? "ordinal" : "size");
			return -1;
		}
		if (a->origin == PLAN_ALLOC_PREVIOUS && p->format_version && p->format_version < 3) {
			um_errmsg(err, errlen, "%s: allocation %u is a previous iteration's instance, which "
				  "format version %u cannot hold", name, (unsigned)i, (unsigned)p->format_version);
			return -1;
		}
		if (a->origin == PLAN_ALLOC_PERSISTENT)
			continue;
		if (a->ordinal > sig->n_alloc_sizes) {
			um_errmsg(err, errlen, "%s: allocation %u is the iteration's allocation #%llu "
			       "but the iteration makes %u", name, (unsigned)i,
			       (unsigned long long)a->ordinal, (unsigned)sig->n_alloc_sizes);
			return -1;
		}
		if (a->size != sig->alloc_sizes[a->ordinal - 1]) {
			um_errmsg(err, errlen, "%s: allocation %u has size %llu but the signature says "
			       "the iteration's allocation #%llu has %llu", name, (unsigned)i,
			       (unsigned long long)a->size, (unsigned long long)a->ordinal,
			       (unsigned long long)sig->alloc_sizes[a->ordinal - 1]);
			return -1;
		}
	}
	if (p->n_allocs < 2)
		return 0;
	const struct plan_alloc **order = malloc(p->n_allocs * sizeof *order);
	if (!order) {
		um_errmsg(err, errlen, "%s: out of memory", name);
		return -1;
	}
	for (uint32_t i = 0; i < p->n_allocs; i++)
		order[i] = &p->allocs[i];
	qsort(order, p->n_allocs, sizeof *order, by_origin_ordinal);
	int rc = 0;
	for (uint32_t i = 1; i < p->n_allocs && rc == 0; i++) {
		if (by_origin_ordinal(&order[i - 1], &order[i]) == 0) {
			um_errmsg(err, errlen, "%s: allocations %u and %u are the same %s allocation #%llu",
			       name, (unsigned)(order[i - 1] - p->allocs),
			       (unsigned)(order[i] - p->allocs),
			       plan_alloc_origin_name(order[i]->origin),
			       (unsigned long long)order[i]->ordinal);
			rc = -1;
		}
	}
	free(order);
	return rc;
}

static int validate_host(const struct plan *p, const char *name, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < p->n_host; i++) {
		uint32_t a = p->host[i];
		if (a >= p->n_allocs) {
			um_errmsg(err, errlen, "%s: host entry %u names allocation %u but the plan has %u",
			       name, (unsigned)i, (unsigned)a, (unsigned)p->n_allocs);
			return -1;
		}
		if (i > 0 && a <= p->host[i - 1]) {
			um_errmsg(err, errlen, "%s: host entries are not in ascending order at entry %u",
			       name, (unsigned)i);
			return -1;
		}
		if (p->allocs[a].origin != PLAN_ALLOC_PERSISTENT) {
			um_errmsg(err, errlen, "%s: host entry %u names an iteration allocation (only "
			       "persistent ones may stay on the host)", name, (unsigned)i);
			return -1;
		}
		uint64_t off = p->host_offset ? p->host_offset[i] : 0;
		if (off % p->assume.block_size || off >= p->allocs[a].size) {
			um_errmsg(err, errlen, "%s: host entry %u starts at byte %llu, %s", name,
				  (unsigned)i, (unsigned long long)off,
				  off % p->assume.block_size ? "not on a block boundary"
							     : "past the end of its allocation");
			return -1;
		}
	}
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

bool plan_on_host(const struct plan *p, uint32_t alloc, uint64_t *offset)
{
	const uint32_t *at = p->n_host ? bsearch(&alloc, p->host, p->n_host, sizeof *p->host, u32_cmp)
				       : NULL;
	if (at && offset)
		*offset = p->host_offset ? p->host_offset[at - p->host] : 0;
	return at != NULL;
}

uint64_t plan_idle_limit(const struct plan *p, uint64_t budget)
{
	uint64_t limit = budget ? budget : p->assume.capacity_bytes;
	return !p->n_ops && !p->n_host && p->predict.peak_residency_bytes <= limit ? limit : 0;
}

static int validate_op(const struct plan *p, uint64_t i, const char *name, char *err,
		       size_t errlen)
{
	const struct plan_op *op = &p->ops[i];
	uint32_t nk = p->signature.n_kernels;
	unsigned long long oi = (unsigned long long)i;
	const char *kind = plan_op_kind_name(op->kind);
	if (!kind) {
		um_errmsg(err, errlen, "%s: op %llu has unknown kind %u", name, oi, (unsigned)op->kind);
		return -1;
	}
	if (op->alloc >= p->n_allocs) {
		um_errmsg(err, errlen, "%s: op %llu names allocation %u but the plan has %u", name, oi,
		       (unsigned)op->alloc, (unsigned)p->n_allocs);
		return -1;
	}
	if (plan_on_host(p, op->alloc, NULL)) {
		um_errmsg(err, errlen, "%s: op %llu names allocation %u, which the plan keeps on the "
		       "host", name, oi, (unsigned)op->alloc);
		return -1;
	}
	if (op->position >= nk) {
		um_errmsg(err, errlen, "%s: op %llu is at kernel %u but the iteration has %u kernels",
		       name, oi, (unsigned)op->position, (unsigned)nk);
		return -1;
	}
	bool waits = op->kind != PLAN_OP_PREFETCH;
	bool fetches = op->kind == PLAN_OP_PREFETCH || op->kind == PLAN_OP_DISCARD_PREFETCH;
	if (waits ? op->after != PLAN_POS_NONE && op->after >= nk : op->after != PLAN_POS_NONE) {
		um_errmsg(err, errlen, "%s: op %llu (%s) waits after kernel %u, %s", name, oi, kind,
		       (unsigned)op->after,
		       waits ? "beyond the iteration" : "but a prefetch waits for nothing");
		return -1;
	}
	if (fetches ? op->deadline >= nk : op->deadline != PLAN_POS_NONE) {
		um_errmsg(err, errlen, "%s: op %llu (%s) has deadline %u, %s", name, oi, kind,
		       (unsigned)op->deadline,
		       fetches ? "beyond the iteration" : "but only prefetches have deadlines");
		return -1;
	}
	uint64_t size = p->allocs[op->alloc].size;
	if (op->bytes == 0 || op->offset > size || op->bytes > size - op->offset) {
		um_errmsg(err, errlen, "%s: op %llu range [%llu, +%llu) is not inside allocation %u "
		       "(%llu bytes)", name, oi, (unsigned long long)op->offset,
		       (unsigned long long)op->bytes, (unsigned)op->alloc,
		       (unsigned long long)size);
		return -1;
	}
	if (i > 0 && op_key_cmp(&p->ops[i - 1], op) > 0) {
		um_errmsg(err, errlen, "%s: ops are out of order at op %llu (not sorted by position, "
		       "kind, allocation, offset)", name, oi);
		return -1;
	}
	return 0;
}

static int validate_corr(const struct plan *p, const char *name, char *err, size_t errlen)
{
	const corr_tables *t = p->corr;
	uint64_t bs = corr_config_of(t)->block_size;
	for (size_t l = 0; l < corr_block_list_count(t); l++) {
		const struct corr_block *b;
		size_t n;
		uint64_t exec_id = corr_block_list_get(t, l, &b, &n);
		for (size_t k = 0; k < n; k++) {
			if (b[k].alloc >= p->n_allocs) {
				um_errmsg(err, errlen, "%s: block table of exec ID %016llx names allocation "
				       "%u but the plan has %u", name, (unsigned long long)exec_id,
				       (unsigned)b[k].alloc, (unsigned)p->n_allocs);
				return -1;
			}
			uint64_t size = p->allocs[b[k].alloc].size;
			if (b[k].block > (size - 1) / bs) {
				um_errmsg(err, errlen, "%s: block table of exec ID %016llx names block %u of "
				       "allocation %u, which has %llu", name,
				       (unsigned long long)exec_id, (unsigned)b[k].block,
				       (unsigned)b[k].alloc, (unsigned long long)((size - 1) / bs + 1));
				return -1;
			}
		}
	}
	return 0;
}

int plan_validate(const struct plan *p, const char *name, char *err, size_t errlen)
{
	const struct plan_signature *sig = &p->signature;
	if (sig->n_kernels == 0 || !sig->exec_ids) {
		um_errmsg(err, errlen, "%s: the plan's iteration has no kernels", name);
		return -1;
	}
	if (sig->n_alloc_sizes && !sig->alloc_sizes) {
		um_errmsg(err, errlen, "%s: the signature lists %u allocation sizes but has none", name,
		       (unsigned)sig->n_alloc_sizes);
		return -1;
	}
	if (sig->ring_keys && (sig->ring_steps < 2 || sig->ring_steps > PLAN_MAX_RING_STEPS ||
			       sig->n_kernels % sig->ring_steps)) {
		um_errmsg(err, errlen, "%s: the ring key section says %u steps for %u kernels", name,
			  (unsigned)sig->ring_steps, (unsigned)sig->n_kernels);
		return -1;
	}
	for (uint32_t k = 0; sig->alloc_before && k < sig->n_kernels; k++) {
		unsigned long long v = sig->alloc_before[k];
		if (v > sig->n_alloc_sizes) {
			um_errmsg(err, errlen, "%s: the allocations-before section says kernel %u follows "
				  "%llu allocations (the iteration has %u)", name, (unsigned)k, v,
				  (unsigned)sig->n_alloc_sizes);
			return -1;
		}
		if (k && v < sig->alloc_before[k - 1]) {
			um_errmsg(err, errlen, "%s: the allocations-before section says kernel %u follows "
				  "%llu allocations (kernel before it: %llu)", name, (unsigned)k, v,
				  (unsigned long long)sig->alloc_before[k - 1]);
			return -1;
		}
	}
	uint64_t h = plan_signature_hash(sig->exec_ids, sig->n_kernels, sig->alloc_sizes,
					 sig->n_alloc_sizes);
	if (h != sig->hash) {
		um_errmsg(err, errlen, "%s: signature hash %016llx does not match its content "
		       "(%016llx)", name, (unsigned long long)sig->hash, (unsigned long long)h);
		return -1;
	}
	uint64_t bs = p->assume.block_size;
	if (!bs || (bs & (bs - 1))) {
		um_errmsg(err, errlen, "%s: block size %llu is not a power of two", name,
		       (unsigned long long)bs);
		return -1;
	}
	const char *missing = NULL;
	if (p->n_allocs && !p->allocs)
		missing = "allocations";
	else if (p->n_ops && !p->ops)
		missing = "ops";
	else if (p->n_host && !p->host)
		missing = "host entries";
	if (missing) {
		um_errmsg(err, errlen, "%s: the plan counts %s it does not have", name, missing);
		return -1;
	}
	if (validate_allocs(p, name, err, errlen) != 0 || validate_host(p, name, err, errlen) != 0)
		return -1;
	for (uint64_t i = 0; i < p->n_ops; i++)
		if (validate_op(p, i, name, err, errlen) != 0)
			return -1;
	return p->corr ? validate_corr(p, name, err, errlen) : 0;
}

/* ---- encoding ---- */

static void put_str(struct bytes_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	bytes_put_u32(b, (uint32_t)n);
	bytes_put_raw(b, s, n);
}

static int add(planfile_writer *w, uint32_t id, struct bytes_buf *b)
{
	int rc = b->oom ? -1 : planfile_writer_add(w, id, b->data, b->len);
	bytes_buf_free(b);
	return rc;
}

/* Adds section id holding n, then v[0 .. n) (the optional sections of one
 * u64 per item, decode_u64s_per), through b, an empty scratch buffer. */
static int add_u64s(planfile_writer *w, uint32_t id, struct bytes_buf *b, const uint64_t *v, uint32_t n)
{
	bytes_put_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		bytes_put_u64(b, v[i]);
	return add(w, id, b);
}

/* Sections 8 and 10 of plan_encode, with b its empty scratch buffer. */
static int encode_host(const struct plan *p, planfile_writer *w, struct bytes_buf *b)
{
	/* Absent rather than empty, so a plan without host placement reads
	 * the same as a version 1 plan. */
	if (!p->n_host)
		return 0;
	bytes_put_u32(b, p->n_host);
	for (uint32_t i = 0; i < p->n_host; i++)
		bytes_put_u32(b, p->host[i]);
	if (add(w, PLAN_SEC_HOST, b) != 0)
		return -1;

	/* Only when an entry is partial: a reader without the section (one
	 * older than it) keeps whole allocations on the host, which never
	 * raises the residency the plan counted. */
	bool partial = false;
	for (uint32_t i = 0; p->host_offset && i < p->n_host; i++)
		partial |= p->host_offset[i] != 0;
	if (!partial)
		return 0;
	return add_u64s(w, PLAN_SEC_HOST_OFFSETS, b, p->host_offset, p->n_host);
}

int plan_encode(const struct plan *p, planfile_writer *w)
{
	struct bytes_buf b = { 0 };
	const struct plan_assumptions *a = &p->assume;
	const struct plan_predictions *pr = &p->predict;
	bytes_put_u64(&b, a->capacity_bytes);
	bytes_put_u64(&b, a->htod_bytes_per_s);
	bytes_put_u64(&b, a->dtoh_bytes_per_s);
	bytes_put_u64(&b, a->call_cost_ns);
	bytes_put_u64(&b, a->block_size);
	bytes_put_u64(&b, pr->peak_residency_bytes);
	bytes_put_u64(&b, pr->prefetch_bytes);
	bytes_put_u64(&b, pr->evict_bytes);
	bytes_put_u64(&b, pr->discard_bytes);
	bytes_put_u64(&b, pr->iteration_ns);
	if (add(w, PLAN_SEC_HEADER, &b) != 0)
		return -1;

	const struct plan_signature *sig = &p->signature;
	bytes_put_u32(&b, sig->n_kernels);
	for (uint32_t i = 0; i < sig->n_kernels; i++)
		bytes_put_u64(&b, sig->exec_ids[i]);
	bytes_put_u32(&b, sig->n_alloc_sizes);
	for (uint32_t i = 0; i < sig->n_alloc_sizes; i++)
		bytes_put_u64(&b, sig->alloc_sizes[i]);
	bytes_put_u64(&b, sig->hash);
	if (add(w, PLAN_SEC_SIGNATURE, &b) != 0)
		return -1;

	bytes_put_u32(&b, p->n_allocs);
	for (uint32_t i = 0; i < p->n_allocs; i++) {
		bytes_put_u8(&b, p->allocs[i].origin);
		bytes_put_u64(&b, p->allocs[i].ordinal);
		bytes_put_u64(&b, p->allocs[i].size);
	}
	if (add(w, PLAN_SEC_ALLOCS, &b) != 0)
		return -1;

	bytes_put_u64(&b, p->n_ops);
	for (uint64_t i = 0; i < p->n_ops; i++) {
		const struct plan_op *op = &p->ops[i];
		bytes_put_u32(&b, op->position);
		bytes_put_u8(&b, op->kind);
		bytes_put_u32(&b, op->after);
		bytes_put_u32(&b, op->deadline);
		bytes_put_u32(&b, op->alloc);
		bytes_put_u64(&b, op->offset);
		bytes_put_u64(&b, op->bytes);
	}
	if (add(w, PLAN_SEC_OPS, &b) != 0)
		return -1;

	if (p->corr) {
		corr_encode_exec(p->corr, &b);
		if (add(w, PLAN_SEC_CORR_EXEC, &b) != 0)
			return -1;
		corr_encode_blocks(p->corr, &b);
		if (add(w, PLAN_SEC_CORR_BLOCKS, &b) != 0)
			return -1;
	}

	const struct plan_provenance *pv = &p->provenance;
	put_str(&b, pv->umkit_version);
	put_str(&b, pv->trace_path);
	put_str(&b, pv->trace_command);
	put_str(&b, pv->iteration_method);
	bytes_put_u32(&b, pv->trace_iteration);
	bytes_put_u32(&b, pv->trace_iterations);
	if (add(w, PLAN_SEC_PROVENANCE, &b) != 0)
		return -1;

	if (sig->shape_ids && add_u64s(w, PLAN_SEC_SHAPES, &b, sig->shape_ids, sig->n_kernels) != 0)
		return -1;
	if (sig->alloc_before &&
	    add_u64s(w, PLAN_SEC_ALLOC_BEFORE, &b, sig->alloc_before, sig->n_kernels) != 0)
		return -1;
	if (sig->ring_keys) {
		bytes_put_u32(&b, sig->ring_steps);
		if (add_u64s(w, PLAN_SEC_RING_KEYS, &b, sig->ring_keys, sig->n_kernels) != 0)
			return -1;
	}

	/* Only when set: a reader without the section (one older than it)
	 * replays with the cache off, as it always did. */
	if (pv->framework_cache) {
		bytes_put_u8(&b, 1);
		if (add(w, PLAN_SEC_FRAMEWORK_CACHE, &b) != 0)
			return -1;
	}

	return encode_host(p, w, &b);
}

int plan_save(const struct plan *p, const char *path, char *err, size_t errlen)
{
	if (plan_validate(p, path, err, errlen) != 0)
		return -1;
	planfile_writer *w = planfile_writer_create();
	if (!w || plan_encode(p, w) != 0) {
		planfile_writer_destroy(w);
		um_errmsg(err, errlen, "%s: out of memory", path);
		return -1;
	}
	int rc = planfile_writer_save(w, path, err, errlen);
	planfile_writer_destroy(w);
	return rc;
}

/* ---- decoding ---- */

/* A fresh reader over section id, or a failed one (message in err) when the
 * file lacks it. */
static bool section(const planfile *pf, uint32_t id, const char *what, struct bytes_reader *r,
		    const char *name, char *err, size_t errlen)
{
	size_t len;
	const void *d = planfile_section(pf, id, &len);
	if (!d) {
		um_errmsg(err, errlen, "%s: the %s section is missing", name, what);
		return false;
	}
	*r = bytes_reader_init(d, len);
	return true;
}

/* True when r read exactly its section; else sets err. */
static bool finished(const struct bytes_reader *r, const char *what, const char *name,
		     char *err, size_t errlen)
{
	if (bytes_reader_ok(r) && r->pos == r->len)
		return true;
	um_errmsg(err, errlen, "%s: the %s section is %s", name, what,
	       bytes_reader_ok(r) ? "longer than its content" : "truncated");
	return false;
}

/* A malloc'ed copy of a length-prefixed string, or NULL (r marked bad for a
 * truncated string; *bad_nul set for an embedded NUL). */
static char *get_str(struct bytes_reader *r, bool *bad_nul)
{
	uint32_t n = bytes_get_u32(r);
	const char *s = bytes_get_raw(r, n);
	if (!s)
		return NULL;
	if (memchr(s, 0, n)) {
		*bad_nul = true;
		return NULL;
	}
	char *out = malloc((size_t)n + 1);
	if (out) {
		memcpy(out, s, n);
		out[n] = 0;
	}
	return out;
}

static bool decode_header(struct plan *p, const planfile *pf, const char *name, char *err,
			  size_t errlen)
{
	struct bytes_reader r;
	if (!section(pf, PLAN_SEC_HEADER, "header", &r, name, err, errlen))
		return false;
	p->assume.capacity_bytes = bytes_get_u64(&r);
	p->assume.htod_bytes_per_s = bytes_get_u64(&r);
	p->assume.dtoh_bytes_per_s = bytes_get_u64(&r);
	p->assume.call_cost_ns = bytes_get_u64(&r);
	p->assume.block_size = bytes_get_u64(&r);
	p->predict.peak_residency_bytes = bytes_get_u64(&r);
	p->predict.prefetch_bytes = bytes_get_u64(&r);
	p->predict.evict_bytes = bytes_get_u64(&r);
	p->predict.discard_bytes = bytes_get_u64(&r);
	p->predict.iteration_ns = bytes_get_u64(&r);
	return finished(&r, "header", name, err, errlen);
}

/* Reads a u32 count of u64 values into a new array. */
static bool get_u64s(struct bytes_reader *r, uint32_t *n, uint64_t **out, bool *oom)
{
	*n = bytes_get_u32(r);
	if (!bytes_can_hold(r, *n, 8))
		return false;
	*out = malloc((*n ? *n : 1) * sizeof **out);
	if (!*out) {
		*oom = true;
		return false;
	}
	for (uint32_t i = 0; i < *n; i++)
		(*out)[i] = bytes_get_u64(r);
	return true;
}

static bool decode_signature(struct plan *p, const planfile *pf, const char *name, char *err,
			     size_t errlen)
{
	struct bytes_reader r;
	struct plan_signature *sig = &p->signature;
	bool oom = false;
	if (!section(pf, PLAN_SEC_SIGNATURE, "signature", &r, name, err, errlen))
		return false;
	if (get_u64s(&r, &sig->n_kernels, &sig->exec_ids, &oom) &&
	    get_u64s(&r, &sig->n_alloc_sizes, &sig->alloc_sizes, &oom))
		sig->hash = bytes_get_u64(&r);
	else
		r.bad = true;
	/* A failed count leaves its array unset: the count must not claim it. */
	if (!sig->exec_ids)
		sig->n_kernels = 0;
	if (!sig->alloc_sizes)
		sig->n_alloc_sizes = 0;
	if (oom) {
		um_errmsg(err, errlen, "%s: out of memory", name);
		return false;
	}
	return finished(&r, "signature", name, err, errlen);
}

static bool decode_allocs(struct plan *p, const planfile *pf, const char *name, char *err,
			  size_t errlen)
{
	struct bytes_reader r;
	if (!section(pf, PLAN_SEC_ALLOCS, "allocations", &r, name, err, errlen))
		return false;
	uint32_t n = bytes_get_u32(&r);
	if (!bytes_can_hold(&r, n, 17)) {
		r.bad = true;
		return finished(&r, "allocations", name, err, errlen);
	}
	p->allocs = calloc(n ? n : 1, sizeof *p->allocs);
	if (!p->allocs) {
		um_errmsg(err, errlen, "%s: out of memory", name);
		return false;
	}
	p->n_allocs = n;
	for (uint32_t i = 0; i < n; i++) {
		p->allocs[i].origin = bytes_get_u8(&r);
		p->allocs[i].ordinal = bytes_get_u64(&r);
		p->allocs[i].size = bytes_get_u64(&r);
	}
	return finished(&r, "allocations", name, err, errlen);
}

static bool decode_ops(struct plan *p, const planfile *pf, const char *name, char *err,
		       size_t errlen)
{
	struct bytes_reader r;
	if (!section(pf, PLAN_SEC_OPS, "ops", &r, name, err, errlen))
		return false;
	uint64_t n = bytes_get_u64(&r);
	if (!bytes_can_hold(&r, n, 33)) {
		r.bad = true;
		return finished(&r, "ops", name, err, errlen);
	}
	p->ops = calloc(n ? (size_t)n : 1, sizeof *p->ops);
	if (!p->ops) {
		um_errmsg(err, errlen, "%s: out of memory", name);
		return false;
	}
	p->n_ops = n;
	for (uint64_t i = 0; i < n; i++) {
		struct plan_op *op = &p->ops[i];
		op->position = bytes_get_u32(&r);
		op->kind = bytes_get_u8(&r);
		op->after = bytes_get_u32(&r);
		op->deadline = bytes_get_u32(&r);
		op->alloc = bytes_get_u32(&r);
		op->offset = bytes_get_u64(&r);
		op->bytes = bytes_get_u64(&r);
	}
	return finished(&r, "ops", name, err, errlen);
}

static bool decode_corr(struct plan *p, const planfile *pf, const char *name, char *err,
			size_t errlen)
{
	size_t elen, blen;
	const void *e = planfile_section(pf, PLAN_SEC_CORR_EXEC, &elen);
	const void *b = planfile_section(pf, PLAN_SEC_CORR_BLOCKS, &blen);
	if (!e && !b)
		return true;
	if (!e || !b) {
		um_errmsg(err, errlen, "%s: the correlation %s section is missing", name,
		       e ? "block" : "exec");
		return false;
	}
	p->corr = corr_decode(e, elen, b, blen, name, err, errlen);
	return p->corr != NULL;
}

static bool decode_provenance(struct plan *p, const planfile *pf, const char *name, char *err,
			      size_t errlen)
{
	struct bytes_reader r;
	struct plan_provenance *pv = &p->provenance;
	bool bad_nul = false;
	if (!section(pf, PLAN_SEC_PROVENANCE, "provenance", &r, name, err, errlen))
		return false;
	char **strs[] = { &pv->umkit_version, &pv->trace_path, &pv->trace_command,
			  &pv->iteration_method };
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		*strs[i] = get_str(&r, &bad_nul);
		if (!*strs[i] && bytes_reader_ok(&r) && !bad_nul) {
			um_errmsg(err, errlen, "%s: out of memory", name);
			return false;
		}
		if (bad_nul) {
			um_errmsg(err, errlen, "%s: the provenance section has a string with a NUL byte",
			       name);
			return false;
		}
	}
	pv->trace_iteration = bytes_get_u32(&r);
	pv->trace_iterations = bytes_get_u32(&r);
	return finished(&r, "provenance", name, err, errlen);
}

/* Optional: a plan without the section keeps nothing on the host. */
static bool decode_host(struct plan *p, const planfile *pf, const char *name, char *err,
			size_t errlen)
{
	size_t len;
	const void *d = planfile_section(pf, PLAN_SEC_HOST, &len);
	if (!d)
		return true;
	/* Version 2 brought the section (docs/plan-format.md,
	 * "Compatibility"): a version 1 writer never meant one, and a
	 * version 1 reader would migrate what it keeps on the host. */
	if (p->format_version < 2) {
		um_errmsg(err, errlen, "%s: it keeps allocations on the host (section 8), which format "
			  "version %u cannot hold", name, (unsigned)p->format_version);
		return false;
	}
	struct bytes_reader r = bytes_reader_init(d, len);
	uint32_t n = bytes_get_u32(&r);
	if (!bytes_can_hold(&r, n, 4)) {
		r.bad = true;
		return finished(&r, "host placement", name, err, errlen);
	}
	p->host = malloc((n ? n : 1) * sizeof *p->host);
	if (!p->host) {
		um_errmsg(err, errlen, "%s: out of memory", name);
		return false;
	}
	p->n_host = n;
	for (uint32_t i = 0; i < n; i++)
		p->host[i] = bytes_get_u32(&r);
	return finished(&r, "host placement", name, err, errlen);
}

/* An optional section of one u64 per item of something the plan already
 * counts (want items of `of`), after a u32 into *head where head is not
 * NULL; *out stays NULL without it. what names the section in errors:
 * "the shape section lists 5 kernels, the signature 6". */
static bool decode_u64s_per(const planfile *pf, uint32_t id, uint32_t *head, const char *what,
			    const char *items, const char *of, uint32_t want, uint64_t **out,
			    const char *name, char *err, size_t errlen)
{
	size_t len;
	const void *d = planfile_section(pf, id, &len);
	if (!d)
		return true;
	struct bytes_reader r = bytes_reader_init(d, len);
	if (head)
		*head = bytes_get_u32(&r);
	uint32_t n = 0;
	bool oom = false;
	if (!get_u64s(&r, &n, out, &oom))
		r.bad = true;
	if (oom) {
		um_errmsg(err, errlen, "%s: out of memory", name);
		return false;
	}
	if (bytes_reader_ok(&r) && n != want) {
		um_errmsg(err, errlen, "%s: the %s section lists %u %s, the %s %u", name, what,
			  (unsigned)n, items, of, (unsigned)want);
		return false;
	}
	return finished(&r, what, name, err, errlen);
}

/* Optional: without the section every host entry is whole. With it, one
 * offset per host entry. */
static bool decode_host_offsets(struct plan *p, const planfile *pf, const char *name, char *err,
				size_t errlen)
{
	return decode_u64s_per(pf, PLAN_SEC_HOST_OFFSETS, NULL, "host offset", "entries",
			       "host placement section", p->n_host, &p->host_offset, name, err, errlen);
}

/* Optional: without the section, the replayer matches by execution ID
 * alone. With it, one shape per kernel of the signature. */
static bool decode_shapes(struct plan *p, const planfile *pf, const char *name, char *err,
			  size_t errlen)
{
	return decode_u64s_per(pf, PLAN_SEC_SHAPES, NULL, "shape", "kernels", "signature",
			       p->signature.n_kernels, &p->signature.shape_ids, name, err, errlen);
}

/* Optional: without the section, the replayer numbers an iteration's
 * allocations from its start alone. With it, one count per kernel of the
 * signature (plan_validate checks their order). */
static bool decode_alloc_before(struct plan *p, const planfile *pf, const char *name, char *err,
				size_t errlen)
{
	return decode_u64s_per(pf, PLAN_SEC_ALLOC_BEFORE, NULL, "allocations-before", "kernels",
			       "signature", p->signature.n_kernels, &p->signature.alloc_before, name,
			       err, errlen);
}

/* Optional: without the section the plan has no ring of buffers (a
 * replayer older than the section follows a ring by IDs alone). With it,
 * the ring's steps, then one allocation ordinal (or 0) per kernel of the
 * signature (plan_validate checks the steps). */
static bool decode_ring_keys(struct plan *p, const planfile *pf, const char *name, char *err,
			     size_t errlen)
{
	struct plan_signature *sig = &p->signature;
	return decode_u64s_per(pf, PLAN_SEC_RING_KEYS, &sig->ring_steps, "ring key", "kernels",
			       "signature", sig->n_kernels, &sig->ring_keys, name, err, errlen);
}

/* Optional: without the section the trace was recorded with PyTorch's
 * cache off. With it, one byte, 1. */
static bool decode_framework_cache(struct plan *p, const planfile *pf, const char *name, char *err,
				   size_t errlen)
{
	size_t len;
	const void *d = planfile_section(pf, PLAN_SEC_FRAMEWORK_CACHE, &len);
	if (!d)
		return true;
	struct bytes_reader r = bytes_reader_init(d, len);
	uint8_t v = bytes_get_u8(&r);
	if (bytes_reader_ok(&r) && v != 1) {
		um_errmsg(err, errlen, "%s: the framework cache section says %u (only 1 is defined)", name,
			  (unsigned)v);
		return false;
	}
	p->provenance.framework_cache = true;
	return finished(&r, "framework cache", name, err, errlen);
}

/* plan_load over an opened container; name is used in messages. */
static struct plan *plan_decode(const planfile *pf, const char *name, char *err, size_t errlen)
{
	struct plan *p = calloc(1, sizeof *p);
	if (!p) {
		um_errmsg(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	p->format_version = planfile_version(pf);
	if (decode_header(p, pf, name, err, errlen) && decode_signature(p, pf, name, err, errlen) &&
	    decode_allocs(p, pf, name, err, errlen) && decode_ops(p, pf, name, err, errlen) &&
	    decode_corr(p, pf, name, err, errlen) && decode_provenance(p, pf, name, err, errlen) &&
	    decode_host(p, pf, name, err, errlen) && decode_host_offsets(p, pf, name, err, errlen) &&
	    decode_shapes(p, pf, name, err, errlen) && decode_alloc_before(p, pf, name, err, errlen) &&
	    decode_ring_keys(p, pf, name, err, errlen) &&
	    decode_framework_cache(p, pf, name, err, errlen) &&
	    plan_validate(p, name, err, errlen) == 0)
		return p;
	plan_destroy(p);
	return NULL;
}

struct plan *plan_load(const char *path, char *err, size_t errlen)
{
	planfile *pf = planfile_open(path, err, errlen);
	if (!pf)
		return NULL;
	struct plan *p = plan_decode(pf, path, err, errlen);
	planfile_close(pf);
	return p;
}

struct plan *plan_load_mem(const void *data, size_t len, const char *name, char *err,
			   size_t errlen)
{
	planfile *pf = planfile_open_mem(data, len, name, err, errlen);
	if (!pf)
		return NULL;
	struct plan *p = plan_decode(pf, name, err, errlen);
	planfile_close(pf);
	return p;
}
