/*
 * arena.h: the managed-memory caching arena behind the allocator shim.
 *
 * The program's device allocations (cudaMalloc and friends) are served from
 * a few large managed segments instead of one cudaMallocManaged call each:
 * allocation is fast, a deterministic program gets the same addresses in
 * every run, and large allocations are 2 MB-aligned and 2 MB-rounded so two
 * tensors never share a UM block (the unit of migration).
 *
 * The arena is bookkeeping only. Mapping memory and ordering against the GPU
 * go through a backend (CUDA in the injected libraries, a fake in tests):
 *  - a freed range may still be read or written by kernels already queued,
 *    because the real cudaFree synchronizes and programs rely on it. So every
 *    free records a fence; the range may be chosen again at once (keeping
 *    addresses deterministic), but is handed out only after its fence has
 *    completed, waiting for it if needed (device memory: or once the
 *    backend has ordered the GPU's later work behind it, arena_alloc_device);
 *    when the backend cannot wait, the range stays free and the
 *    allocation takes fresh memory;
 *  - the total mapped size never exceeds max_bytes: past it, allocation fails
 *    with ARENA_ENOMEM and the shim returns the API's out-of-memory error.
 *
 * Placement is deterministic: for the same sequence of calls the arena
 * returns the same addresses relative to its segments' bases, whatever
 * bases the backend returns and however fast fences complete (arena.c says
 * how). Small allocations are packed into 2 MB blocks of their own, so a UM
 * block holds one large allocation or small ones only.
 *
 * All functions are thread-safe (one internal mutex).
 */
#ifndef UMKIT_ARENA_H
#define UMKIT_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARENA_BLOCK_SIZE ((uint64_t)2 << 20) /* one UM block: 2 MiB */

typedef struct arena arena;

enum arena_status {
	ARENA_OK = 0,
	ARENA_ENOMEM = -1,   /* would exceed max_bytes, or the backend could not map */
	ARENA_ENOTFOUND = -2 /* not an address this arena handed out */
};

/* The arena calls the backend with its lock held, so never two calls at
 * once. */
struct arena_backend {
	void *ctx;
	/* Maps bytes of managed memory (a multiple of ARENA_BLOCK_SIZE) at a
	 * 2 MB-aligned address. Returns 0 and sets *base, or -1. */
	int (*map)(void *ctx, uint64_t bytes, uint64_t *base);
	/* Unmaps what map returned. The arena unmaps a segment before
	 * arena_destroy only when it is wholly free and its fences completed.
	 * Returns false, unmapping nothing, when it cannot now (a CUDA
	 * backend's free synchronizes, which a graph capture under way does
	 * not allow): the segment then stays, free. */
	bool (*unmap)(void *ctx, uint64_t base, uint64_t bytes);
	/* Records a fence after all GPU work issued so far; returns its token
	 * (never 0). Tokens never decrease (one may cover two frees): a later
	 * fence implies the earlier ones. */
	uint64_t (*fence_record)(void *ctx);
	/* True once every piece of work before the fence has finished. */
	bool (*fence_done)(void *ctx, uint64_t token);
	/* Blocks until fence_done(token) and returns true; false when it
	 * cannot wait (the driver refused), and the fence may not be done.
	 * Only called after fence_done(token) returned false. */
	bool (*fence_wait)(void *ctx, uint64_t token);
	/* Optional: the last resort of an allocation that would fail after
	 * fence_wait refused in it. Waits for every fence made so far, where
	 * fence_wait judged the wait unsafe but not impossible, and returns
	 * true; false when it cannot either. The arena then asks fence_done
	 * before it hands a range out, as ever. */
	bool (*fence_wait_all)(void *ctx);
	/* Optional: queues all GPU work issued from now on behind the fence,
	 * which has not completed, so that arena_alloc_device may hand out a
	 * range it covers at once. Returns false when it cannot (the arena then
	 * waits, as ever). */
	bool (*fence_order)(void *ctx, uint64_t token);
};

/* The alignment of a small (packed) allocation; a large one is block-aligned. */
#define ARENA_SMALL_ALIGN ((uint64_t)512)

struct arena_config {
	uint64_t max_bytes;       /* cap on mapped bytes, used rounded down to
				     whole blocks; 0: no cap */
	uint64_t segment_bytes;   /* granularity of new segments, rounded up to
				     whole blocks; 0: 256 MiB. A larger
				     allocation gets a segment of its own. */
	uint64_t small_threshold; /* sizes up to this are packed, each
				     ARENA_SMALL_ALIGN aligned; larger ones
				     are block-aligned and rounded to whole
				     blocks; 0: 1 MiB; at most ARENA_BLOCK_SIZE */
};

/* One allocation as the arena sees it. */
struct arena_alloc {
	uint64_t id;       /* ordinal: 1, 2, ... in allocation order */
	uint64_t address;
	uint64_t size;     /* as requested */
	uint64_t reserved; /* as set aside (rounded) */
};

/* cfg NULL means every default. Returns NULL when out of memory or when the
 * backend lacks a function. The backend is copied. */
arena *arena_create(const struct arena_config *cfg, const struct arena_backend *backend);

/* Unmaps every segment. Live allocations are forgotten. The caller makes
 * sure no GPU work still uses the memory (the arena waits for no fence). */
void arena_destroy(arena *a);

/* Serves size bytes (size 0 is served as 1). Returns ARENA_OK and fills out,
 * or ARENA_ENOMEM (counted in failed_allocs). May block on a fence of an
 * earlier free. A range whose fence the backend cannot wait for is passed
 * over for the first range in placement order whose fence completed, else
 * a new segment; that placement is then not the deterministic one. When
 * that fails too, the backend's fence_wait_all (if any) may wait for every
 * fence, and the allocation is tried once more. */
int arena_alloc(arena *a, uint64_t size, struct arena_alloc *out);

/* As arena_alloc, for device memory: memory that only GPU work issued
 * after the allocation touches, never the host. A range whose fence has
 * not completed is handed out without waiting once the backend has queued
 * that work behind the fence (arena_backend.fence_order). */
int arena_alloc_device(arena *a, uint64_t size, struct arena_alloc *out);

/* Releases the allocation that starts at address and records a fence for it.
 * Returns ARENA_OK (out, if not NULL, describes what was freed), or
 * ARENA_ENOTFOUND when address is not the start of a live allocation
 * (unknown, inside one, or already freed). */
int arena_free(arena *a, uint64_t address, struct arena_alloc *out);

/* Finds the live allocation containing address, that is whose
 * [address, address + size) holds it, size as requested (a zero-size
 * allocation holds one byte; the rounding padding belongs to no
 * allocation). Returns true and fills out. O(log n): cheap enough for every
 * parameter word of every launch. */
bool arena_lookup(arena *a, uint64_t address, struct arena_alloc *out);

/* True when no live allocation's reserved range overlaps
 * [address, address + bytes): nothing of the program's lives there now. */
bool arena_range_idle(arena *a, uint64_t address, uint64_t bytes);

/* True when address lies in memory the arena mapped (live or not). */
bool arena_owns(arena *a, uint64_t address);

/* How many of the bytes [address, address + bytes) lie in the one segment
 * that holds address: bytes when the range is within it, less when it runs
 * past its end, 0 when address is not mapped. A driver call on managed
 * memory must stay within one allocation (segment); two segments can be
 * neighbours in the address space. */
uint64_t arena_mapped_extent(arena *a, uint64_t address, uint64_t bytes);

struct arena_stats {
	uint64_t mapped_bytes;   /* sum of segments (and of any mapped but not
				    yet unmapped after its set-up failed) */
	uint64_t live_bytes;     /* sum of reserved bytes of live allocations */
	uint64_t peak_live_bytes;
	uint64_t live_allocs;
	uint64_t total_allocs;   /* ever */
	uint64_t failed_allocs;  /* ARENA_ENOMEM returned */
	uint64_t fence_waits;    /* allocations that had to wait for a fence */
	uint64_t fence_orders;   /* device allocations handed out before their
				    fence completed, ordered behind it on the GPU */
	uint64_t fence_refusals; /* waits for a fence the backend could not make */
	uint64_t last_resort_waits; /* allocations served only once the backend
				       waited for every fence (fence_wait_all) */
	uint64_t segments;
};
void arena_get_stats(arena *a, struct arena_stats *out);

/* Calls fn for each live allocation in address order, under the arena's
 * lock: fn must not call back into the arena. */
void arena_foreach_live(arena *a, void (*fn)(void *ctx, const struct arena_alloc *), void *ctx);

#endif
