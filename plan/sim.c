/*
 * sim.c: the --simulate model (sim.h): the iteration's blocks and per-kernel
 * block sets, and one engine that runs ondemand, deepum and plan over them
 * (the policies differ only in what they issue before each kernel).
 */
#include "sim.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "block_heap.h"
#include "errmsg.h"
#include "minmax.h"
#include "search.h"

struct sim_ctx {
	const struct planner *pl;
	uint32_t p;
	size_t n_blocks;
	uint64_t *block;        /* sorted distinct block numbers */
	size_t *k_first, *k_blk; /* blocks used at k: k_blk[k_first[k] .. k_first[k + 1]) */
	size_t *d_first, *d_blk; /* blocks dead after a free at k (deepum discards) */
	size_t *o_first;         /* tensors spanning block b: */
	uint32_t *o_tensor;      /* o_tensor[o_first[b] .. o_first[b + 1]) */
	uint64_t *gap, *dur;    /* [p] idle time before kernel k, its duration */
	uint64_t *recorded;     /* [p] the recorded durations (dur may be perturbed) */
	uint64_t tail_ns;       /* idle time after the last kernel */
	uint64_t ideal_ns, live_peak;
};

static const char *const policy_names[SIM_N_POLICIES] = { "ideal", "ondemand", "deepum", "plan" };

const char *sim_policy_name(enum sim_policy p)
{
	return (unsigned)p < SIM_N_POLICIES ? policy_names[p] : "?";
}

void sim_options_default(const struct planner_options *po, struct sim_options *o)
{
	o->htod_bytes_per_s = po->htod_bytes_per_s;
	o->dtoh_bytes_per_s = po->dtoh_bytes_per_s;
	o->call_cost_ns = po->call_cost_ns;
	o->headroom_pct = po->headroom_pct;
	o->fault_bytes_per_s = SIM_FAULT_BPS;
	o->fault_batch_ns = SIM_FAULT_BATCH_NS;
}

uint64_t sim_live_peak(const struct sim_ctx *c) { return c->live_peak; }
uint64_t sim_blocks(const struct sim_ctx *c) { return c->n_blocks; }
const char *sim_trace_path(const struct sim_ctx *c) { return c->pl->trace->path; }

void sim_out_of_memory(const char *trace_path, char *err, size_t errlen)
{
	um_errmsg(err, errlen, "%s: --simulate: out of memory", trace_path);
}

int sim_floor(const struct sim_ctx *c, uint64_t capacity, const struct sim_options *o, struct capacity_floor *out,
	      char *err, size_t errlen)
{
	const struct planner *pl = c->pl;
	if (capacity_floor(&pl->tensors, &pl->access, &pl->vital, capacity, o->dtoh_bytes_per_s, out)) {
		sim_out_of_memory(sim_trace_path(c), err, errlen);
		return -1;
	}
	return 0;
}

/* Index of block number bn, which the table holds. */
static size_t block_index(const struct sim_ctx *c, uint64_t bn)
{
	return lower_bound_u64(c->block, c->n_blocks, sizeof *c->block, 0, bn);
}

/* Block index range [*i0, *i1] of bytes at address (bytes > 0); the blocks
 * of one tensor are consecutive in the table since all of them are in it. */
static void range_blocks(const struct sim_ctx *c, uint64_t address, uint64_t bytes, size_t *i0,
			 size_t *i1)
{
	uint64_t b0, b1;
	access_blocks(address, bytes, &b0, &b1);
	*i0 = block_index(c, b0);
	*i1 = *i0 + (size_t)(b1 - b0);
}

void sim_ctx_free(struct sim_ctx *c)
{
	if (!c)
		return;
	free(c->block);
	free(c->k_first);
	free(c->k_blk);
	free(c->d_first);
	free(c->d_blk);
	free(c->o_first);
	free(c->o_tensor);
	free(c->gap);
	free(c->dur);
	free(c->recorded);
	free(c);
}

/* Blocks of the tensors of each position into CSR form; with dead, the
 * blocks of tensors freed at k that no tensor live at k shares, else the
 * blocks the access set uses at k. stamp: [n_blocks] scratch, zeroed. */
static int build_sets(struct sim_ctx *c, bool dead, uint32_t *stamp, size_t **first_out,
		      size_t **blk_out)
{
	const struct tensor_set *ts = &c->pl->tensors;
	const struct access_set *a = &c->pl->access;
	size_t *first = calloc((size_t)c->p + 1, sizeof *first), n = 0, cap = 1024;
	size_t *blk = malloc(cap * sizeof *blk);
	if (!first || !blk)
		goto oom;
	memset(stamp, 0, c->n_blocks * sizeof *stamp);
	for (uint32_t k = 0; k < c->p; k++) {
		first[k] = n;
		if (dead) {
			/* Stamp the blocks of tensors live at k, then take the
			 * freed tensors' unstamped blocks. */
			bool any = false;
			for (size_t t = 0; t < ts->n && !any; t++)
				any = ts->t[t].freed && tensor_free_pos(ts, &ts->t[t]) == k;
			if (!any)
				continue;
			for (size_t t = 0; t < ts->n; t++) {
				if (!ts->t[t].bytes || !tensor_live_at(ts, &ts->t[t], k))
					continue;
				size_t i0, i1;
				range_blocks(c, ts->t[t].address, ts->t[t].bytes, &i0, &i1);
				for (size_t i = i0; i <= i1; i++)
					stamp[i] = k + 1;
			}
		}
		size_t nt = dead ? ts->n : a->first[k + 1] - a->first[k];
		for (size_t j = 0; j < nt; j++) {
			size_t t = dead ? j : a->tensor[a->first[k] + j];
			const struct tensor *x = &ts->t[t];
			if (!x->bytes || (dead && !(x->freed && tensor_free_pos(ts, x) == k)))
				continue;
			size_t i0, i1;
			range_blocks(c, x->address, x->bytes, &i0, &i1);
			for (size_t i = i0; i <= i1; i++) {
				if (stamp[i] == k + 1)
					continue;
				stamp[i] = k + 1;
				if (n == cap) {
					size_t *nb = realloc(blk, 2 * cap * sizeof *blk);
					if (!nb)
						goto oom;
					blk = nb;
					cap *= 2;
				}
				blk[n++] = i;
			}
		}
	}
	first[c->p] = n;
	*first_out = first;
	*blk_out = blk;
	return 0;
oom:
	free(first);
	free(blk);
	return -1;
}

struct sim_ctx *sim_ctx_new(const struct planner *pl, char *err, size_t errlen)
{
	const struct tensor_set *ts = &pl->tensors;
	const struct vital *v = &pl->vital;
	uint32_t *stamp = NULL;
	struct sim_ctx *c = calloc(1, sizeof *c);
	if (!c)
		goto oom;
	c->pl = pl;
	c->p = ts->n_pos;
	size_t nb = 0;
	for (size_t t = 0; t < ts->n; t++)
		if (ts->t[t].bytes)
			nb += (size_t)(((ts->t[t].address + ts->t[t].bytes - 1) >> ACCESS_BLOCK_SHIFT) -
				       (ts->t[t].address >> ACCESS_BLOCK_SHIFT)) + 1;
	/* The model keeps a few words per block: past this, a trace (one
	 * edited by hand, say: the loader allows 2^60 bytes) would have it
	 * allocate more than the host has. */
	if (nb > SIM_MAX_BLOCKS) {
		um_errmsg(err, errlen, "%s: the iteration's tensors span %zu blocks of 2 MiB, more than --simulate "
			  "models (%llu: 32 TiB)", pl->trace->path, nb, (unsigned long long)SIM_MAX_BLOCKS);
		sim_ctx_free(c);
		return NULL;
	}
	/* And a word for each block each kernel uses (k_blk): a tensor's
	 * blocks count again for every kernel using it, so a tensor of 16 TiB
	 * that 17 kernels use took 1.1 GB there (2 GiB while the array grew),
	 * and every kernel more 64 MiB, and as much work per iteration. Each
	 * span is at most nb: the sum cannot wrap. */
	const struct access_set *a = &pl->access;
	uint64_t uses = 0;
	for (uint32_t k = 0; k < c->p; k++)
		for (uint32_t j = a->first[k]; j < a->first[k + 1]; j++) {
			const struct tensor *x = &ts->t[a->tensor[j]];
			if (x->bytes)
				uses += ((x->address + x->bytes - 1) >> ACCESS_BLOCK_SHIFT) -
					(x->address >> ACCESS_BLOCK_SHIFT) + 1;
		}
	if (uses > SIM_MAX_BLOCK_USES) {
		um_errmsg(err, errlen, "%s: the iteration's kernels' tensors span %llu blocks of 2 MiB in all (a "
			  "tensor's once for each kernel using it), more than --simulate models (%llu)",
			  pl->trace->path, (unsigned long long)uses, (unsigned long long)SIM_MAX_BLOCK_USES);
		sim_ctx_free(c);
		return NULL;
	}
	c->block = malloc((nb ? nb : 1) * sizeof *c->block);
	c->gap = calloc(c->p, sizeof *c->gap);
	c->dur = calloc(c->p, sizeof *c->dur);
	c->recorded = calloc(c->p, sizeof *c->recorded);
	if (!c->block || !c->gap || !c->dur || !c->recorded)
		goto oom;
	for (size_t t = 0; t < ts->n; t++) {
		if (!ts->t[t].bytes)
			continue;
		uint64_t b0, b1;
		access_blocks(ts->t[t].address, ts->t[t].bytes, &b0, &b1);
		for (uint64_t b = b0; b <= b1; b++)
			c->block[c->n_blocks++] = b;
	}
	qsort(c->block, c->n_blocks, sizeof *c->block, compare_u64);
	size_t u = 0;
	for (size_t i = 0; i < c->n_blocks; i++)
		if (!u || c->block[u - 1] != c->block[i])
			c->block[u++] = c->block[i];
	c->n_blocks = u;

	/* Kernels serialised on one stream: recorded durations and the idle
	 * gaps before each (zero where recorded kernels overlap). */
	uint64_t prev_end = 0;
	for (uint32_t k = 0; k < c->p; k++) {
		uint64_t s = v->start_ns[k], e = v->end_ns[k];
		c->gap[k] = s > prev_end ? s - prev_end : 0;
		c->dur[k] = c->recorded[k] = vital_kernel_ns(v, k);
		prev_end = e > prev_end ? e : prev_end;
		c->ideal_ns += c->gap[k] + c->dur[k];
	}
	c->tail_ns = v->cycle_ns > prev_end ? v->cycle_ns - prev_end : 0;
	c->ideal_ns += c->tail_ns;

	/* W as report.c computes it: allocation bytes live per position. */
	for (uint32_t k = 0; k < c->p; k++) {
		uint64_t live = 0;
		for (size_t t = 0; t < ts->n; t++)
			if (tensor_live_at(ts, &ts->t[t], k))
				live += ts->t[t].bytes;
		if (live > c->live_peak)
			c->live_peak = live;
	}

	/* The tensors of each block, for discards of shared blocks. */
	c->o_first = calloc(c->n_blocks + 1, sizeof *c->o_first);
	c->o_tensor = malloc((nb ? nb : 1) * sizeof *c->o_tensor);
	if (!c->o_first || !c->o_tensor)
		goto oom;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t t = 0; t < ts->n; t++) {
			if (!ts->t[t].bytes)
				continue;
			size_t i0, i1;
			range_blocks(c, ts->t[t].address, ts->t[t].bytes, &i0, &i1);
			for (size_t i = i0; i <= i1; i++) {
				if (pass == 0)
					c->o_first[i + 1]++;
				else
					c->o_tensor[c->o_first[i]++] = (uint32_t)t;
			}
		}
		if (pass == 0)
			for (size_t i = 0; i < c->n_blocks; i++)
				c->o_first[i + 1] += c->o_first[i];
	}
	/* The second pass advanced each o_first[b] to the start of b + 1. */
	memmove(c->o_first + 1, c->o_first, c->n_blocks * sizeof *c->o_first);
	c->o_first[0] = 0;

	stamp = calloc(c->n_blocks ? c->n_blocks : 1, sizeof *stamp);
	if (!stamp || build_sets(c, false, stamp, &c->k_first, &c->k_blk) ||
	    build_sets(c, true, stamp, &c->d_first, &c->d_blk))
		goto oom;
	free(stamp);
	return c;
oom:
	free(stamp);
	sim_ctx_free(c);
	sim_out_of_memory(pl->trace->path, err, errlen);
	return NULL;
}

/* ---- the engine ---- */

/* B_DEAD: discarded, its data gone; it comes back with nothing to copy. */
enum { B_NONE, B_RES, B_EVICTING, B_DEAD };

struct eng {
	const struct sim_ctx *c;
	const struct sim_options *o;
	size_t cap;          /* blocks */
	uint8_t *st;         /* [n_blocks] B_* */
	uint64_t *at;        /* B_RES: arrival time; B_EVICTING: when its room is free */
	uint64_t *lru;       /* last use (or arrival), for LRU */
	uint32_t *pin;       /* == pin_stamp: needed now, never a victim */
	uint32_t pin_stamp;
	bool over;           /* the kernel at hand has more blocks than cap */
	size_t occupied;     /* B_RES + B_EVICTING blocks: what holds GPU memory */
	size_t n_evicting;
	uint64_t link_free, clock; /* migrations, both ways, one at a time */
	bool measure;        /* the second iteration: count traffic */
	/* The choices room() makes, by heap (plan/block_heap.h): evictions in
	 * flight by the time their room is free, resident blocks by last use.
	 * An entry is live while its block's state and key still match. */
	struct block_heap evicting, by_use;
	struct block_heap pinned; /* by_use's entries pinned at aside_stamp, set aside */
	uint32_t aside_stamp;
	bool oom;            /* a heap could not grow: the result is void */
	struct sim_result *r;
};

static bool evicting_live(const void *eng, struct block_key x)
{
	const struct eng *e = eng;
	return e->st[x.block] == B_EVICTING && e->at[x.block] == x.key;
}

static bool by_use_live(const void *eng, struct block_key x)
{
	const struct eng *e = eng;
	return e->st[x.block] == B_RES && e->lru[x.block] == x.key;
}

/* Adds (key, b) to h; past a few entries per block, drops the stale ones
 * first, so that a long run's heap stays the size of the GPU's blocks. */
static void heap_note(struct eng *e, struct block_heap *h, bool (*live)(const void *, struct block_key),
		      uint64_t key, size_t b)
{
	if (h->n >= 4 * e->c->n_blocks + 1024)
		block_heap_keep(h, live, e);
	if (block_heap_push(h, key, b))
		e->oom = true;
}

/* Marks block b used now. */
static void touch(struct eng *e, size_t b)
{
	e->lru[b] = ++e->clock;
	heap_note(e, &e->by_use, by_use_live, e->lru[b], b);
}


static uint64_t xfer_ns(uint64_t bytes, uint64_t bps)
{
	return (uint64_t)((double)bytes * 1e9 / (double)bps);
}

/* Puts a transfer or call of d on the link from start (>= link_free). */
static void occupy(struct eng *e, uint64_t start, uint64_t d)
{
	e->link_free = start + d;
	if (e->measure)
		e->r->link_busy_ns += d;
}

/* Room held by evictions finished by t is free again. */
static void reclaim(struct eng *e, uint64_t t)
{
	struct block_key x;
	while (e->n_evicting && block_heap_top(&e->evicting, &x) && x.key <= t) {
		block_heap_pop(&e->evicting);
		if (evicting_live(e, x)) {
			e->st[x.block] = B_NONE;
			e->occupied--;
			e->n_evicting--;
		}
	}
}

/* The eviction in flight that ends first (the lowest block on a tie);
 * taken off the heap. There is one: n_evicting > 0. */
static size_t first_evicted(struct eng *e)
{
	struct block_key x;
	while (block_heap_top(&e->evicting, &x)) {
		block_heap_pop(&e->evicting);
		if (evicting_live(e, x))
			return x.block;
	}
	return SIZE_MAX; /* a heap that could not grow (e->oom) */
}

/* The least recently used resident block not pinned now, or SIZE_MAX;
 * taken off the heap. The pinned ones it passes are set aside until the
 * pins change (a new kernel's): until then they cannot be victims, and a
 * kernel larger than the capacity would otherwise have every one of its
 * faults pass them all again. */
static size_t lru_victim(struct eng *e)
{
	struct block_key x;
	if (e->aside_stamp != e->pin_stamp) {
		while (block_heap_top(&e->pinned, &x)) {
			block_heap_pop(&e->pinned);
			heap_note(e, &e->by_use, by_use_live, x.key, x.block);
		}
		e->aside_stamp = e->pin_stamp;
	}
	while (block_heap_top(&e->by_use, &x)) {
		block_heap_pop(&e->by_use);
		if (!by_use_live(e, x))
			continue;
		if (e->pin[x.block] != e->pin_stamp)
			return x.block;
		if (block_heap_push(&e->pinned, x.key, x.block))
			e->oom = true;
	}
	return SIZE_MAX;
}

/* Starts copying resident block b to the host at t or later on the link
 * (after it has arrived). */
static void evict(struct eng *e, size_t b, uint64_t t)
{
	uint64_t start = max_u64(max_u64(t, e->link_free), e->at[b]);
	occupy(e, start, xfer_ns(SIM_BLOCK_BYTES, e->o->dtoh_bytes_per_s));
	e->st[b] = B_EVICTING;
	e->at[b] = e->link_free;
	heap_note(e, &e->evicting, evicting_live, e->at[b], b);
	e->n_evicting++;
	e->r->evicted++;
	if (e->measure)
		e->r->dtoh_bytes += SIM_BLOCK_BYTES;
}

/* room()'s answer when every block on the GPU is pinned and none is
 * leaving. */
#define NO_ROOM UINT64_MAX

/* The time, from t, at which one more block fits; takes that room. While
 * full: the eviction in flight that ends first, else the driver's LRU
 * victim among unpinned blocks, evicted now; as many as it takes, since a
 * kernel larger than the capacity may have left it over. NO_ROOM when
 * only pinned blocks are left: a kernel whose own blocks exceed the
 * capacity takes its room anyway (the model oversubscribes there), and
 * fetch() says when a prefetch may. */
static uint64_t room(struct eng *e, uint64_t t)
{
	reclaim(e, t);
	while (e->occupied >= e->cap) {
		size_t v = e->n_evicting ? first_evicted(e) : SIZE_MAX;
		if (v == SIZE_MAX) {
			v = lru_victim(e);
			if (v == SIZE_MAX)
				return NO_ROOM;
			evict(e, v, t);
		}
		e->st[v] = B_NONE;
		e->occupied--;
		e->n_evicting--;
		t = max_u64(t, e->at[v]);
	}
	return t;
}

/* A block on its way out must finish leaving before it can come back. */
static uint64_t settle(struct eng *e, size_t b, uint64_t t)
{
	if (e->st[b] != B_EVICTING)
		return t;
	e->st[b] = B_NONE;
	e->occupied--;
	e->n_evicting--;
	return max_u64(t, e->at[b]);
}

static void arrive(struct eng *e, size_t b, uint64_t done, bool copy)
{
	e->st[b] = B_RES;
	e->at[b] = done;
	touch(e, b);
	e->occupied++;
	e->r->brought++;
	if (e->measure && copy)
		e->r->htod_bytes += SIM_BLOCK_BYTES;
}

/* Prefetch (copy) or populate (no copy) block b, issued at t, on the link
 * behind the room it needs. Where the GPU holds only pinned blocks
 * (room()), none, unless the kernel now running is itself larger than
 * the capacity: the model oversubscribes there. A discarded block has
 * nothing to copy: the replayer repopulates it by a discard-and-prefetch
 * (docs/replay.md). False where none was issued. */
static bool fetch(struct eng *e, size_t b, uint64_t t, bool copy)
{
	if (e->st[b] == B_RES)
		return true;
	copy &= e->st[b] != B_DEAD;
	uint64_t left = settle(e, b, t), fits = room(e, left);
	if (fits == NO_ROOM) {
		if (!e->over)
			return false;
		fits = left;
	}
	uint64_t start = max_u64(fits, e->link_free);
	occupy(e, start, copy ? xfer_ns(SIM_BLOCK_BYTES, e->o->htod_bytes_per_s) : 0);
	arrive(e, b, e->link_free, copy);
	return true;
}

/* True when no tensor but t, live at k, spans block b: discarding the
 * block (the driver drops pages, not neighbours' data) loses nothing. */
static bool block_only(const struct sim_ctx *c, size_t b, uint32_t t, uint32_t k)
{
	const struct tensor_set *ts = &c->pl->tensors;
	for (size_t i = c->o_first[b]; i < c->o_first[b + 1]; i++)
		if (c->o_tensor[i] != t && tensor_live_at(ts, &ts->t[c->o_tensor[i]], k))
			return false;
	return true;
}

static void discard(struct eng *e, size_t b)
{
	if (e->st[b] != B_RES)
		return;
	e->st[b] = B_DEAD;
	e->occupied--;
	e->r->discarded++;
}

/* One migration call's fixed cost on the link, from t. */
static void call(struct eng *e, uint64_t t)
{
	occupy(e, max_u64(e->link_free, t), e->o->call_cost_ns);
}

static void pin_kernel(struct eng *e, uint32_t k)
{
	const struct sim_ctx *c = e->c;
	for (size_t i = c->k_first[k]; i < c->k_first[k + 1]; i++)
		e->pin[c->k_blk[i]] = e->pin_stamp;
}

/* Runs kernel k from t0 (its blocks pinned): faults in what is missing,
 * waits for what is arriving. Returns its end. */
static uint64_t run_kernel(struct eng *e, uint32_t k, uint64_t t0)
{
	const struct sim_ctx *c = e->c;
	uint64_t t = t0, ready = t0;
	bool faulted = false;
	for (size_t i = c->k_first[k]; i < c->k_first[k + 1]; i++) {
		size_t b = c->k_blk[i];
		if (e->st[b] == B_RES) {
			ready = max_u64(ready, e->at[b]);
			continue;
		}
		/* The driver serves a kernel's faults in one batch, one block at
		 * a time, each after the eviction making its room. */
		if (!faulted)
			t += e->o->fault_batch_ns;
		faulted = true;
		bool copy = e->st[b] != B_DEAD; /* a discarded block: fresh pages */
		t = settle(e, b, t);
		uint64_t fits = room(e, t);
		if (fits != NO_ROOM)
			t = fits;
		if (copy)
			t += xfer_ns(SIM_BLOCK_BYTES, e->o->fault_bytes_per_s);
		arrive(e, b, t, copy);
		if (e->measure)
			e->r->faults++;
	}
	uint64_t start = max_u64(t, ready);
	for (size_t i = c->k_first[k]; i < c->k_first[k + 1]; i++)
		touch(e, c->k_blk[i]);
	if (e->measure)
		e->r->stall_ns += start - t0;
	return start + c->dur[k];
}

/* The plan's ops before kernel k at t (ops in position order, op_at[k] ..
 * op_at[k + 1]). */
static void plan_ops(struct eng *e, const struct sched_result *sr, const size_t *op_at, uint32_t k,
		     uint64_t t)
{
	const struct tensor_set *ts = &e->c->pl->tensors;
	for (size_t j = op_at[k]; j < op_at[k + 1]; j++) {
		const struct plan_op *op = &sr->ops[j];
		const struct tensor *x = &ts->t[op->alloc];
		if (!op->bytes)
			continue;
		size_t i0, i1;
		range_blocks(e->c, x->address + op->offset, op->bytes, &i0, &i1);
		if (op->kind != PLAN_OP_DISCARD)
			call(e, t);
		for (size_t b = i0; b <= i1; b++) {
			switch (op->kind) {
			case PLAN_OP_DISCARD:
				if (block_only(e->c, b, op->alloc, k))
					discard(e, b);
				break;
			case PLAN_OP_EVICT:
				/* Not a block kernel k uses (the evicted
				 * tensor's neighbour's, in a block they share):
				 * nor does the replayer evict one (replay/act.c),
				 * which the kernel would fault straight back. */
				if (e->st[b] == B_RES && e->pin[b] != e->pin_stamp)
					evict(e, b, t);
				break;
			case PLAN_OP_DISCARD_PREFETCH:
				/* A shared block keeps its neighbour's data: a
				 * prefetch then, not a populate. */
				if (block_only(e->c, b, op->alloc, k)) {
					discard(e, b);
					fetch(e, b, t, false);
				} else {
					fetch(e, b, t, true);
				}
				break;
			default: fetch(e, b, t, true); break;
			}
		}
	}
}

/* DeepUM before kernel k at t: discard what died, prefetch the next
 * kernels' blocks (one call per target kernel that needs any, charged
 * only where the batch moves something: a prefetch that finds only pinned
 * blocks is not issued); then only k's own blocks stay pinned, so that
 * its faults may take the room of blocks prefetched for later. */
static void deepum_ops(struct eng *e, uint32_t k, uint64_t t)
{
	const struct sim_ctx *c = e->c;
	for (size_t i = c->d_first[k]; i < c->d_first[k + 1]; i++)
		discard(e, c->d_blk[i]);
	for (uint32_t d = 1; d <= SIM_DEEPUM_LOOKAHEAD; d++)
		pin_kernel(e, (k + d) % c->p);
	for (uint32_t d = 1; d <= SIM_DEEPUM_LOOKAHEAD; d++) {
		uint32_t n = (k + d) % c->p;
		bool called = false;
		for (size_t i = c->k_first[n]; i < c->k_first[n + 1]; i++) {
			size_t b = c->k_blk[i];
			if (e->st[b] == B_RES)
				continue;
			uint64_t link_free = e->link_free, busy = e->r->link_busy_ns, evicted = e->r->evicted;
			if (!called)
				call(e, t);
			bool moved = fetch(e, b, t, true) || e->r->evicted != evicted;
			if (!called && !moved) { /* not issued: no call */
				e->link_free = link_free;
				e->r->link_busy_ns = busy;
			}
			called |= moved;
		}
	}
	e->pin_stamp++;
	pin_kernel(e, k);
}

static int cmp_op(const void *a, const void *b)
{
	const struct plan_op *x = a, *y = b;
	/* The plan's order (plan.h): room is made before data comes in. */
	if (x->position != y->position)
		return x->position < y->position ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->alloc != y->alloc)
		return x->alloc < y->alloc ? -1 : 1;
	return (x->offset > y->offset) - (x->offset < y->offset);
}

static void sched_options_for(const struct sim_options *o, uint64_t capacity,
			      struct sched_options *so)
{
	so->capacity = sched_headroom(capacity, o->headroom_pct);
	so->htod_bytes_per_s = o->htod_bytes_per_s;
	so->dtoh_bytes_per_s = o->dtoh_bytes_per_s;
	so->call_cost_ns = o->call_cost_ns;
	so->smart = SCHED_SMART_AUTO;
}

int sim_residency(const struct sim_ctx *c, uint64_t capacity, const struct sim_options *o,
		  uint64_t **before, uint64_t **after, uint32_t *n_pos, char *err, size_t errlen)
{
	const struct planner *pl = c->pl;
	struct sched_options so;
	sched_options_for(o, capacity, &so);
	struct sched_result sr = { 0 };
	if (sched_run(&pl->tensors, &pl->access, &pl->vital, &so, &sr, err, errlen))
		return -1;
	size_t sz = (c->p ? c->p : 1) * sizeof(uint64_t);
	*before = malloc(sz);
	*after = malloc(sz);
	if (!*before || !*after) {
		free(*before);
		free(*after);
		sched_result_free(&sr);
		sim_out_of_memory(c->pl->trace->path, err, errlen);
		return -1;
	}
	memcpy(*before, sr.baseline, c->p * sizeof(uint64_t));
	memcpy(*after, sr.residency, c->p * sizeof(uint64_t));
	*n_pos = c->p;
	sched_result_free(&sr);
	return 0;
}

double sim_pct_ideal(const struct sim_result *r)
{
	return r->time_ns ? 100.0 * (double)r->ideal_ns / (double)r->time_ns : 100.0;
}

void sim_ctx_perturb(struct sim_ctx *c, double fraction, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	c->ideal_ns = c->tail_ns;
	for (uint32_t k = 0; k < c->p; k++) {
		/* xorshift64*: a uniform draw in [0, 1) per kernel */
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		double u = (double)((x * 0x2545f4914f6cdd1dULL) >> 11) / (double)(1ULL << 53);
		double scale = 1.0 + fraction * (2.0 * u - 1.0);
		c->dur[k] = fraction ? (uint64_t)((double)c->recorded[k] * scale + 0.5) : c->recorded[k];
		c->ideal_ns += c->gap[k] + c->dur[k];
	}
}

int sim_run(const struct sim_ctx *c, enum sim_policy policy, uint64_t capacity,
	    const struct sim_options *o, struct sim_result *out, char *err, size_t errlen)
{
	const struct planner *pl = c->pl;
	memset(out, 0, sizeof *out);
	out->capacity = capacity;
	out->ideal_ns = c->ideal_ns;
	if (policy == SIM_IDEAL) {
		out->time_ns = c->ideal_ns;
		return 0;
	}
	struct eng e = { .c = c, .o = o, .r = out };
	e.cap = (size_t)(capacity / SIM_BLOCK_BYTES);
	if (!e.cap)
		e.cap = 1;
	struct sched_result sr = { 0 };
	size_t *op_at = NULL;
	int rc = -1;
	size_t n = c->n_blocks ? c->n_blocks : 1;
	e.st = calloc(n, sizeof *e.st);
	e.at = calloc(n, sizeof *e.at);
	e.lru = calloc(n, sizeof *e.lru);
	e.pin = calloc(n, sizeof *e.pin);
	op_at = calloc((size_t)c->p + 1, sizeof *op_at);
	if (!e.st || !e.at || !e.lru || !e.pin || !op_at) {
		sim_out_of_memory(c->pl->trace->path, err, errlen);
		goto done;
	}
	if (policy == SIM_PLAN) {
		struct sched_options so;
		sched_options_for(o, capacity, &so);
		if (sched_run(&pl->tensors, &pl->access, &pl->vital, &so, &sr, err, errlen))
			goto done;
		if (sr.n_ops) /* none when capacity does not bind; qsort wants a pointer */
			qsort(sr.ops, sr.n_ops, sizeof *sr.ops, cmp_op);
		/* op_at[k]: the first op at position >= k. */
		for (size_t j = 0; j < sr.n_ops; j++)
			op_at[sr.ops[j].position + 1]++;
		for (uint32_t k = 0; k < c->p; k++)
			op_at[k + 1] += op_at[k];
	}
	/* Two iterations from an empty GPU; the second is the steady state. */
	uint64_t t = 0, t_start = 0;
	for (int it = 0; it < 2; it++) {
		if (it == 1) {
			e.measure = true;
			t_start = t;
		}
		for (uint32_t k = 0; k < c->p; k++) {
			uint64_t t0 = t + c->gap[k];
			e.pin_stamp++;
			pin_kernel(&e, k);
			e.over = c->k_first[k + 1] - c->k_first[k] > e.cap;
			if (policy == SIM_PLAN)
				plan_ops(&e, &sr, op_at, k, t0);
			else if (policy == SIM_DEEPUM)
				deepum_ops(&e, k, t0);
			t = run_kernel(&e, k, t0);
			/* Nothing joins the link while the kernel runs (the next
			 * ops are issued at the next kernel), and from the
			 * kernel's start it is busy without a gap up to
			 * link_free: a transfer starts right after the one
			 * before, or later only for its issue or its block's
			 * arrival, both by the kernel's start. */
			uint64_t busy_to = max_u64(t - c->dur[k], e.link_free);
			if (e.measure && t > busy_to)
				out->link_idle_kernel_ns += t - busy_to;
		}
		t += c->tail_ns;
	}
	out->time_ns = t - t_start;
	for (size_t b = 0; b < c->n_blocks; b++)
		out->resident_end += e.st[b] == B_RES;
	if (e.oom) {
		sim_out_of_memory(c->pl->trace->path, err, errlen);
		goto done;
	}
	rc = 0;
done:
	block_heap_free(&e.evicting);
	block_heap_free(&e.by_use);
	block_heap_free(&e.pinned);
	sched_result_free(&sr);
	free(op_at);
	free(e.st);
	free(e.at);
	free(e.lru);
	free(e.pin);
	return rc;
}
