/*
 * faultsrc.c: charging on-demand migrations to allocations (faultsrc.h).
 *
 * The log is a list of allocations in the order they were made. To charge
 * a migration, every allocation is listed once per 2 MB block it overlaps,
 * sorted by block and then by time: the candidates for an address are its
 * block's entries made at or before the migration, searched newest first.
 */
#include "faultsrc.h"

#include <stdlib.h>

#include "allocmap.h"
#include "blocktab.h"
#include "grow.h"
#include "search.h"

struct noted {
	uint64_t t_ns, id, address, size, ordinal;
	uint64_t first_block; /* the blocks it overlaps, as allocmap gives them */
	uint32_t n_blocks;
	int32_t plan_alloc;
	uint8_t origin;
};

struct faultsrc {
	struct noted *v;
	size_t n, cap;
	uint64_t unnoted_from; /* the time of the first allocation left
				  unnoted (log full, or out of memory); 0: none */
};

/* One allocation in one block. */
struct entry {
	uint64_t block, t_ns;
	uint32_t noted;
};

/* One charged migration, before the sources are summed. */
struct charge {
	uint64_t ordinal;
	uint8_t origin;
	uint32_t noted;
	uint64_t bytes;
};

faultsrc *faultsrc_create(void)
{
	return calloc(1, sizeof(faultsrc));
}

void faultsrc_destroy(faultsrc *f)
{
	if (f)
		free(f->v);
	free(f);
}

void faultsrc_note(faultsrc *f, uint64_t t_ns, const struct alloc_rec *r)
{
	if (!f)
		return;
	struct noted *v = f->n < FAULTSRC_MAX_ALLOCS ? room_for_one(f->v, f->n, &f->cap, sizeof *v, 1024) : NULL;
	if (!v) {
		/* From here on the log cannot say who holds an address: a
		 * noted allocation there may long be freed. */
		if (!f->unnoted_from)
			f->unnoted_from = t_ns ? t_ns : 1;
		return;
	}
	f->v = v;
	struct noted *x = &f->v[f->n++];
	*x = (struct noted){ .t_ns = t_ns, .id = r->id, .address = r->address, .size = r->size,
			     .first_block = r->first_block, .n_blocks = r->n_blocks,
			     .origin = PLAN_ALLOC_PERSISTENT, .ordinal = r->id, .plan_alloc = r->plan_pers };
	/* A persistent plan allocation keeps its id; anything else made
	 * during the iterations is known by its place in one, and by the
	 * plan allocation of that place: the iteration one, or where the plan
	 * names only the previous instance, that one. */
	if (r->plan_pers < 0 && r->iter_ordinal) {
		x->origin = PLAN_ALLOC_ITERATION;
		x->ordinal = r->iter_ordinal;
		x->plan_alloc = r->plan_iter >= 0 ? r->plan_iter : r->plan_prev;
	}
}

static int by_block_then_time(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return (x->noted > y->noted) - (x->noted < y->noted);
}

/* Every noted allocation once per block it overlaps, sorted; NULL when
 * memory ran out (or nothing was noted). */
static struct entry *index_blocks(const faultsrc *f, size_t *n)
{
	size_t k = 0;
	for (size_t i = 0; i < f->n; i++)
		k += f->v[i].n_blocks;
	struct entry *e = k ? malloc(k * sizeof *e) : NULL;
	*n = 0;
	if (!e)
		return NULL;
	for (size_t i = 0; i < f->n; i++) {
		const struct noted *x = &f->v[i];
		for (uint32_t j = 0; j < x->n_blocks; j++)
			e[(*n)++] = (struct entry){ x->first_block + j, x->t_ns, (uint32_t)i };
	}
	qsort(e, *n, sizeof *e, by_block_then_time);
	return e;
}

/* The allocation that held address at t: the newest of its block's entries
 * made by then that covers it; -1 when none. */
static long holder(const faultsrc *f, const struct entry *e, size_t n, uint64_t t_ns, uint64_t address)
{
	uint64_t block = address >> BLOCK_SHIFT;
	size_t lo = lower_bound_u64(e, n, SEARCH_FIELD(struct entry, block), block);
	size_t hi = upper_bound_u64(e, n, SEARCH_FIELD(struct entry, block), block);
	/* Within a block, entries are in the order noted, hence of time. */
	size_t i = lo + upper_bound_u64(e + lo, hi - lo, SEARCH_FIELD(struct entry, t_ns), t_ns);
	while (i-- > lo) {
		const struct noted *x = &f->v[e[i].noted];
		if (address >= x->address && address - x->address < x->size)
			return e[i].noted;
	}
	return -1;
}

static int by_identity(const void *a, const void *b)
{
	const struct charge *x = a, *y = b;
	if (x->origin != y->origin)
		return x->origin < y->origin ? -1 : 1;
	if (x->ordinal != y->ordinal)
		return x->ordinal < y->ordinal ? -1 : 1;
	return (x->noted > y->noted) - (x->noted < y->noted);
}

static int by_bytes_down(const void *a, const void *b)
{
	const struct fault_source *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->origin != y->origin)
		return x->origin < y->origin ? -1 : 1;
	return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

/* Sums charges c[0 .. n), sorted by identity, into one source each: a new
 * array of *n_out, NULL when memory ran out. */
static struct fault_source *sum_charges(const faultsrc *f, const struct charge *c, size_t n, size_t *n_out)
{
	struct fault_source *s = n ? malloc(n * sizeof *s) : NULL;
	size_t k = 0;
	for (size_t i = 0; s && i < n; i++) {
		if (!k || s[k - 1].origin != c[i].origin || s[k - 1].ordinal != c[i].ordinal) {
			const struct noted *x = &f->v[c[i].noted];
			s[k++] = (struct fault_source){ .origin = x->origin, .ordinal = x->ordinal,
							.alloc_id = x->id, .size = x->size,
							.plan_alloc = x->plan_alloc };
		}
		s[k - 1].migrations++;
		s[k - 1].bytes += c[i].bytes;
	}
	*n_out = k;
	return s;
}

size_t faultsrc_attribute(const faultsrc *f, const struct fault_event *ev, size_t n,
			  struct fault_source *out, size_t max, struct fault_totals *tot)
{
	*tot = (struct fault_totals){ 0 };
	size_t n_entries, n_charges = 0, n_sources = 0;
	struct entry *e = index_blocks(f, &n_entries);
	struct charge *c = n ? malloc(n * sizeof *c) : NULL;
	if ((f->n && !e) || (n && !c)) {
		free(e);
		free(c);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		long at_start = holder(f, e, n_entries, ev[i].t_ns, ev[i].address), h = at_start;
		if (ev[i].launch_ns)
			h = holder(f, e, n_entries, ev[i].launch_ns, ev[i].address);
		uint64_t when = ev[i].launch_ns ? ev[i].launch_ns : ev[i].t_ns;
		if (f->unnoted_from && when >= f->unnoted_from)
			h = -1;
		if (h < 0) {
			tot->unattributed++;
			continue;
		}
		/* Counted among the charged only (faultsrc.h). */
		if (ev[i].launch_ns) {
			tot->by_launch++;
			tot->owner_changed += h != at_start;
		}
		c[n_charges++] = (struct charge){ f->v[h].ordinal, f->v[h].origin, (uint32_t)h, ev[i].bytes };
	}
	free(e);
	if (n_charges)
		qsort(c, n_charges, sizeof *c, by_identity);
	struct fault_source *s = sum_charges(f, c, n_charges, &n_sources);
	free(c);
	if (n_charges && !s) {
		*tot = (struct fault_totals){ 0 };
		return 0;
	}
	if (n_sources)
		qsort(s, n_sources, sizeof *s, by_bytes_down);
	size_t k = n_sources < max ? n_sources : max;
	for (size_t i = 0; i < k; i++)
		out[i] = s[i];
	tot->sources = n_sources;
	free(s);
	return k;
}
