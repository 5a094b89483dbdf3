/*
 * arena.c: the bookkeeping of the managed-memory caching arena (arena.h).
 *
 * Owns the segments mapped through the backend, the ranges they are cut
 * into, the free indexes that placement searches, and the block map and
 * small live index that lookups search. Mapping memory and ordering against
 * the GPU stay in the backend.
 *
 * Two levels, one mechanism. Segments are cut into ranges of whole 2 MiB
 * blocks; a large allocation takes one such range, and so does a small
 * block: a 2 MiB range (its "carrier") that is itself cut into 512 B ranges
 * for small allocations. So a UM block holds one large allocation or small
 * ones only, never both. Each level has its own free index. A range is live,
 * free (in its level's free index) or a carrier. The block map names the
 * large live range or the carrier of each block, so only small live ranges
 * need an index of their own (searched by address), and a large allocation
 * and its free search no live ranges. Within a region (a segment or a small
 * block) the ranges also form an address-ordered list, so a free merges
 * with free neighbours in O(1); adjacent ranges are therefore never both
 * free. A small block that becomes
 * empty goes back to its segment, so its 2 MiB can serve any size again.
 *
 * Placement. A request takes the free range of its level that is the
 * smallest of those large enough; among equally small ones, the one freed
 * longest ago (never-used memory counts as oldest); then the lowest
 * (segment ordinal, offset in segment). It is carved from that range's start.
 * Every key is bookkeeping: sizes, the order of arena_free calls, the order
 * segments were mapped in, offsets from segment bases. None is an absolute
 * address or the state of a fence. So the same calls give the same
 * segment-relative addresses whatever bases the backend returns and however
 * fast the GPU retires work. Best fit keeps segments dense, which is what a
 * cap needs. Taking the oldest free among equal fits picks the range whose
 * fence most likely completed already, so waits are as rare as bookkeeping
 * alone allows.
 *
 * Fences. A free range carries the fence of the newest free merged into it:
 * tokens are monotonic, so waiting for the newest covers the rest. This is
 * conservative (memory merged from an old free waits for the newest one),
 * and the price of never letting a fence decide placement. A range is handed
 * out only after its fence completed (or, to device memory, once the
 * backend has queued the GPU's later work behind it: fence_settle), and a
 * segment unmapped only after its free range's fence completed. Backend
 * calls, fence_wait included, are made under the lock, so a backend never
 * sees two calls at once. Only when the backend cannot wait (the driver
 * refused) does a fence decide: the range stays free, and the allocation
 * takes the first range in placement order whose fence completed, else a
 * new segment. Should that fail too, the backend's last resort may wait
 * for every fence (fence_wait_all), and the allocation is tried once more.
 *
 * Growth. When nothing fits, a segment is mapped: segment_bytes, or the
 * request itself when larger (its own segment), or what the cap still
 * allows when that is less than segment_bytes but enough for the request.
 * When the cap leaves too little, wholly free segments are unmapped, oldest
 * first, if that makes enough room; otherwise the allocation fails. When the
 * backend refuses to map, all wholly free segments are unmapped and the map
 * is tried once more. A segment mapped whose block map cannot be made (out
 * of memory) is unmapped at once; where the backend cannot unmap it then,
 * it stays counted (stranded) until the next growth unmaps it.
 */
#include "arena.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "arena_blockmap.h"
#include "arena_tree.h"
#include "grow.h"
#include "minmax.h"

#define DEFAULT_SEGMENT_BYTES ((uint64_t)256 << 20)
#define DEFAULT_SMALL_THRESHOLD ((uint64_t)1 << 20)

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

enum range_state { RANGE_FREE, RANGE_LIVE, RANGE_CARRIER };

struct region;

struct range {
	struct arena_tree_node link; /* small live: in the small live index; free:
					in its level's free index */
	struct range *prev, *next;   /* address neighbours in the same region */
	struct region *region;
	uint64_t start, size;
	enum range_state state;
	/* While free. */
	uint64_t free_seq; /* which free made it (arena_free calls counted from 1); 0: never used */
	uint64_t fence;    /* fence of the newest free merged into it; 0: none */
	/* While live. */
	uint64_t id, requested;
	/* While a carrier: the small block it holds. */
	struct region *block;
};

/* A segment, or a small block inside one. */
struct region {
	uint64_t base, bytes;
	uint64_t segment_ordinal; /* placement keys: the segment's mapping order */
	uint64_t segment_base;    /* and base (a small block's are its segment's) */
	struct range *first;      /* the range at base: merges keep the lower range */
	uint64_t ranges_in_use;   /* live or carrier ranges */
	struct range *carrier;    /* a small block's range in its segment; NULL for a segment */
	struct region *older, *newer; /* segments only, in mapping order */
};

struct arena {
	pthread_mutex_t lock;
	struct arena_backend backend;
	bool capped;
	uint64_t max_bytes; /* when capped: the cap rounded down to whole blocks */
	uint64_t segment_bytes, small_threshold;
	struct arena_tree live_small, free_large, free_small;
	/* Per block of every segment: the range that takes it (a large live
	 * one, or a small block's carrier); NULL where it is free. Lookups go
	 * here first: see arena_lookup. */
	struct arena_blockmap blocks;
	struct region **segments; /* sorted by base, for arena_owns */
	size_t segments_cap;
	struct region *oldest, *newest;
	/* Mapped, but unusable (its block map could not be made) and not
	 * unmapped then either: counted in mapped_bytes until unmapped, at
	 * the next growth or the end. Listed through newer. */
	struct region *stranded;
	uint64_t segments_mapped; /* ever: the next segment's ordinal */
	uint64_t frees;           /* ever: the next free's free_seq */
	uint64_t fence_done_upto; /* every fence up to this token completed */
	uint64_t newest_fence;    /* the token of the latest free's fence */
	struct arena_stats stats;
	/* Every address ever mapped lies in [span_lo, span_hi). Lookups run for
	 * every parameter word of every kernel launch, and nearly all words are
	 * not pointers into the arena: this lets them be turned away without
	 * taking the lock. The span only grows (unmapping leaves it), so a
	 * stale read can only send a word on to the locked check. */
	_Atomic uint64_t span_lo, span_hi;
};

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* The placement order (see the file comment). Unique: no two free ranges
 * of one level share a segment offset. */
static int cmp_free(const struct arena_tree_node *an, const struct arena_tree_node *bn)
{
	const struct range *a = container_of(an, struct range, link);
	const struct range *b = container_of(bn, struct range, link);
	int c = cmp_u64(a->size, b->size);
	if (!c)
		c = cmp_u64(a->free_seq, b->free_seq);
	if (!c)
		c = cmp_u64(a->region->segment_ordinal, b->region->segment_ordinal);
	if (!c)
		c = cmp_u64(a->start - a->region->segment_base, b->start - b->region->segment_base);
	return c;
}

static int cmp_start(const struct arena_tree_node *an, const struct arena_tree_node *bn)
{
	return cmp_u64(container_of(an, struct range, link)->start, container_of(bn, struct range, link)->start);
}

/* Allocations of size 0 are served as 1 byte. */
static uint64_t served_size(uint64_t size)
{
	return size ? size : 1;
}

static void describe(const struct range *r, struct arena_alloc *out)
{
	out->id = r->id;
	out->address = r->start;
	out->size = r->requested;
	out->reserved = r->size;
}

static bool fence_done(arena *a, uint64_t token)
{
	if (token <= a->fence_done_upto)
		return true;
	if (!a->backend.fence_done(a->backend.ctx, token))
		return false;
	a->fence_done_upto = token;
	return true;
}

/* Returns true once the fence completed, setting *waited if that meant
 * waiting; false when the backend could not wait for it. With ordered
 * (device memory, arena_alloc_device), also once the backend has queued
 * the GPU's later work behind the fence (arena_backend.fence_order),
 * setting *ordered: nothing waits then. */
static bool fence_settle(arena *a, uint64_t token, bool *ordered, bool *waited)
{
	if (fence_done(a, token))
		return true;
	if (ordered && a->backend.fence_order && a->backend.fence_order(a->backend.ctx, token)) {
		*ordered = true;
		return true;
	}
	if (!a->backend.fence_wait(a->backend.ctx, token)) {
		a->stats.fence_refusals++;
		return false;
	}
	a->fence_done_upto = token;
	*waited = true;
	return true;
}

/* The backend's last resort, for an allocation about to fail after a
 * fence the backend would not wait for: a wait for every fence made so
 * far (arena_backend.fence_wait_all). True when the backend waited; the
 * fences are still asked one by one, as ever, before a range is handed
 * out. */
static bool last_resort(arena *a)
{
	if (!a->backend.fence_wait_all || a->newest_fence <= a->fence_done_upto)
		return false;
	if (a->backend.fence_wait_all(a->backend.ctx))
		return true;
	a->stats.fence_refusals++;
	return false;
}

static struct arena_tree *free_index_of(arena *a, const struct region *region)
{
	return region->carrier ? &a->free_small : &a->free_large;
}

/*
 * Takes the first need bytes of r, a range of free_index at least that
 * large, splitting off the rest as a free range with the same fence. The
 * range comes back in use but still carrying its fence, for the caller to
 * settle. Returns NULL with *oom when the split could not allocate (nothing
 * changed then).
 */
static struct range *carve(struct arena_tree *free_index, struct range *r, uint64_t need, bool *oom)
{
	struct range *rest = NULL;
	if (r->size > need) {
		rest = calloc(1, sizeof *rest);
		if (!rest) {
			*oom = true;
			return NULL;
		}
	}
	arena_tree_remove(free_index, &r->link);
	if (rest) {
		*rest = (struct range){
			.prev = r, .next = r->next, .region = r->region,
			.start = r->start + need, .size = r->size - need,
			.state = RANGE_FREE, .free_seq = r->free_seq, .fence = r->fence,
		};
		if (r->next)
			r->next->prev = rest;
		r->next = rest;
		r->size = need;
		arena_tree_insert(free_index, &rest->link);
	}
	r->region->ranges_in_use++;
	return r;
}

/* The first range of a free index in placement order that holds need
 * bytes, or NULL. */
static struct range *first_fit(struct arena_tree *free_index, uint64_t need)
{
	struct region any_segment = { 0 };
	struct range probe = { .region = &any_segment, .size = need };
	struct arena_tree_node *n = arena_tree_ceil(free_index, &probe.link);
	return n ? container_of(n, struct range, link) : NULL;
}

/* The range after r in its free index's placement order, or NULL: the
 * first at or after r's key one byte further. */
static struct range *next_fit(struct arena_tree *free_index, const struct range *r)
{
	struct range probe = { .region = r->region, .size = r->size, .free_seq = r->free_seq,
			       .start = r->start + 1 };
	struct arena_tree_node *n = arena_tree_ceil(free_index, &probe.link);
	return n ? container_of(n, struct range, link) : NULL;
}

/* Takes the first range in placement order that holds need bytes (carve);
 * NULL when nothing fits, or with *oom. */
static struct range *take_fit(struct arena_tree *free_index, uint64_t need, bool *oom)
{
	struct range *r = first_fit(free_index, need);
	return r ? carve(free_index, r, need, oom) : NULL;
}

/* As take_fit, but passing over ranges whose fence has not completed. */
static struct range *take_done(arena *a, struct arena_tree *free_index, uint64_t need, bool *oom)
{
	struct range *r = first_fit(free_index, need);
	while (r && !fence_done(a, r->fence))
		r = next_fit(free_index, r);
	return r ? carve(free_index, r, need, oom) : NULL;
}

/* Merges high, free and right after low, into low; high is freed. */
static void absorb(struct range *low, struct range *high)
{
	low->size += high->size;
	low->fence = max_u64(low->fence, high->fence);
	low->free_seq = max_u64(low->free_seq, high->free_seq);
	low->next = high->next;
	if (high->next)
		high->next->prev = low;
	free(high);
}

/* Makes r free with the given fence, merges it with free neighbours, and
 * gives an emptied small block back to its segment. */
static void release_range(arena *a, struct range *r, uint64_t fence, uint64_t free_seq)
{
	struct region *region = r->region;
	struct arena_tree *free_index = free_index_of(a, region);
	r->state = RANGE_FREE;
	r->fence = fence;
	r->free_seq = free_seq;
	r->block = NULL;
	region->ranges_in_use--;
	if (!region->carrier)
		arena_blockmap_set(&a->blocks, r->start, r->size, NULL);
	if (r->prev && r->prev->state == RANGE_FREE) {
		struct range *low = r->prev;
		arena_tree_remove(free_index, &low->link);
		absorb(low, r);
		r = low;
	}
	if (r->next && r->next->state == RANGE_FREE) {
		arena_tree_remove(free_index, &r->next->link);
		absorb(r, r->next);
	}
	if (region->carrier && region->ranges_in_use == 0) {
		struct range *carrier = region->carrier;
		fence = r->fence;
		free_seq = r->free_seq;
		free(r);
		free(region);
		release_range(a, carrier, fence, free_seq);
		return;
	}
	arena_tree_insert(free_index, &r->link);
}

static uint64_t cap_room(const arena *a)
{
	return a->capped ? a->max_bytes - a->stats.mapped_bytes : UINT64_MAX;
}

/* The size of segment to map so that a range of need bytes fits, when room
 * more bytes may be mapped; 0 when none can. */
static uint64_t segment_size_for(const arena *a, uint64_t need, uint64_t room)
{
	if (need > a->segment_bytes)
		return need <= room ? need : 0;
	uint64_t size = a->segment_bytes <= room ? a->segment_bytes : room - room % ARENA_BLOCK_SIZE;
	return size >= need ? size : 0;
}

static size_t segment_index_at_or_before(const arena *a, uint64_t address)
{
	/* The number of segments whose base is <= address. */
	size_t lo = 0, hi = a->stats.segments;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->segments[mid]->base <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Unmaps a segment with nothing in use, its one range free and its fence
 * completed (kernels queued before the last free may have touched it).
 * Returns false when the backend cannot now: the segment stays as it was. */
static bool unmap_idle_segment(arena *a, struct region *seg)
{
	struct range *whole = seg->first;
	if (!a->backend.unmap(a->backend.ctx, seg->base, seg->bytes))
		return false;
	arena_tree_remove(&a->free_large, &whole->link);

	size_t i = segment_index_at_or_before(a, seg->base) - 1;
	for (; i + 1 < a->stats.segments; i++)
		a->segments[i] = a->segments[i + 1];
	if (seg->older)
		seg->older->newer = seg->newer;
	else
		a->oldest = seg->newer;
	if (seg->newer)
		seg->newer->older = seg->older;
	else
		a->newest = seg->older;
	a->stats.segments--;
	a->stats.mapped_bytes -= seg->bytes;
	free(whole);
	free(seg);
	return true;
}

/* Unmaps wholly free segments, oldest first, until need fits in the room
 * the cap leaves (need 0: all of them). Their fences are waited for first,
 * and a segment whose fence cannot be stays; when need then still does not
 * fit, none is unmapped. The first segment the backend cannot unmap ends
 * it (the rest could not be either). Returns how many it unmapped. */
static size_t unmap_idle_segments(arena *a, uint64_t need, bool *waited)
{
	struct region *last = NULL;
	uint64_t room = cap_room(a);
	for (struct region *seg = a->oldest; seg; seg = seg->newer) {
		if (need && segment_size_for(a, need, room))
			break;
		if (seg->ranges_in_use || !fence_settle(a, seg->first->fence, NULL, waited))
			continue;
		room += need ? seg->bytes : 0; /* capped when need is given */
		last = seg;
	}
	if (need && !segment_size_for(a, need, room))
		return 0;
	size_t unmapped = 0;
	for (struct region *seg = a->oldest, *newer; last && seg; seg = newer) {
		newer = seg->newer;
		bool at_last = seg == last;
		if (!seg->ranges_in_use && fence_done(a, seg->first->fence)) {
			if (!unmap_idle_segment(a, seg))
				break;
			unmapped++;
		}
		if (at_last)
			break;
	}
	return unmapped;
}

/* True when unmapping every wholly free segment would make room for need. */
static bool idle_segments_make_room(const arena *a, uint64_t need)
{
	uint64_t idle = 0;
	for (const struct region *seg = a->oldest; seg; seg = seg->newer)
		if (!seg->ranges_in_use)
			idle += seg->bytes;
	return segment_size_for(a, need, cap_room(a) + idle) != 0;
}

/* Keeps seg, the region of a segment just mapped at base that can be
 * neither used nor unmapped now, among the stranded ones. */
static void strand(arena *a, struct region *seg, uint64_t base, uint64_t bytes)
{
	*seg = (struct region){ .base = base, .bytes = bytes, .newer = a->stranded };
	a->stranded = seg;
	a->stats.mapped_bytes += bytes;
}

/* Unmaps the stranded segments, until the backend cannot. */
static void unmap_stranded(arena *a)
{
	struct region *seg;
	while ((seg = a->stranded) && a->backend.unmap(a->backend.ctx, seg->base, seg->bytes)) {
		a->stranded = seg->newer;
		a->stats.mapped_bytes -= seg->bytes;
		free(seg);
	}
}

/* Maps a new segment able to hold a range of need bytes and adds its space
 * to the large free index. Returns that space, or NULL when the cap or the
 * backend (or malloc) refuses. */
static struct range *grow(arena *a, uint64_t need, bool *waited)
{
	unmap_stranded(a);
	if (!segment_size_for(a, need, cap_room(a))) {
		if (!idle_segments_make_room(a, need))
			return NULL;
		unmap_idle_segments(a, need, waited);
	}
	/* 0 when an idle segment stayed, its fence not waited for. */
	uint64_t bytes = segment_size_for(a, need, cap_room(a));
	if (!bytes)
		return NULL;

	struct region *seg = calloc(1, sizeof *seg);
	struct range *whole = calloc(1, sizeof *whole);
	if (!seg || !whole)
		goto fail;
	struct region **grown = room_for_one(a->segments, a->stats.segments, &a->segments_cap,
					     sizeof *grown, 8);
	if (!grown)
		goto fail;
	a->segments = grown;
	uint64_t base;
	if (a->backend.map(a->backend.ctx, bytes, &base) != 0) {
		/* The device may be short of memory that idle segments hold. */
		if (!unmap_idle_segments(a, 0, waited) || a->backend.map(a->backend.ctx, bytes, &base) != 0)
			goto fail;
	}
	if (!arena_blockmap_reserve(&a->blocks, base, bytes)) {
		if (!a->backend.unmap(a->backend.ctx, base, bytes)) {
			strand(a, seg, base, bytes);
			seg = NULL;
		}
		goto fail;
	}

	uint64_t lo = atomic_load(&a->span_lo);
	if (!lo || base < lo)
		atomic_store(&a->span_lo, base);
	if (base + bytes > atomic_load(&a->span_hi))
		atomic_store(&a->span_hi, base + bytes);
	*seg = (struct region){
		.base = base, .bytes = bytes,
		.segment_ordinal = a->segments_mapped++, .segment_base = base,
		.first = whole, .older = a->newest,
	};
	*whole = (struct range){ .region = seg, .start = base, .size = bytes, .state = RANGE_FREE };
	if (a->newest)
		a->newest->newer = seg;
	else
		a->oldest = seg;
	a->newest = seg;
	size_t at = segment_index_at_or_before(a, base);
	for (size_t i = a->stats.segments; i > at; i--)
		a->segments[i] = a->segments[i - 1];
	a->segments[at] = seg;
	a->stats.segments++;
	a->stats.mapped_bytes += bytes;
	arena_tree_insert(&a->free_large, &whole->link);
	return whole;
fail:
	free(seg);
	free(whole);
	return NULL;
}

/* A range of need bytes (a multiple of ARENA_BLOCK_SIZE) from a segment,
 * mapping one when none fits; done_only: from a range whose fence has
 * completed or a new segment. */
static struct range *take_large(arena *a, uint64_t need, bool done_only, bool *waited)
{
	bool oom = false;
	struct range *r = done_only ? take_done(a, &a->free_large, need, &oom)
				    : take_fit(&a->free_large, need, &oom);
	struct range *space;
	if (!r && !oom && (space = grow(a, need, waited)))
		r = carve(&a->free_large, space, need, &oom);
	if (r)
		arena_blockmap_set(&a->blocks, r->start, r->size, r);
	return r;
}

/* A range of need bytes (a multiple of ARENA_SMALL_ALIGN, at most a block)
 * from a small block, cutting a new block from a segment when none has
 * room; done_only as for take_large. */
static struct range *take_small(arena *a, uint64_t need, bool done_only, bool *waited)
{
	bool oom = false;
	struct range *r = done_only ? take_done(a, &a->free_small, need, &oom)
				    : take_fit(&a->free_small, need, &oom);
	if (r || oom)
		return r;

	struct region *block = calloc(1, sizeof *block);
	struct range *whole = calloc(1, sizeof *whole);
	struct range *carrier = block && whole ? take_large(a, ARENA_BLOCK_SIZE, done_only, waited) : NULL;
	if (!carrier) {
		free(block);
		free(whole);
		return NULL;
	}
	*block = (struct region){
		.base = carrier->start, .bytes = ARENA_BLOCK_SIZE,
		.segment_ordinal = carrier->region->segment_ordinal,
		.segment_base = carrier->region->segment_base,
		.first = whole, .carrier = carrier,
	};
	/* The block's space inherits the carrier's fence: it is settled when a
	 * small allocation is handed out, like any other range. */
	*whole = (struct range){
		.region = block, .start = carrier->start, .size = ARENA_BLOCK_SIZE,
		.state = RANGE_FREE, .free_seq = carrier->free_seq, .fence = carrier->fence,
	};
	carrier->state = RANGE_CARRIER;
	carrier->block = block;
	arena_tree_insert(&a->free_small, &whole->link);
	r = carve(&a->free_small, whole, need, &oom);
	if (!r) {
		/* The split could not allocate: the block, empty, goes back to
		 * its segment, where its 2 MB serve any size again. */
		arena_tree_remove(&a->free_small, &whole->link);
		free(whole);
		free(block);
		release_range(a, carrier, carrier->fence, carrier->free_seq);
	}
	return r;
}

static struct range *take(arena *a, uint64_t served, bool small, bool done_only, bool *waited)
{
	if (served > UINT64_MAX - ARENA_BLOCK_SIZE)
		return NULL;
	return small ? take_small(a, round_up(served, ARENA_SMALL_ALIGN), done_only, waited)
		     : take_large(a, round_up(served, ARENA_BLOCK_SIZE), done_only, waited);
}

arena *arena_create(const struct arena_config *cfg, const struct arena_backend *backend)
{
	if (!backend || !backend->map || !backend->unmap || !backend->fence_record ||
	    !backend->fence_done || !backend->fence_wait)
		return NULL;
	arena *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	if (!arena_blockmap_init(&a->blocks)) {
		free(a);
		return NULL;
	}
	if (pthread_mutex_init(&a->lock, NULL) != 0) {
		arena_blockmap_destroy(&a->blocks);
		free(a);
		return NULL;
	}
	struct arena_config c = cfg ? *cfg : (struct arena_config){ 0 };
	a->backend = *backend;
	a->capped = c.max_bytes != 0;
	a->max_bytes = c.max_bytes - c.max_bytes % ARENA_BLOCK_SIZE;
	uint64_t segment_bytes = c.segment_bytes ? c.segment_bytes : DEFAULT_SEGMENT_BYTES;
	if (segment_bytes > UINT64_MAX - ARENA_BLOCK_SIZE)
		segment_bytes = UINT64_MAX - ARENA_BLOCK_SIZE;
	a->segment_bytes = round_up(segment_bytes, ARENA_BLOCK_SIZE);
	a->small_threshold = c.small_threshold ? c.small_threshold : DEFAULT_SMALL_THRESHOLD;
	if (a->small_threshold > ARENA_BLOCK_SIZE)
		a->small_threshold = ARENA_BLOCK_SIZE;
	arena_tree_init(&a->live_small, cmp_start);
	arena_tree_init(&a->free_large, cmp_free);
	arena_tree_init(&a->free_small, cmp_free);
	return a;
}

static void free_region_ranges(struct region *region)
{
	for (struct range *r = region->first, *next; r; r = next) {
		next = r->next;
		if (r->state == RANGE_CARRIER) {
			free_region_ranges(r->block);
			free(r->block);
		}
		free(r);
	}
}

void arena_destroy(arena *a)
{
	if (!a)
		return;
	for (struct region *seg = a->oldest, *newer; seg; seg = newer) {
		newer = seg->newer;
		(void)a->backend.unmap(a->backend.ctx, seg->base, seg->bytes); /* else left to the exit */
		free_region_ranges(seg);
		free(seg);
	}
	for (struct region *seg = a->stranded, *newer; seg; seg = newer) {
		newer = seg->newer;
		(void)a->backend.unmap(a->backend.ctx, seg->base, seg->bytes);
		free(seg);
	}
	free(a->segments);
	arena_blockmap_destroy(&a->blocks);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* The range placement picks for served bytes, its fence completed (or,
 * with ordered, ordered on the GPU: fence_settle); or, when the backend
 * cannot wait for that fence, the first in placement order whose fence
 * did, else a new segment; NULL when none fits. */
static struct range *take_settled(arena *a, uint64_t served, bool small, bool *ordered, bool *waited)
{
	struct range *r = take(a, served, small, false, waited);
	if (r && !fence_settle(a, r->fence, ordered, waited)) {
		/* The GPU may still use the range, and the backend could not wait
		 * (the driver refused a synchronize, inside a graph capture): it
		 * stays free, and memory no work can use serves this. */
		release_range(a, r, r->fence, r->free_seq);
		r = take(a, served, small, true, waited);
	}
	return r;
}

static int alloc(arena *a, uint64_t size, bool device, struct arena_alloc *out)
{
	uint64_t served = served_size(size);
	bool small = served <= a->small_threshold;
	pthread_mutex_lock(&a->lock);
	bool waited = false, ordered = false;
	bool *may_order = device ? &ordered : NULL;
	uint64_t refusals = a->stats.fence_refusals;
	struct range *r = take_settled(a, served, small, may_order, &waited);
	if (!r && a->stats.fence_refusals > refusals && last_resort(a)) {
		waited = true;
		r = take_settled(a, served, small, may_order, &waited);
		a->stats.last_resort_waits += r != NULL;
	}
	a->stats.fence_waits += waited;
	if (!r) {
		a->stats.failed_allocs++;
		pthread_mutex_unlock(&a->lock);
		return ARENA_ENOMEM;
	}
	r->state = RANGE_LIVE;
	r->id = ++a->stats.total_allocs;
	r->requested = size;
	if (small)
		arena_tree_insert(&a->live_small, &r->link);
	a->stats.live_allocs++;
	a->stats.live_bytes += r->size;
	a->stats.peak_live_bytes = max_u64(a->stats.peak_live_bytes, a->stats.live_bytes);
	a->stats.fence_orders += ordered;
	describe(r, out);
	pthread_mutex_unlock(&a->lock);
	return ARENA_OK;
}

int arena_alloc(arena *a, uint64_t size, struct arena_alloc *out)
{
	return alloc(a, size, false, out);
}

int arena_alloc_device(arena *a, uint64_t size, struct arena_alloc *out)
{
	return alloc(a, size, true, out);
}

/* The small live range with the greatest start <= address, or NULL. */
static struct range *small_live_at_or_before(arena *a, uint64_t address)
{
	struct range probe = { .start = address };
	struct arena_tree_node *n = arena_tree_floor(&a->live_small, &probe.link);
	return n ? container_of(n, struct range, link) : NULL;
}

/* The live range holding address, or NULL: the block's large one, or a
 * small one of its small block. Its reserved range, padding included. */
static struct range *live_holding(arena *a, uint64_t address)
{
	struct range *r = arena_blockmap_get(&a->blocks, address);
	if (r && r->state == RANGE_CARRIER)
		r = small_live_at_or_before(a, address);
	return r && r->state == RANGE_LIVE && address - r->start < r->size ? r : NULL;
}

int arena_free(arena *a, uint64_t address, struct arena_alloc *out)
{
	pthread_mutex_lock(&a->lock);
	struct range *r = live_holding(a, address);
	if (!r || r->start != address) {
		pthread_mutex_unlock(&a->lock);
		return ARENA_ENOTFOUND;
	}
	if (r->region->carrier)
		arena_tree_remove(&a->live_small, &r->link);
	if (out)
		describe(r, out);
	a->stats.live_allocs--;
	a->stats.live_bytes -= r->size;
	uint64_t fence = a->backend.fence_record(a->backend.ctx);
	a->newest_fence = fence;
	release_range(a, r, fence, ++a->frees);
	pthread_mutex_unlock(&a->lock);
	return ARENA_OK;
}

/* True when address cannot be the arena's (see span_lo). */
static bool outside_span(arena *a, uint64_t address)
{
	return address < atomic_load_explicit(&a->span_lo, memory_order_relaxed) ||
	       address >= atomic_load_explicit(&a->span_hi, memory_order_relaxed);
}

bool arena_lookup(arena *a, uint64_t address, struct arena_alloc *out)
{
	if (outside_span(a, address))
		return false;
	pthread_mutex_lock(&a->lock);
	struct range *r = live_holding(a, address);
	bool found = r && address - r->start < served_size(r->requested);
	if (found)
		describe(r, out);
	pthread_mutex_unlock(&a->lock);
	return found;
}

bool arena_range_idle(arena *a, uint64_t address, uint64_t bytes)
{
	/* Only mapped memory can hold an allocation. */
	uint64_t lo = max_u64(address, atomic_load(&a->span_lo));
	uint64_t end = bytes > UINT64_MAX - address ? UINT64_MAX : address + bytes;
	end = min_u64(end, atomic_load(&a->span_hi));
	if (lo >= end)
		return true;
	bool idle = true;
	pthread_mutex_lock(&a->lock);
	/* Block by block: a large live range fills every block the map names
	 * it in; in a small block, the small live range starting last before
	 * the part of [lo, end) there is the only one that can reach into it. */
	for (uint64_t b = lo - lo % ARENA_BLOCK_SIZE; idle && b < end; b += ARENA_BLOCK_SIZE) {
		struct range *r = arena_blockmap_get(&a->blocks, b);
		if (r && r->state == RANGE_CARRIER) {
			r = small_live_at_or_before(a, min_u64(end, b + ARENA_BLOCK_SIZE) - 1);
			idle = !r || r->start + r->size <= max_u64(lo, b);
		} else {
			idle = !r;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return idle;
}

bool arena_owns(arena *a, uint64_t address)
{
	if (outside_span(a, address))
		return false;
	pthread_mutex_lock(&a->lock);
	size_t n = segment_index_at_or_before(a, address);
	bool owned = n && address - a->segments[n - 1]->base < a->segments[n - 1]->bytes;
	pthread_mutex_unlock(&a->lock);
	return owned;
}

uint64_t arena_mapped_extent(arena *a, uint64_t address, uint64_t bytes)
{
	if (outside_span(a, address))
		return 0;
	pthread_mutex_lock(&a->lock);
	size_t n = segment_index_at_or_before(a, address);
	uint64_t left = 0;
	if (n && address - a->segments[n - 1]->base < a->segments[n - 1]->bytes)
		left = a->segments[n - 1]->base + a->segments[n - 1]->bytes - address;
	pthread_mutex_unlock(&a->lock);
	return left < bytes ? left : bytes;
}

void arena_get_stats(arena *a, struct arena_stats *out)
{
	pthread_mutex_lock(&a->lock);
	*out = a->stats;
	pthread_mutex_unlock(&a->lock);
}

static void visit_live(const struct region *region, void (*fn)(void *ctx, const struct arena_alloc *),
		       void *ctx)
{
	for (const struct range *r = region->first; r; r = r->next) {
		struct arena_alloc alloc;
		if (r->state == RANGE_CARRIER) {
			visit_live(r->block, fn, ctx);
		} else if (r->state == RANGE_LIVE) {
			describe(r, &alloc);
			fn(ctx, &alloc);
		}
	}
}

void arena_foreach_live(arena *a, void (*fn)(void *ctx, const struct arena_alloc *), void *ctx)
{
	pthread_mutex_lock(&a->lock);
	/* Segments by base, and each region's ranges by address. */
	for (size_t i = 0; i < a->stats.segments; i++)
		visit_live(a->segments[i], fn, ctx);
	pthread_mutex_unlock(&a->lock);
}
