/*
 * onhost.c: the allocations the plan keeps in host memory (plan.host). Each
 * is placed there when the program makes it: the executor sets its preferred
 * location to the host and maps it for the GPU, whose kernels then read and
 * write it over the link without faulting or migrating it. The residency
 * model leaves its blocks alone (never resident, never brought in, never
 * evicted), and its free undoes the placement, so the arena's next tenant of
 * those blocks migrates as usual.
 */
#include "engine_int.h"

void onhost_alloc(engine *e, const struct alloc_rec *r)
{
	if (e->policy != ENGINE_PLAN || e->foreign || !e->x.place || r->plan_pers < 0 ||
	    !plan_on_host(e->plan, (uint32_t)r->plan_pers) || r->address % BLOCK_BYTES)
		return;
	/* Only blocks of its own: another tenant would be dragged along. */
	for (uint32_t i = 0; i < r->n_blocks; i++) {
		struct block *b = residency_find(e->res, r->first_block + i);
		if (!b || b->live != 1)
			return;
	}
	/* What an earlier tenant left resident goes out first, behind the
	 * last kernel that used it (the arena may hand a range out before the
	 * GPU is done with it). No launch is being prepared during an
	 * allocation: a pin is the last launch's, and stale. */
	for (uint32_t i = 0; i < r->n_blocks; i++) {
		struct block *b = residency_find(e->res, r->first_block + i);
		b->pin = 0;
		if (b->state == BLOCK_RESIDENT && !act_evict(e, b, act_use_wait(e, b->use_seq)))
			return;
	}
	batch_flush(e->batch, &e->x, &e->st);
	uint64_t bytes = (uint64_t)r->n_blocks * BLOCK_BYTES;
	if (!e->x.place(e->x.ctx, r->address, bytes, true))
		return;
	for (uint32_t i = 0; i < r->n_blocks; i++)
		residency_find(e->res, r->first_block + i)->host = 1;
	e->st.host_allocs++;
	e->st.host_bytes += bytes;
}

void onhost_free(engine *e, const struct alloc_rec *r)
{
	struct block *b = residency_find(e->res, r->first_block);
	if (!b || !b->host)
		return;
	e->x.place(e->x.ctx, r->address, (uint64_t)r->n_blocks * BLOCK_BYTES, false);
	for (uint32_t i = 0; i < r->n_blocks; i++)
		residency_find(e->res, r->first_block + i)->host = 0;
}
