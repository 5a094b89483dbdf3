/*
 * onhost.c: the allocations the plan keeps in host memory (plan.host), whole
 * or from an offset on (plan.host_offset: the tail of a large tensor). That
 * part is placed there when the program makes the allocation: the executor
 * sets its preferred location to the host and maps it for the GPU, whose
 * kernels then read and write it over the link without faulting or
 * migrating it. The residency model leaves its blocks alone (never
 * resident, never brought in, never evicted), and the free undoes the
 * placement, so the arena's next tenant of those blocks migrates as usual
 * (the bytes left on the host are dead, as an evicted block's are).
 * The blocks before the offset are ordinary memory.
 */
#include "engine_int.h"

void onhost_alloc(engine *e, struct alloc_rec *r)
{
	uint64_t offset;
	if (e->policy != ENGINE_PLAN || e->foreign || !e->x.place || r->plan_pers < 0 ||
	    !plan_on_host(e->plan, (uint32_t)r->plan_pers, &offset) || r->address % BLOCK_BYTES ||
	    offset % BLOCK_BYTES || offset / BLOCK_BYTES >= r->n_blocks)
		return;
	uint32_t first = (uint32_t)(offset / BLOCK_BYTES);
	/* Only blocks of its own: another tenant would be dragged along. */
	for (uint32_t i = first; i < r->n_blocks; i++) {
		struct block *b = residency_find(e->res, r->first_block + i);
		if (!b || b->live != 1)
			return;
	}
	/* What an earlier tenant left resident goes out first, behind the
	 * last kernel that used it (the arena may hand a range out before the
	 * GPU is done with it). No launch is being prepared during an
	 * allocation: a pin is the last launch's, and stale. */
	for (uint32_t i = first; i < r->n_blocks; i++) {
		struct block *b = residency_find(e->res, r->first_block + i);
		b->pin = 0;
		if (b->state == BLOCK_RESIDENT && !act_evict(e, b, act_use_wait(e, b->use_seq)))
			return;
	}
	act_flush(e);
	uint64_t bytes = (uint64_t)(r->n_blocks - first) * BLOCK_BYTES;
	if (!e->x.place(e->x.ctx, r->address + offset, bytes, true))
		return;
	for (uint32_t i = first; i < r->n_blocks; i++)
		residency_find(e->res, r->first_block + i)->host = 1;
	r->gpu_blocks = first;
	e->st.host_allocs++;
	e->st.host_bytes += bytes;
}

void onhost_free(engine *e, const struct alloc_rec *r)
{
	uint32_t first = r->gpu_blocks;
	if (first == r->n_blocks)
		return;
	uint64_t offset = (uint64_t)first * BLOCK_BYTES;
	e->x.place(e->x.ctx, r->address + offset, (uint64_t)(r->n_blocks - first) * BLOCK_BYTES, false);
	/* Kernels up to the last launch may have used the blocks there, over
	 * the link, without making them resident: their bytes lie on the host
	 * as an evicted block's do, so the next tenant's first kernel brings
	 * them as it would those (engine.c, repopulate), not by faults that
	 * copy them. */
	for (uint32_t i = first; i < r->n_blocks; i++) {
		struct block *b = residency_find(e->res, r->first_block + i);
		b->host = 0;
		if (b->use_seq < e->st.launches)
			b->use_seq = e->st.launches;
	}
}
