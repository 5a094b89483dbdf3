/*
 * allocmap.c: live allocations and plan-allocation resolution (see
 * allocmap.h).
 *
 * Live records sit in an open-addressing table keyed by id, with linear
 * probing and backward-shift deletion (no tombstones: uncached PyTorch frees
 * and allocates hundreds of tensors per iteration, for hours). Persistent
 * plan allocations are found by binary search over their ordinals,
 * iteration ones by direct index from the ordinal.
 */
#include "allocmap.h"

#include <stdlib.h>

#include "blocktab.h"
#include "search.h"

struct instance {
	uint64_t id, address, size;
	uint8_t state; /* enum allocmap_state */
};

/* Per plan allocation: this iteration's instance and the previous one
 * (persistent allocations use cur only; a PREVIOUS one resolves to prev). */
struct pslot {
	struct instance cur, prev;
};

struct pers {
	uint64_t ordinal;
	uint32_t index;
};

struct allocmap {
	struct alloc_rec *tab; /* id 0: empty */
	size_t cap, used;      /* cap a power of two, used <= cap / 2 */

	const struct plan *plan;
	struct pslot *slots;   /* [plan->n_allocs] */
	struct pers *pers;     /* sorted by ordinal */
	size_t n_pers;
	int32_t *iter_index;   /* [n_iter_ords]: plan index of ordinal i + 1, or -1 */
	int32_t *prev_index;   /* [n_iter_ords]: plan index of the PREVIOUS one, or -1 */
	uint32_t *iter_list;   /* plan indices of the iteration and PREVIOUS allocations */
	size_t n_iter_ords, n_iter;
	bool counting;         /* an iteration start was seen */
	uint64_t ordinal;      /* allocations since it */
	bool lost;             /* the matcher has lost its place */
	bool by_count;         /* the count began this iteration while the
				  matcher was lost, and it has not placed a
				  launch since */
};

static size_t hash_id(uint64_t id, size_t cap)
{
	id ^= id >> 31;
	id *= 0x9e3779b97f4a7c15ULL;
	id ^= id >> 29;
	return (size_t)id & (cap - 1);
}

static int by_ordinal(const void *a, const void *b)
{
	const struct pers *x = a, *y = b;
	return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

static int index_plan(allocmap *m, const struct plan *p)
{
	m->slots = calloc(p->n_allocs ? p->n_allocs : 1, sizeof *m->slots);
	m->pers = calloc(p->n_allocs ? p->n_allocs : 1, sizeof *m->pers);
	m->iter_list = calloc(p->n_allocs ? p->n_allocs : 1, sizeof *m->iter_list);
	m->n_iter_ords = p->signature.n_alloc_sizes;
	m->iter_index = malloc((m->n_iter_ords ? m->n_iter_ords : 1) * sizeof *m->iter_index);
	m->prev_index = malloc((m->n_iter_ords ? m->n_iter_ords : 1) * sizeof *m->prev_index);
	if (!m->slots || !m->pers || !m->iter_list || !m->iter_index || !m->prev_index)
		return -1;
	for (size_t i = 0; i < m->n_iter_ords; i++)
		m->iter_index[i] = m->prev_index[i] = -1;
	for (uint32_t i = 0; i < p->n_allocs; i++) {
		const struct plan_alloc *a = &p->allocs[i];
		if (a->origin == PLAN_ALLOC_PERSISTENT) {
			m->pers[m->n_pers++] = (struct pers){ a->ordinal, i };
		} else if (a->ordinal <= m->n_iter_ords) {
			int32_t *index = a->origin == PLAN_ALLOC_PREVIOUS ? m->prev_index : m->iter_index;
			index[a->ordinal - 1] = (int32_t)i;
			m->iter_list[m->n_iter++] = i;
		}
	}
	qsort(m->pers, m->n_pers, sizeof *m->pers, by_ordinal);
	return 0;
}

allocmap *allocmap_create(const struct plan *plan)
{
	allocmap *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->cap = 256;
	m->tab = calloc(m->cap, sizeof *m->tab);
	m->plan = plan;
	if (!m->tab || (plan && index_plan(m, plan) != 0)) {
		allocmap_destroy(m);
		return NULL;
	}
	return m;
}

void allocmap_destroy(allocmap *m)
{
	if (!m)
		return;
	free(m->tab);
	free(m->slots);
	free(m->pers);
	free(m->iter_index);
	free(m->prev_index);
	free(m->iter_list);
	free(m);
}

static size_t find_slot(const allocmap *m, uint64_t id)
{
	size_t i = hash_id(id, m->cap);
	while (m->tab[i].id && m->tab[i].id != id)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int grow(allocmap *m)
{
	size_t old_cap = m->cap;
	struct alloc_rec *old = m->tab;
	m->cap *= 2;
	m->tab = calloc(m->cap, sizeof *m->tab);
	if (!m->tab) {
		m->tab = old;
		m->cap = old_cap;
		return -1;
	}
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].id)
			m->tab[find_slot(m, old[i].id)] = old[i];
	free(old);
	return 0;
}

static long find_pers(const allocmap *m, uint64_t id)
{
	size_t lo = lower_bound_u64(m->pers, m->n_pers, SEARCH_FIELD(struct pers, ordinal), id);
	return lo < m->n_pers && m->pers[lo].ordinal == id ? (long)m->pers[lo].index : -1;
}

/* This iteration's instances become the previous ones, and ordinals count
 * on from made. One this iteration did not map leaves none, not the
 * iteration before's (allocmap.h). */
static void next_iteration(allocmap *m, uint64_t made)
{
	m->counting = true;
	m->ordinal = made;
	for (size_t i = 0; i < m->n_iter; i++) {
		struct pslot *s = &m->slots[m->iter_list[i]];
		s->prev = s->cur;
		s->cur.state = ALLOCMAP_UNSEEN;
	}
}

/* Maps the new allocation r to the plan allocations it is. */
static void map_plan(allocmap *m, struct alloc_rec *r)
{
	struct instance now = { r->id, r->address, r->size, ALLOCMAP_LIVE };
	long p = find_pers(m, r->id);
	if (p >= 0 && m->plan->allocs[p].size == r->size) {
		m->slots[p].cur = now;
		r->plan_pers = (int32_t)p;
	}
	if (!m->counting)
		return;
	/* Lost, the matcher starts no iteration, so the count does: once
	 * this one has made all of the plan's iteration allocations, the next
	 * is the next iteration's first, as the plan counts them (from one
	 * launch of its first kernel to the next). Those the count took past
	 * the plan's before the loss (noticed MATCH_LOST_AFTER launches after
	 * it began) were the next iteration's already: they stay unmapped,
	 * and the count goes on after them. */
	if (m->lost && m->n_iter_ords && m->ordinal >= m->n_iter_ords) {
		next_iteration(m, m->ordinal % m->n_iter_ords);
		m->by_count = true;
	}
	r->iter_ordinal = ++m->ordinal;
	if (m->ordinal > m->n_iter_ords)
		return;
	int32_t i = m->iter_index[m->ordinal - 1];
	if (i >= 0 && m->plan->allocs[i].size == r->size) {
		m->slots[i].cur = now;
		r->plan_iter = i;
	}
	/* The next iteration's previous instance, should it outlive the
	 * next one's making. */
	i = m->prev_index[m->ordinal - 1];
	if (i >= 0 && m->plan->allocs[i].size == r->size) {
		m->slots[i].cur = now;
		r->plan_prev = i;
	}
}

struct alloc_rec *allocmap_add(allocmap *m, uint64_t id, uint64_t address, uint64_t size)
{
	if (!id || (2 * (m->used + 1) > m->cap && grow(m) != 0))
		return NULL;
	/* Past the address space, or more blocks than a record counts: a
	 * corrupt trace's, never one the model could hold. */
	if ((size && address > UINT64_MAX - (size - 1)) ||
	    ((address + (size ? size - 1 : 0)) >> BLOCK_SHIFT) - (address >> BLOCK_SHIFT) >= UINT32_MAX)
		return NULL;
	size_t i = find_slot(m, id);
	if (m->tab[i].id)
		return NULL;
	struct alloc_rec *r = &m->tab[i];
	uint64_t last = address + (size ? size : 1) - 1;
	uint32_t n_blocks = (uint32_t)((last >> BLOCK_SHIFT) - (address >> BLOCK_SHIFT) + 1);
	*r = (struct alloc_rec){ .id = id, .address = address, .size = size,
				 .first_block = address >> BLOCK_SHIFT,
				 .n_blocks = n_blocks, .gpu_blocks = n_blocks,
				 .plan_pers = -1, .plan_iter = -1, .plan_prev = -1 };
	m->used++;
	if (m->plan)
		map_plan(m, r);
	return r;
}

static void mark_freed(struct instance *in, uint64_t id)
{
	if (in->state == ALLOCMAP_LIVE && in->id == id)
		in->state = ALLOCMAP_FREED;
}

bool allocmap_remove(allocmap *m, uint64_t id, struct alloc_rec *out)
{
	if (!id)
		return false;
	size_t i = find_slot(m, id);
	if (!m->tab[i].id)
		return false;
	*out = m->tab[i];
	if (out->plan_pers >= 0)
		mark_freed(&m->slots[out->plan_pers].cur, id);
	/* The iteration's plan allocation and the PREVIOUS one it was to be:
	 * either may hold this instance as this iteration's or the last. */
	for (int k = 0; k < 2; k++) {
		int32_t slot = k ? out->plan_prev : out->plan_iter;
		if (slot >= 0) {
			mark_freed(&m->slots[slot].cur, id);
			mark_freed(&m->slots[slot].prev, id);
		}
	}
	/* Backward-shift deletion: pull later members of the probe run into
	 * the hole when their home slot does not lie after it. */
	size_t hole = i, j = i;
	for (;;) {
		j = (j + 1) & (m->cap - 1);
		if (!m->tab[j].id)
			break;
		size_t home = hash_id(m->tab[j].id, m->cap);
		if (((j - home) & (m->cap - 1)) >= ((j - hole) & (m->cap - 1))) {
			m->tab[hole] = m->tab[j];
			hole = j;
		}
	}
	m->tab[hole].id = 0;
	m->used--;
	return true;
}

struct alloc_rec *allocmap_live(allocmap *m, uint64_t id)
{
	if (!id)
		return NULL;
	size_t i = find_slot(m, id);
	return m->tab[i].id ? &m->tab[i] : NULL;
}

struct alloc_rec *allocmap_next_live(allocmap *m, size_t *cursor)
{
	for (; *cursor < m->cap; (*cursor)++)
		if (m->tab[*cursor].id)
			return &m->tab[(*cursor)++];
	return NULL;
}

/* The allocations counted as ordinals (from, to] were made in the
 * iteration that starts now: none is a previous instance. */
static void drop_previous(allocmap *m, uint64_t from, uint64_t to)
{
	for (size_t i = 0; i < m->n_iter; i++) {
		uint32_t index = m->iter_list[i];
		uint64_t ordinal = m->plan->allocs[index].ordinal;
		if (ordinal > from && ordinal <= to)
			m->slots[index].prev.state = ALLOCMAP_UNSEEN;
	}
}

uint64_t allocmap_iteration_start(allocmap *m, uint32_t pos)
{
	if (!m->plan)
		return 0;
	const uint64_t *before = m->plan->signature.alloc_before;
	uint64_t made = before ? before[pos] : 0, counted = m->ordinal;
	bool by_count = m->by_count;
	/* The start of the iteration the count began while the matcher was
	 * lost, found again, unless the count is nearer a whole iteration
	 * past the plan's count at pos than at it: then the program went on
	 * into the next iteration. The allocations it made there before pos
	 * (the plan's `made`) are the last the count took, after the
	 * iteration before's own: that one made fewer than the plan's, or
	 * they would have begun another count. Counted as its later
	 * ordinals, they are no instance of it (on track they count past the
	 * plan's, as none). Where the program did not make them, the
	 * instances so left out are the iteration before's: their ops are
	 * lost, none lands on the wrong tensor. */
	bool begun = by_count && (int64_t)(counted - made) <= (int64_t)(m->n_iter_ords / 2);
	m->by_count = false;
	if (begun)
		return m->ordinal;
	next_iteration(m, made);
	if (by_count)
		drop_previous(m, counted - made, counted);
	return 0;
}

bool allocmap_began_while_lost(const allocmap *m)
{
	return m->by_count;
}

void allocmap_place_lost(allocmap *m, bool lost)
{
	m->lost = lost;
	if (!lost)
		m->by_count = false;
}

void allocmap_position_moved(allocmap *m, uint32_t from, uint32_t to)
{
	const uint64_t *before = m->plan ? m->plan->signature.alloc_before : NULL;
	if (before && m->counting)
		m->ordinal += before[to] - before[from];
}

static void where_is(allocmap *m, const struct instance *in, struct allocmap_where *out)
{
	out->state = (enum allocmap_state)in->state;
	out->address = in->address;
	out->size = in->size;
	out->rec = in->state == ALLOCMAP_LIVE ? allocmap_live(m, in->id) : NULL;
}

void allocmap_resolve(allocmap *m, uint32_t index, struct allocmap_where *out)
{
	const struct pslot *s = &m->slots[index];
	const struct instance *in = s->cur.state != ALLOCMAP_UNSEEN ? &s->cur : &s->prev;
	if (m->plan->allocs[index].origin == PLAN_ALLOC_PREVIOUS)
		in = &s->prev;
	where_is(m, in, out);
}

void allocmap_resolve_next(allocmap *m, uint32_t index, struct allocmap_where *out)
{
	/* A PREVIOUS slot's cur is this iteration's instance (map_plan), which
	 * allocmap_iteration_start turns into its prev. */
	if (m->plan->allocs[index].origin == PLAN_ALLOC_PREVIOUS)
		where_is(m, &m->slots[index].cur, out);
	else
		allocmap_resolve(m, index, out);
}
