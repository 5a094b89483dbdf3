/*
 * Unit tests for the managed-memory arena (arena.h) and its index
 * (arena_tree.h), over a fake backend: map hands out 2 MiB-aligned addresses
 * from a counter (never dereferenced), and fences complete only when the
 * test says so or the arena waits for them.
 */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>

#include "arena.h"
#include "arena_tree.h"
#include "failing_alloc.h"

#define MiB ((uint64_t)1 << 20)
#define BLOCK ARENA_BLOCK_SIZE
#define MAX_MAPS 4096

/* ---- the fake backend ---------------------------------------------------- */

struct fake_map {
	uint64_t base, bytes;
	bool unmapped;
};

struct fake {
	uint64_t next_base;
	bool descending; /* bases handed out downwards: another address layout */
	struct fake_map maps[MAX_MAPS];
	size_t nmaps, unmaps;
	uint64_t mapped, peak_mapped;
	int maps_to_refuse;
	bool refuse_unmaps;    /* unmap cannot now (a capture under way) */
	size_t refused_unmaps;
	uint64_t last_token;   /* the newest fence recorded */
	uint64_t done_upto;    /* every fence up to this one completed */
	bool fences_instant;   /* each fence completes as it is recorded */
	bool refuse_waits;     /* fence_wait cannot wait (a refused synchronize) */
	uint64_t refuse_from;  /* fence_wait completes the fences before this
				  one, then cannot wait (0: off) */
	bool has_wait_all;     /* the backend has fence_wait_all */
	bool wait_all_ok;      /* fence_wait_all can wait */
	bool wait_all_false;   /* ...but completes nothing: a backend whose
				  word is wrong */
	size_t wait_alls;      /* fence_wait_all calls */
	bool has_order;        /* the backend has fence_order */
	bool refuse_orders;    /* ...which cannot order now */
	uint64_t ordered_upto; /* the newest fence it ordered the GPU behind */
	size_t waits;          /* fence_wait calls */
	size_t needless_waits; /* fence_wait on a fence already done */
	uint64_t last_wait;
	bool bad_call; /* a call broke the backend contract */
};

static int fake_map_fn(void *ctx, uint64_t bytes, uint64_t *base)
{
	struct fake *f = ctx;
	if (bytes == 0 || bytes % BLOCK || f->nmaps == MAX_MAPS)
		f->bad_call = true;
	if (f->maps_to_refuse > 0) {
		f->maps_to_refuse--;
		return -1;
	}
	/* A one-block gap between segments, so nothing relies on contiguity. */
	if (f->descending) {
		f->next_base -= bytes + BLOCK;
		*base = f->next_base;
	} else {
		*base = f->next_base;
		f->next_base += bytes + BLOCK;
	}
	f->maps[f->nmaps++] = (struct fake_map){ *base, bytes, false };
	f->mapped += bytes;
	if (f->mapped > f->peak_mapped)
		f->peak_mapped = f->mapped;
	return 0;
}

static bool fake_unmap_fn(void *ctx, uint64_t base, uint64_t bytes)
{
	struct fake *f = ctx;
	if (f->refuse_unmaps) {
		f->refused_unmaps++;
		return false;
	}
	for (size_t i = 0; i < f->nmaps; i++) {
		if (f->maps[i].base == base && !f->maps[i].unmapped) {
			if (f->maps[i].bytes != bytes)
				f->bad_call = true;
			f->maps[i].unmapped = true;
			f->mapped -= bytes;
			f->unmaps++;
			return true;
		}
	}
	f->bad_call = true;
	return true;
}

static uint64_t fake_fence_record(void *ctx)
{
	struct fake *f = ctx;
	f->last_token++;
	if (f->fences_instant)
		f->done_upto = f->last_token;
	return f->last_token;
}

static bool fake_fence_done(void *ctx, uint64_t token)
{
	struct fake *f = ctx;
	if (token == 0 || token > f->last_token)
		f->bad_call = true;
	return token <= f->done_upto;
}

static bool fake_fence_wait(void *ctx, uint64_t token)
{
	struct fake *f = ctx;
	if (token == 0 || token > f->last_token)
		f->bad_call = true;
	f->waits++;
	if (token <= f->done_upto)
		f->needless_waits++;
	f->last_wait = token;
	if (f->refuse_waits)
		return false;
	if (f->refuse_from && token >= f->refuse_from) {
		if (f->refuse_from - 1 > f->done_upto)
			f->done_upto = f->refuse_from - 1;
		return false;
	}
	if (token > f->done_upto)
		f->done_upto = token;
	return true;
}

static bool fake_fence_wait_all(void *ctx)
{
	struct fake *f = ctx;
	f->wait_alls++;
	if (!f->wait_all_ok)
		return false;
	if (!f->wait_all_false)
		f->done_upto = f->last_token;
	return true;
}

static bool fake_fence_order(void *ctx, uint64_t token)
{
	struct fake *f = ctx;
	if (token == 0 || token > f->last_token || token <= f->done_upto)
		f->bad_call = true;
	if (f->refuse_orders)
		return false;
	if (token > f->ordered_upto)
		f->ordered_upto = token;
	return true;
}

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof *f);
	assert_non_null(f);
	f->next_base = (uint64_t)1 << 44;
	return f;
}

static struct arena_backend fake_backend(struct fake *f)
{
	return (struct arena_backend){ .ctx = f, .map = fake_map_fn, .unmap = fake_unmap_fn,
				       .fence_record = fake_fence_record, .fence_done = fake_fence_done,
				       .fence_wait = fake_fence_wait,
				       .fence_wait_all = f->has_wait_all ? fake_fence_wait_all : NULL,
				       .fence_order = f->has_order ? fake_fence_order : NULL };
}

static arena *arena_over(struct fake *f, uint64_t max_bytes, uint64_t segment_bytes)
{
	struct arena_config cfg = { .max_bytes = max_bytes, .segment_bytes = segment_bytes };
	struct arena_backend b = fake_backend(f);
	arena *a = arena_create(&cfg, &b);
	assert_non_null(a);
	return a;
}

/* Which mapping holds address, and where in it: the segment-relative form in
 * which two arenas over different bases can be compared. */
static bool fake_locate(const struct fake *f, uint64_t address, size_t *map, uint64_t *offset)
{
	for (size_t i = 0; i < f->nmaps; i++) {
		if (!f->maps[i].unmapped && address - f->maps[i].base < f->maps[i].bytes) {
			*map = i;
			*offset = address - f->maps[i].base;
			return true;
		}
	}
	return false;
}

static uint64_t alloc_ok(arena *a, uint64_t size)
{
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, size, &out), ARENA_OK);
	return out.address;
}

static void free_ok(arena *a, uint64_t address)
{
	assert_int_equal(arena_free(a, address, NULL), ARENA_OK);
}

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: the same sequence on every platform. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* A size mix shaped like a training step: many small tensors, many large,
 * now and then one larger than a segment of the given size. */
static uint64_t random_size(uint64_t *rng, uint64_t segment_bytes)
{
	uint64_t r = rng_next(rng);
	switch (r % 10) {
	case 0: case 1: case 2: case 3:
		return (r >> 8) % 4096 + ((r >> 20) % 4 == 0 ? 0 : 1);
	case 4: case 5:
		return (r >> 8) % MiB + 1;
	case 9:
		if ((r >> 8) % 8 == 0)
			return segment_bytes + (r >> 12) % (2 * segment_bytes);
		/* fall through */
	default:
		return MiB + 1 + (r >> 8) % (12 * MiB);
	}
}

/* ---- the tree ------------------------------------------------------------ */

struct keyed {
	struct arena_tree_node link;
	uint64_t key;
};

static int cmp_keyed(const struct arena_tree_node *a, const struct arena_tree_node *b)
{
	uint64_t ka = ((const struct keyed *)a)->key, kb = ((const struct keyed *)b)->key;
	return (ka > kb) - (ka < kb);
}

/* Checks order and AVL balance below n; returns its height. */
static int check_subtree(const struct arena_tree_node *n, const struct keyed **prev, size_t *count)
{
	if (!n)
		return 0;
	int hl = check_subtree(n->left, prev, count);
	const struct keyed *k = (const struct keyed *)n;
	if (*prev)
		assert_true((*prev)->key < k->key);
	*prev = k;
	(*count)++;
	int hr = check_subtree(n->right, prev, count);
	assert_true(hl - hr <= 1 && hr - hl <= 1);
	assert_int_equal(n->height, 1 + (hl > hr ? hl : hr));
	return n->height;
}

static void tree_stays_ordered_and_balanced(void **state)
{
	enum { N = 3000 };
	static struct keyed nodes[N];
	static bool in[N];
	struct arena_tree t;
	arena_tree_init(&t, cmp_keyed);
	uint64_t rng = 42;
	size_t count = 0;
	for (size_t i = 0; i < N; i++)
		nodes[i].key = i * 10;
	for (int step = 0; step < 20000; step++) {
		size_t i = rng_next(&rng) % N;
		if (in[i]) {
			arena_tree_remove(&t, &nodes[i].link);
			count--;
		} else {
			arena_tree_insert(&t, &nodes[i].link);
			count++;
		}
		in[i] = !in[i];
		if (step % 1000)
			continue;
		const struct keyed *prev = NULL;
		size_t seen = 0;
		int h = check_subtree(t.root, &prev, &seen);
		assert_int_equal(seen, count);
		/* AVL: height <= 1.44 log2(n + 2). */
		assert_true(h <= 1.45 * log2((double)count + 2));
	}
	/* ceil and floor against a linear scan. */
	for (int q = 0; q < 2000; q++) {
		struct keyed probe = { .key = rng_next(&rng) % (N * 10 + 20) };
		const struct keyed *c = (const struct keyed *)arena_tree_ceil(&t, &probe.link);
		const struct keyed *fl = (const struct keyed *)arena_tree_floor(&t, &probe.link);
		const struct keyed *want_c = NULL, *want_f = NULL;
		for (size_t i = 0; i < N; i++) {
			if (!in[i])
				continue;
			if (nodes[i].key >= probe.key && (!want_c || nodes[i].key < want_c->key))
				want_c = &nodes[i];
			if (nodes[i].key <= probe.key && (!want_f || nodes[i].key > want_f->key))
				want_f = &nodes[i];
		}
		assert_ptr_equal(c, want_c);
		assert_ptr_equal(fl, want_f);
	}
}

/* ---- placement and rounding ---------------------------------------------- */

static void large_allocations_are_block_aligned_and_rounded(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 0);
	const uint64_t sizes[] = { MiB + 1, 2 * MiB, 2 * MiB + 1, 5 * MiB, 100 * MiB + 3 };
	uint64_t prev_end = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		struct arena_alloc out;
		assert_int_equal(arena_alloc(a, sizes[i], &out), ARENA_OK);
		assert_int_equal(out.address % BLOCK, 0);
		assert_int_equal(out.reserved, (sizes[i] + BLOCK - 1) / BLOCK * BLOCK);
		assert_int_equal(out.size, sizes[i]);
		/* No two allocations share a block. */
		assert_true(out.address >= prev_end);
		prev_end = out.address + out.reserved;
	}
	arena_destroy(a);
	assert_false(f->bad_call);
	free(f);
}

static void small_allocations_are_packed_in_blocks_of_their_own(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 0);
	struct arena_alloc s1, s2, s3, l1, s4, z;
	assert_int_equal(arena_alloc(a, 100, &s1), ARENA_OK);
	assert_int_equal(arena_alloc(a, 513, &s2), ARENA_OK);
	assert_int_equal(arena_alloc(a, MiB, &s3), ARENA_OK); /* the threshold itself is small */
	assert_int_equal(arena_alloc(a, MiB + 1, &l1), ARENA_OK);
	assert_int_equal(arena_alloc(a, 512, &s4), ARENA_OK);
	assert_int_equal(arena_alloc(a, 0, &z), ARENA_OK);
	const struct arena_alloc *small[] = { &s1, &s2, &s3, &s4, &z };
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(small[i]->address % 512, 0);
		assert_int_equal(small[i]->reserved % 512, 0);
		assert_true(small[i]->reserved >= small[i]->size);
		assert_true(small[i]->reserved < small[i]->size + 512 || small[i]->size == 0);
		/* Never in the large allocation's blocks. */
		assert_true(small[i]->address + small[i]->reserved <= l1.address ||
			    small[i]->address >= l1.address + l1.reserved);
	}
	assert_int_equal(z.reserved, 512);
	assert_int_equal(s2.reserved, 1024);
	/* Packed: the first small ones sit back to back in one block. */
	assert_int_equal(s2.address, s1.address + 512);
	assert_int_equal(s3.address, s2.address + 1024);
	assert_int_equal(s1.address / BLOCK, s3.address / BLOCK);
	assert_int_equal(s4.address / BLOCK, s1.address / BLOCK);
	arena_destroy(a);
	free(f);
}

static void small_threshold_is_configurable(void **state)
{
	struct fake *f = fake_new();
	struct arena_config cfg = { .small_threshold = 4096 };
	struct arena_backend b = fake_backend(f);
	arena *a = arena_create(&cfg, &b);
	assert_non_null(a);
	struct arena_alloc s, l;
	assert_int_equal(arena_alloc(a, 4096, &s), ARENA_OK);
	assert_int_equal(arena_alloc(a, 4097, &l), ARENA_OK);
	assert_int_equal(s.reserved, 4096);
	assert_int_equal(l.reserved, BLOCK);
	assert_int_equal(l.address % BLOCK, 0);
	arena_destroy(a);
	/* A threshold above a block is a block: a larger allocation would not
	 * fit in the small block it was packed into. */
	cfg.small_threshold = 3 * MiB;
	a = arena_create(&cfg, &b);
	assert_non_null(a);
	assert_int_equal(arena_alloc(a, 3 * MiB, &l), ARENA_OK);
	assert_int_equal(l.reserved, 2 * BLOCK);
	assert_int_equal(l.address % BLOCK, 0);
	arena_destroy(a);
	free(f);
}

/* A size near UINT64_MAX: rounded up to whole blocks it would wrap (to a
 * range of no bytes, whose address the next allocation would get too),
 * and mapped it would reach past the address space (the fake maps any
 * size). Either fails, and leaves no segment mapped. */
static void sizes_past_the_address_space_are_enomem(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 0);
	uint64_t x = alloc_ok(a, 4 * MiB);
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, UINT64_MAX, &out), ARENA_ENOMEM);
	assert_int_equal(arena_alloc(a, UINT64_MAX - BLOCK, &out), ARENA_ENOMEM); /* the largest that rounds */
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.failed_allocs, 2);
	assert_int_equal(st.segments, 1);
	assert_int_equal(st.mapped_bytes, 256 * MiB);
	assert_int_equal(f->mapped, 256 * MiB);
	assert_int_equal(alloc_ok(a, 4 * MiB), x + 4 * MiB);
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

/* Randomised alloc/free against a model: no two live allocations overlap,
 * each lies inside one mapped segment, a range freed earlier is handed out
 * again only once its fence completed, and the arena's stats, lookups and
 * iteration agree with the model. Refusing: now and then the backend
 * cannot wait past some fence for a while. */
struct freed {
	uint64_t address, reserved, token;
};

struct live_check {
	const struct arena_alloc *expect;
	size_t n, seen;
	uint64_t last_address;
};

static void check_visit(void *ctx, const struct arena_alloc *al)
{
	struct live_check *c = ctx;
	if (c->seen)
		assert_true(al->address > c->last_address);
	c->last_address = al->address;
	bool found = false;
	for (size_t i = 0; i < c->n && !found; i++)
		found = c->expect[i].address == al->address && c->expect[i].id == al->id &&
			c->expect[i].size == al->size && c->expect[i].reserved == al->reserved;
	assert_true(found);
	c->seen++;
}

static void random_ops(uint64_t seed, bool refusing)
{
	enum { OPS = 6000, MAX_LIVE = 400 };
	const uint64_t cap = 512 * MiB, segment = 32 * MiB;
	struct fake *f = fake_new();
	arena *a = arena_over(f, cap, segment);
	struct arena_alloc *live = calloc(MAX_LIVE, sizeof *live);
	struct freed *freed = calloc(OPS, sizeof *freed);
	assert_non_null(live);
	assert_non_null(freed);
	size_t nlive = 0, nfreed = 0, enomem = 0;
	uint64_t rng = seed, live_bytes = 0, peak = 0, ids = 0;
	for (int op = 0; op < OPS; op++) {
		uint64_t r = rng_next(&rng);
		if (r % 7 == 0 && !f->refuse_from) /* the GPU catches up, now and then */
			f->done_upto = f->last_token;
		if (refusing && r % 53 == 0)
			f->refuse_from = f->refuse_from ? 0 : f->done_upto + 1 + (r >> 32) % 3;
		bool do_alloc = nlive == 0 || (nlive < MAX_LIVE && r % 100 < 55);
		if (!do_alloc) {
			size_t i = (r >> 16) % nlive;
			struct arena_alloc out;
			assert_int_equal(arena_free(a, live[i].address, &out), ARENA_OK);
			assert_int_equal(out.id, live[i].id);
			freed[nfreed++] = (struct freed){ out.address, out.reserved, f->last_token };
			live_bytes -= out.reserved;
			live[i] = live[--nlive];
			continue;
		}
		struct arena_alloc al;
		int rc = arena_alloc(a, random_size(&rng, segment), &al);
		assert_true(f->mapped <= cap);
		if (rc == ARENA_ENOMEM) {
			enomem++;
			continue;
		}
		assert_int_equal(rc, ARENA_OK);
		assert_int_equal(al.id, ++ids);
		size_t map = 0;
		uint64_t offset = 0;
		assert_true(fake_locate(f, al.address, &map, &offset));
		assert_true(offset + al.reserved <= f->maps[map].bytes);
		for (size_t i = 0; i < nlive; i++)
			assert_true(al.address + al.reserved <= live[i].address ||
				    live[i].address + live[i].reserved <= al.address);
		for (size_t i = 0; i < nfreed; i++)
			if (al.address < freed[i].address + freed[i].reserved &&
			    freed[i].address < al.address + al.reserved)
				assert_true(freed[i].token <= f->done_upto);
		live[nlive++] = al;
		live_bytes += al.reserved;
		if (live_bytes > peak)
			peak = live_bytes;
	}
	assert_true(enomem > 0); /* the cap was reached: that path ran too */
	assert_true(f->waits > 0);
	assert_int_equal(f->needless_waits, 0);
	assert_false(f->bad_call);

	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_true(refusing ? st.fence_refusals > 0 : st.fence_refusals == 0);
	assert_int_equal(st.live_allocs, nlive);
	assert_int_equal(st.live_bytes, live_bytes);
	assert_int_equal(st.peak_live_bytes, peak);
	assert_int_equal(st.total_allocs, ids);
	assert_int_equal(st.failed_allocs, enomem);
	assert_int_equal(st.mapped_bytes, f->mapped);
	assert_true(st.fence_waits > 0 && st.fence_waits <= f->waits);
	struct live_check c = { live, nlive, 0, 0 };
	arena_foreach_live(a, check_visit, &c);
	assert_int_equal(c.seen, nlive);
	for (size_t i = 0; i < nlive; i++) {
		struct arena_alloc got;
		assert_true(arena_lookup(a, live[i].address + live[i].size / 2, &got));
		assert_int_equal(got.id, live[i].id);
	}
	/* Freeing everything leaves every segment wholly free. */
	for (size_t i = 0; i < nlive; i++)
		free_ok(a, live[i].address);
	f->refuse_from = 0;
	arena_get_stats(a, &st);
	assert_int_equal(st.live_bytes, 0);
	struct arena_alloc big;
	uint64_t biggest = 0;
	for (size_t i = 0; i < f->nmaps; i++)
		if (!f->maps[i].unmapped && f->maps[i].bytes > biggest)
			biggest = f->maps[i].bytes;
	assert_int_equal(arena_alloc(a, biggest, &big), ARENA_OK);
	arena_destroy(a);
	free(live);
	free(freed);
	free(f);
}

static void random_ops_never_overlap_and_respect_fences(void **state)
{
	random_ops(7, false);
}

static void random_ops_with_refused_waits(void **state)
{
	for (uint64_t seed = 1; seed <= 8; seed++)
		random_ops(seed * 7919, true);
}

/* ---- reuse and fences ---------------------------------------------------- */

static void range_is_reused_only_after_release(void **state)
{
	struct fake *f = fake_new();
	f->fences_instant = true;
	arena *a = arena_over(f, 0, 0);
	uint64_t x = alloc_ok(a, 4 * MiB);
	uint64_t y = alloc_ok(a, 4 * MiB);
	assert_true(y != x);
	uint64_t s = alloc_ok(a, 1000);
	uint64_t t = alloc_ok(a, 1000);
	assert_true(t != s);
	free_ok(a, x);
	free_ok(a, s);
	assert_int_equal(alloc_ok(a, 4 * MiB), x);
	assert_int_equal(alloc_ok(a, 1000), s);
	arena_destroy(a);
	free(f);
}

static uint64_t alloc_device_ok(arena *a, uint64_t size)
{
	struct arena_alloc out;
	assert_int_equal(arena_alloc_device(a, size, &out), ARENA_OK);
	return out.address;
}

/* Device memory takes a range whose fence is pending at once once the
 * backend has ordered the GPU behind it, at the same address it would
 * have waited for; memory the host may touch still waits. */
static void device_range_is_ordered_not_waited_for(void **state)
{
	struct fake *f = fake_new();
	f->has_order = true;
	arena *a = arena_over(f, 0, 0);
	uint64_t x = alloc_ok(a, 4 * MiB);
	alloc_ok(a, 4 * MiB); /* keeps x from merging with the rest */
	uint64_t s = alloc_ok(a, 600);
	alloc_ok(a, 600);
	free_ok(a, x);
	free_ok(a, s);
	assert_int_equal(alloc_device_ok(a, 4 * MiB), x);
	assert_int_equal(alloc_device_ok(a, 600), s);
	assert_int_equal(f->ordered_upto, f->last_token);
	assert_int_equal(f->waits, 0);
	assert_int_equal(f->done_upto, 0);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.fence_orders, 2);
	assert_int_equal(st.fence_waits, 0);

	/* The host's memory waits. */
	free_ok(a, x);
	assert_int_equal(alloc_ok(a, 4 * MiB), x);
	assert_int_equal(f->waits, 1);

	/* A completed fence needs no order. */
	free_ok(a, x);
	f->done_upto = f->last_token;
	uint64_t ordered = f->ordered_upto;
	assert_int_equal(alloc_device_ok(a, 4 * MiB), x);
	assert_int_equal(f->ordered_upto, ordered);

	/* A backend that cannot order: the allocation waits, as ever. */
	free_ok(a, x);
	f->refuse_orders = true;
	assert_int_equal(alloc_device_ok(a, 4 * MiB), x);
	assert_int_equal(f->waits, 2);
	arena_get_stats(a, &st);
	assert_int_equal(st.fence_orders, 2);
	assert_int_equal(st.fence_waits, 2);
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

/* Without fence_order, device memory waits as any other. */
static void device_range_waits_without_fence_order(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 0);
	uint64_t x = alloc_ok(a, 4 * MiB);
	alloc_ok(a, 4 * MiB);
	free_ok(a, x);
	assert_int_equal(alloc_device_ok(a, 4 * MiB), x);
	assert_int_equal(f->waits, 1);
	arena_destroy(a);
	free(f);
}

static void reused_range_waits_for_its_fence(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 0);
	uint64_t x = alloc_ok(a, 4 * MiB);
	alloc_ok(a, 4 * MiB); /* keeps x from merging with the rest */
	free_ok(a, x);
	uint64_t token = f->last_token;
	assert_int_equal(f->done_upto, 0);

	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, 4 * MiB, &out), ARENA_OK);
	assert_int_equal(out.address, x);
	assert_int_equal(f->waits, 1);
	assert_int_equal(f->last_wait, token);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.fence_waits, 1);

	/* Freed, then the GPU caught up: no wait. */
	free_ok(a, x);
	f->done_upto = f->last_token;
	assert_int_equal(alloc_ok(a, 4 * MiB), x);
	assert_int_equal(f->waits, 1);

	/* Small ranges wait the same way. */
	uint64_t s = alloc_ok(a, 600);
	alloc_ok(a, 600);
	free_ok(a, s);
	assert_int_equal(alloc_ok(a, 600), s);
	assert_int_equal(f->waits, 2);
	assert_int_equal(f->last_wait, f->last_token);

	/* Never-used memory never waits. */
	alloc_ok(a, 8 * MiB);
	alloc_ok(a, 300 * MiB);
	assert_int_equal(f->waits, 2);
	arena_get_stats(a, &st);
	assert_int_equal(st.fence_waits, 2);
	assert_int_equal(f->needless_waits, 0);
	arena_destroy(a);
	free(f);
}

/* A freed range whose fence the backend cannot wait for (the driver
 * refused a synchronize) is never handed out: the allocation takes memory
 * whose fence completed, else a new segment, and the range waits, free,
 * until its fence completed. */
static void range_not_waited_for_is_passed_over(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 16 * MiB);
	uint64_t x = alloc_ok(a, 4 * MiB);
	alloc_ok(a, 12 * MiB); /* fills the segment */
	free_ok(a, x);
	f->refuse_waits = true;

	uint64_t y = alloc_ok(a, 4 * MiB);
	size_t map;
	uint64_t offset;
	assert_true(fake_locate(f, y, &map, &offset));
	assert_int_equal(map, 1); /* a new segment */
	assert_int_equal(offset, 0);
	/* x's range is still the best fit and still refused; the new
	 * segment's rest, never used, serves without mapping more. */
	uint64_t z = alloc_ok(a, 4 * MiB);
	assert_true(fake_locate(f, z, &map, &offset));
	assert_int_equal(map, 1);
	assert_int_equal(offset, 4 * MiB);
	assert_int_equal(f->nmaps, 2);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.fence_refusals, 2);
	assert_int_equal(st.fence_waits, 0); /* a refused wait waited for nothing */

	/* Small ranges: the block's other space, whose fence is done. (The
	 * first small block is cut from x's range too, and refused.) */
	uint64_t s = alloc_ok(a, 600);
	assert_true(fake_locate(f, s, &map, &offset));
	assert_int_equal(map, 1);
	alloc_ok(a, 600);
	free_ok(a, s);
	uint64_t t = alloc_ok(a, 600);
	assert_true(t != s);
	arena_get_stats(a, &st);
	assert_int_equal(st.fence_refusals, 4);

	/* The GPU caught up: x's range serves again, where placement puts it. */
	f->refuse_waits = false;
	f->done_upto = f->last_token;
	assert_int_equal(alloc_ok(a, 4 * MiB), x);
	assert_int_equal(alloc_ok(a, 600), s);
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

/* With no memory whose fence completed and no room to map, the allocation
 * fails rather than hand out memory the GPU may still use; nor is a
 * segment unmapped whose fence could not be waited for. */
static void range_not_waited_for_is_not_given_out_under_the_cap(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 8 * MiB, 4 * MiB);
	uint64_t x = alloc_ok(a, 4 * MiB);
	uint64_t keep = alloc_ok(a, 4 * MiB);
	free_ok(a, x);
	f->refuse_waits = true;
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, 4 * MiB, &out), ARENA_ENOMEM);

	/* x's segment is idle, but its fence pending: an allocation that
	 * needs its room fails too, and it stays mapped. */
	free_ok(a, keep);
	assert_int_equal(arena_alloc(a, 8 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(f->unmaps, 0);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.failed_allocs, 2);
	assert_int_equal(st.mapped_bytes, 8 * MiB);

	f->refuse_waits = false;
	assert_int_equal(arena_alloc(a, 8 * MiB, &out), ARENA_OK);
	assert_int_equal(f->unmaps, 2);
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

static arena *arena_with_last_resort(struct fake *f, uint64_t max_bytes, uint64_t segment_bytes)
{
	f->has_wait_all = true;
	return arena_over(f, max_bytes, segment_bytes);
}

/* The backend's last resort (fence_wait_all) is asked only by an
 * allocation that would fail after a refused wait; when it waits, the
 * allocation takes the memory it freed. */
static void last_resort_serves_an_allocation_refused_waits_would_fail(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_with_last_resort(f, 12 * MiB, 4 * MiB);
	uint64_t x = alloc_ok(a, 4 * MiB);
	alloc_ok(a, 4 * MiB);
	free_ok(a, x);
	f->refuse_waits = true;
	/* Room under the cap: a new segment, no last resort. */
	uint64_t y = alloc_ok(a, 4 * MiB);
	assert_true(y != x);
	assert_int_equal(f->wait_alls, 0);

	/* The cap reached: the last resort, refused, then granted. */
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, 4 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(f->wait_alls, 1);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.last_resort_waits, 0);
	/* x's fence: for the new segment, then for its range and its idle
	 * segment; then the last resort. */
	assert_int_equal(st.fence_refusals, 4);
	f->wait_all_ok = true;
	assert_int_equal(alloc_ok(a, 4 * MiB), x);
	assert_int_equal(f->wait_alls, 2);
	arena_get_stats(a, &st);
	assert_int_equal(st.last_resort_waits, 1);
	assert_int_equal(st.fence_waits, 1);
	assert_int_equal(st.failed_allocs, 1);

	/* A free after it is a fence like any other: refused, and the last
	 * resort refused too, the range is not handed out. */
	free_ok(a, x);
	f->wait_all_ok = false;
	assert_int_equal(arena_alloc(a, 4 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(f->wait_alls, 3);
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

/* An arena at its 8 MiB cap, in two 4 MiB segments, the first freed with
 * its fence pending; fence waits refused, the last resort granted. */
static arena *capped_with_a_pending_free(struct fake *f)
{
	arena *a = arena_with_last_resort(f, 8 * MiB, 4 * MiB);
	uint64_t x = alloc_ok(a, 4 * MiB);
	alloc_ok(a, 4 * MiB);
	free_ok(a, x);
	f->refuse_waits = true;
	f->wait_all_ok = true;
	return a;
}

/* An allocation that fails with no wait refused in it (too big for what
 * the cap leaves, fences pending or not) does not ask for the last
 * resort. */
static void last_resort_not_asked_without_a_refused_wait(void **state)
{
	struct fake *f = fake_new();
	arena *a = capped_with_a_pending_free(f);
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, 8 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(f->wait_alls, 0);
	assert_int_equal(f->waits, 0);
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

/* The last resort's word is not taken for the fences': a backend that
 * says it waited but completed nothing gets no range handed out, and the
 * allocation is not counted as served by it. */
static void last_resort_does_not_replace_the_fences(void **state)
{
	struct fake *f = fake_new();
	arena *a = capped_with_a_pending_free(f);
	f->wait_all_false = true;
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, 4 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(f->wait_alls, 1);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.last_resort_waits, 0);
	assert_int_equal(st.failed_allocs, 1);
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

/* Unmapping to make room under the cap waits for the idle segments'
 * fences first: when one cannot be waited for and the rest do not make
 * room, none is unmapped (each would have to be mapped again). */
static void idle_segment_not_waited_for_is_kept_with_its_neighbours(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 12 * MiB, 4 * MiB);
	uint64_t x = alloc_ok(a, 4 * MiB), y = alloc_ok(a, 4 * MiB);
	alloc_ok(a, 4 * MiB);
	free_ok(a, y); /* fence 1 */
	free_ok(a, x); /* fence 2 */
	f->refuse_from = 2;
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, 8 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(f->unmaps, 0);
	assert_int_equal(alloc_ok(a, 4 * MiB), y); /* its fence completed */
	assert_int_equal(f->nmaps, 3);

	/* Waits go through again: x's and y's segments make room. */
	f->refuse_from = 0;
	free_ok(a, y);
	assert_int_equal(arena_alloc(a, 8 * MiB, &out), ARENA_OK);
	assert_int_equal(f->unmaps, 2);
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

/* When newer idle segments make the room, an older one whose fence could
 * not be waited for is still not unmapped: the GPU may use it yet. */
static void idle_segment_not_waited_for_stays_while_others_make_room(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 12 * MiB, 2 * MiB);
	uint64_t x = alloc_ok(a, 2 * MiB); /* segments of 2, 4, 4 and 2 MiB */
	uint64_t y = alloc_ok(a, 4 * MiB);
	uint64_t w = alloc_ok(a, 4 * MiB);
	alloc_ok(a, 2 * MiB);
	free_ok(a, y); /* fence 1 */
	free_ok(a, w); /* fence 2 */
	free_ok(a, x); /* fence 3 */
	f->refuse_from = 3;
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, 8 * MiB, &out), ARENA_OK);
	assert_int_equal(f->unmaps, 2);
	assert_true(f->maps[1].unmapped && f->maps[2].unmapped);
	assert_false(f->maps[0].unmapped);
	assert_true(arena_owns(a, x));

	/* Its fence completed: it serves again. */
	f->refuse_from = 0;
	assert_int_equal(alloc_ok(a, 2 * MiB), x);
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

static void merged_free_ranges_carry_the_newest_fence(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 6 * MiB);
	uint64_t x = alloc_ok(a, 2 * MiB);
	uint64_t y = alloc_ok(a, 2 * MiB);
	uint64_t z = alloc_ok(a, 2 * MiB); /* fills the 6 MiB segment */
	free_ok(a, y);
	uint64_t y_token = f->last_token;
	free_ok(a, x);
	uint64_t x_token = f->last_token;
	assert_true(x_token > y_token);
	/* x and y merged: 4 MiB fit there without a new segment. */
	assert_int_equal(alloc_ok(a, 4 * MiB), x);
	assert_int_equal(f->nmaps, 1);
	assert_int_equal(f->last_wait, x_token);
	free_ok(a, z);
	arena_destroy(a);
	free(f);
}

static void placement_is_best_fit_then_oldest_free(void **state)
{
	struct fake *f = fake_new();
	f->fences_instant = true;
	arena *a = arena_over(f, 0, 0);
	/* Free ranges of 2, 2 and 4 MiB, kept apart by live ones. */
	uint64_t four = alloc_ok(a, 4 * MiB);
	alloc_ok(a, 2 * MiB);
	uint64_t two_a = alloc_ok(a, 2 * MiB);
	alloc_ok(a, 2 * MiB);
	uint64_t two_b = alloc_ok(a, 2 * MiB);
	alloc_ok(a, 2 * MiB);
	free_ok(a, four);  /* oldest, but larger than needed */
	free_ok(a, two_b); /* the older of the two exact fits */
	free_ok(a, two_a);
	assert_int_equal(alloc_ok(a, 2 * MiB), two_b);
	assert_int_equal(alloc_ok(a, 2 * MiB), two_a);
	/* Only then the larger range, carved from its start. */
	assert_int_equal(alloc_ok(a, 2 * MiB), four);
	assert_int_equal(alloc_ok(a, 2 * MiB), four + 2 * MiB);

	/* What is left of a carved range is as old as the range was: 4 MiB
	 * fit only in six's, then its rest and the older two_c fit 2 MiB
	 * equally, and two_c serves first. */
	uint64_t two_c = alloc_ok(a, 2 * MiB);
	alloc_ok(a, 2 * MiB);
	uint64_t six = alloc_ok(a, 6 * MiB);
	alloc_ok(a, 2 * MiB);
	free_ok(a, two_c);
	free_ok(a, six);
	assert_int_equal(alloc_ok(a, 4 * MiB), six);
	assert_int_equal(alloc_ok(a, 2 * MiB), two_c);
	assert_int_equal(alloc_ok(a, 2 * MiB), six + 4 * MiB);
	arena_destroy(a);
	free(f);
}

/* Equal fits in two segments go to the older segment wherever the backend
 * put each (here the newer lies lower): placement follows the order of
 * mapping, never the bases, or it would differ from run to run. */
static void equal_fits_go_to_the_older_segment(void **state)
{
	struct fake *f = fake_new();
	f->descending = true;
	f->next_base = (uint64_t)3 << 44;
	arena *a = arena_over(f, 0, 8 * MiB);
	alloc_ok(a, 6 * MiB);
	alloc_ok(a, 6 * MiB); /* a second segment; each keeps 2 MiB never used */
	assert_true(f->maps[1].base < f->maps[0].base);
	assert_int_equal(alloc_ok(a, 2 * MiB), f->maps[0].base + 6 * MiB);
	assert_int_equal(alloc_ok(a, 2 * MiB), f->maps[1].base + 6 * MiB);
	arena_destroy(a);
	free(f);
}

static void emptied_small_block_goes_back_to_its_segment(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 2 * MiB, 2 * MiB); /* room for one block only */
	uint64_t s = alloc_ok(a, 100);
	uint64_t t = alloc_ok(a, 3000);
	free_ok(a, s);
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, 2 * MiB, &out), ARENA_ENOMEM); /* t still there */
	free_ok(a, t);
	uint64_t last_free = f->last_token;
	/* The block's 2 MiB now serve a large allocation, after the last free's fence. */
	assert_int_equal(arena_alloc(a, 2 * MiB, &out), ARENA_OK);
	assert_int_equal(out.address, s);
	assert_int_equal(f->last_wait, last_free);
	free_ok(a, out.address);
	assert_int_equal(alloc_ok(a, 100), s);
	arena_destroy(a);
	free(f);
}

/* ---- segments and the cap ------------------------------------------------ */

static void segments_are_sized_by_default_and_for_large_requests(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 0);
	alloc_ok(a, 100);
	assert_int_equal(f->nmaps, 1);
	assert_int_equal(f->maps[0].bytes, 256 * MiB);
	uint64_t huge = alloc_ok(a, 300 * MiB + 1);
	assert_int_equal(f->nmaps, 2);
	assert_int_equal(f->maps[1].bytes, 302 * MiB);
	assert_int_equal(huge, f->maps[1].base);
	/* The first segment still serves what fits in it. */
	alloc_ok(a, 200 * MiB);
	assert_int_equal(f->nmaps, 2);
	/* An odd segment size is rounded up to whole blocks. */
	struct fake *g = fake_new();
	arena *b = arena_over(g, 0, 3 * MiB);
	alloc_ok(b, 1);
	assert_int_equal(g->maps[0].bytes, 4 * MiB);
	arena_destroy(a);
	arena_destroy(b);
	free(f);
	free(g);
}

static void cap_is_respected_exactly(void **state)
{
	struct fake *f = fake_new();
	f->fences_instant = true;
	arena *a = arena_over(f, 10 * MiB + 5, 4 * MiB); /* usable: 10 MiB */
	uint64_t blocks[5];
	for (int i = 0; i < 5; i++)
		blocks[i] = alloc_ok(a, 2 * MiB);
	/* Segments of 4, 4, then the 2 MiB the cap still allows. */
	assert_int_equal(f->mapped, 10 * MiB);
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, 1, &out), ARENA_ENOMEM);
	assert_int_equal(arena_alloc(a, 2 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(arena_alloc(a, 64 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(f->peak_mapped, 10 * MiB);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.failed_allocs, 3);
	assert_int_equal(st.total_allocs, 5);
	assert_int_equal(st.mapped_bytes, 10 * MiB);
	free_ok(a, blocks[2]);
	assert_int_equal(alloc_ok(a, 2 * MiB), blocks[2]);
	free_ok(a, blocks[4]);
	alloc_ok(a, 5000); /* a small block where the freed large one was */
	assert_int_equal(f->peak_mapped, 10 * MiB);
	arena_destroy(a);
	free(f);
}

/* An arena capped at 12 MiB, its three 4 MiB segments each holding one
 * allocation: seg[0..2], oldest first. */
static arena *three_full_segments(struct fake *f, uint64_t seg[3])
{
	arena *a = arena_over(f, 12 * MiB, 4 * MiB);
	for (int i = 0; i < 3; i++)
		seg[i] = alloc_ok(a, 4 * MiB);
	assert_int_equal(f->mapped, 12 * MiB);
	return a;
}

static void cap_unmaps_idle_segments_to_make_room(void **state)
{
	struct fake *f = fake_new();
	uint64_t seg[3];
	arena *a = three_full_segments(f, seg);
	uint64_t x = seg[0], y = seg[1], w = seg[2];
	free_ok(a, w);
	free_ok(a, x);
	free_ok(a, y);
	/* No segment holds 6 MiB. The two oldest idle ones make room, after
	 * their fences; the third is kept. */
	uint64_t z = alloc_ok(a, 6 * MiB);
	assert_int_equal(f->unmaps, 2);
	assert_int_equal(f->waits, 2);
	assert_true(f->maps[0].unmapped && f->maps[1].unmapped && !f->maps[2].unmapped);
	assert_int_equal(f->maps[3].bytes, 6 * MiB);
	assert_int_equal(z, f->maps[3].base);
	assert_true(f->peak_mapped <= 12 * MiB);
	assert_false(arena_owns(a, x));
	assert_true(arena_owns(a, w));
	/* Driver calls are clipped to one mapped segment. */
	assert_int_equal(arena_mapped_extent(a, x, 4 * MiB), 0);
	assert_int_equal(arena_mapped_extent(a, w, 4 * MiB), 4 * MiB);
	assert_int_equal(arena_mapped_extent(a, w + 3 * MiB, 4 * MiB), MiB);
	assert_int_equal(arena_mapped_extent(a, w + 4 * MiB, MiB), 0);
	/* Idle memory that would not make enough room is kept. */
	struct arena_alloc out;
	free_ok(a, z);
	assert_int_equal(arena_alloc(a, 14 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(f->unmaps, 2);
	assert_true(arena_owns(a, z));
	assert_true(arena_owns(a, w));
	arena_destroy(a);
	free(f);
}

/* A backend that cannot unmap now (a synchronize a graph capture would
 * not allow): the idle segments stay, whole and usable, the allocation
 * that needed their room fails, and once unmapping is possible again it
 * is made as before. */
static void refused_unmap_keeps_the_segment(void **state)
{
	struct fake *f = fake_new();
	uint64_t seg[3];
	arena *a = three_full_segments(f, seg);
	uint64_t x = seg[0], y = seg[1], w = seg[2];
	free_ok(a, x);
	free_ok(a, y);
	f->refuse_unmaps = true;
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, 6 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(f->refused_unmaps, 1);
	assert_int_equal(f->unmaps, 0);
	assert_int_equal(f->mapped, 12 * MiB);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.mapped_bytes, 12 * MiB);
	assert_int_equal(st.segments, 3);
	assert_true(arena_owns(a, x) && arena_owns(a, y));
	/* The segments kept still serve what fits them. */
	assert_int_equal(alloc_ok(a, 4 * MiB), x);
	free_ok(a, x);
	f->refuse_unmaps = false;
	uint64_t z = alloc_ok(a, 6 * MiB);
	assert_int_equal(f->unmaps, 2);
	assert_false(arena_owns(a, x));
	assert_true(arena_owns(a, z) && arena_owns(a, w));
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

/* A segment mapped while the block map's leaf for it cannot be made (out
 * of memory), and then not unmapped either (the backend cannot now): it
 * stays mapped, so it counts under the cap and in mapped_bytes until it
 * can be unmapped, at the next growth or at the arena's end. It was left
 * mapped, counted nowhere. */
static void segment_neither_reserved_nor_unmapped_stays_counted(void **state)
{
	struct fake *f = fake_new();
	f->fences_instant = true;
	arena *a = arena_over(f, 8 * MiB, 4 * MiB);
	struct arena_alloc out;
	struct arena_stats st;
	f->refuse_unmaps = true;
	calloc_fail_in = 3; /* the segment's region, its range, then the leaf */
	assert_int_equal(arena_alloc(a, 2 * MiB, &out), ARENA_ENOMEM);
	calloc_fail_in = 0;
	assert_int_equal(f->refused_unmaps, 1);
	arena_get_stats(a, &st);
	assert_int_equal(st.mapped_bytes, f->mapped);
	assert_int_equal(st.segments, 0);
	/* Under the 8 MiB cap, only 4 MiB are left while it stays. */
	assert_int_equal(arena_alloc(a, 6 * MiB, &out), ARENA_ENOMEM);
	f->refuse_unmaps = false;
	uint64_t x = alloc_ok(a, 6 * MiB);
	assert_true(arena_owns(a, x));
	arena_get_stats(a, &st);
	assert_int_equal(st.mapped_bytes, 6 * MiB);
	assert_int_equal(f->mapped, 6 * MiB);
	arena_destroy(a);
	assert_int_equal(f->mapped, 0);
	assert_false(f->bad_call);
	free(f);
}

/* The split that cuts a small allocation from a new small block fails
 * (out of memory): the block goes back to its segment, whose 2 MiB then
 * serve any size again. It stayed a small block, empty, and under the cap
 * the next large allocation found no room. */
static void failed_small_split_gives_the_block_back(void **state)
{
	struct fake *f = fake_new();
	f->fences_instant = true;
	arena *a = arena_over(f, 4 * MiB, 4 * MiB);
	struct arena_alloc out;
	uint64_t first = alloc_ok(a, 2 * MiB);
	calloc_fail_in = 3; /* the block's region, its range, then the split */
	assert_int_equal(arena_alloc(a, 512, &out), ARENA_ENOMEM);
	calloc_fail_in = 0;
	uint64_t second = alloc_ok(a, 2 * MiB);
	free_ok(a, first);
	free_ok(a, second);
	alloc_ok(a, 4 * MiB);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.segments, 1);
	assert_int_equal(st.failed_allocs, 1);
	assert_false(f->bad_call);
	arena_destroy(a);
	free(f);
}

static void refused_map_is_enomem_and_retried_after_unmapping_idle(void **state)
{
	struct fake *f = fake_new();
	f->fences_instant = true;
	arena *a = arena_over(f, 0, 4 * MiB);
	f->maps_to_refuse = 1;
	struct arena_alloc out;
	assert_int_equal(arena_alloc(a, MiB, &out), ARENA_ENOMEM);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.failed_allocs, 1);
	assert_int_equal(st.segments, 0);
	uint64_t x = alloc_ok(a, 4 * MiB);
	free_ok(a, x);
	/* The device refuses once; the idle segment goes and the retry maps. */
	f->maps_to_refuse = 1;
	alloc_ok(a, 8 * MiB);
	assert_int_equal(f->unmaps, 1);
	arena_get_stats(a, &st);
	assert_int_equal(st.segments, 1);
	assert_int_equal(st.mapped_bytes, 8 * MiB);
	assert_int_equal(st.total_allocs, 2);
	arena_destroy(a);
	free(f);
}

/* ---- determinism ---------------------------------------------------------- */

struct outcome {
	int rc;
	size_t map;
	uint64_t offset, reserved, id;
};

/* Runs a seeded random sequence of calls; records each allocation in
 * segment-relative form. */
static void run_sequence(struct fake *f, uint64_t seed, struct outcome *outcomes, size_t ops)
{
	const uint64_t segment = 16 * MiB;
	arena *a = arena_over(f, 160 * MiB, segment);
	uint64_t live[256];
	size_t nlive = 0;
	uint64_t rng = seed, timing = seed ^ 0x5555;
	for (size_t op = 0; op < ops; op++) {
		if (!f->fences_instant && rng_next(&timing) % 3 == 0)
			f->done_upto += (f->last_token - f->done_upto) / 2;
		uint64_t r = rng_next(&rng);
		struct outcome *o = &outcomes[op];
		if (nlive && (nlive == 256 || r % 100 < 45)) {
			size_t i = (r >> 16) % nlive;
			o->rc = arena_free(a, live[i], NULL);
			live[i] = live[--nlive];
			continue;
		}
		struct arena_alloc al;
		o->rc = arena_alloc(a, random_size(&rng, segment), &al);
		if (o->rc != ARENA_OK)
			continue;
		assert_true(fake_locate(f, al.address, &o->map, &o->offset));
		o->reserved = al.reserved;
		o->id = al.id;
		live[nlive++] = al.address;
	}
	arena_destroy(a);
}

static void same_calls_give_same_relative_addresses(void **state)
{
	enum { OPS = 4000 };
	struct outcome *one = calloc(OPS, sizeof *one), *two = calloc(OPS, sizeof *two);
	assert_non_null(one);
	assert_non_null(two);
	struct fake *fast = fake_new(), *slow = fake_new();
	fast->fences_instant = true;
	slow->descending = true;
	slow->next_base = (uint64_t)7 << 44;
	run_sequence(fast, 99, one, OPS);
	run_sequence(slow, 99, two, OPS);
	/* The timings really differed, and the cap was reached. */
	assert_int_equal(fast->waits, 0);
	assert_true(slow->waits > 0);
	assert_true(fast->unmaps > 0);
	size_t failures = 0;
	for (size_t i = 0; i < OPS; i++) {
		assert_int_equal(one[i].rc, two[i].rc);
		assert_int_equal(one[i].map, two[i].map);
		assert_int_equal(one[i].offset, two[i].offset);
		assert_int_equal(one[i].reserved, two[i].reserved);
		assert_int_equal(one[i].id, two[i].id);
		failures += one[i].rc == ARENA_ENOMEM;
	}
	assert_true(failures > 0);
	free(one);
	free(two);
	free(fast);
	free(slow);
}

/* ---- lookups, ids, stats, iteration, destroy ------------------------------ */

static void lookup_finds_interior_not_past_end_nor_freed(void **state)
{
	struct fake *f = fake_new();
	f->fences_instant = true;
	arena *a = arena_over(f, 0, 0);
	struct arena_alloc big, small, zero, got;
	assert_int_equal(arena_alloc(a, 3 * MiB, &big), ARENA_OK);
	assert_int_equal(arena_alloc(a, 700, &small), ARENA_OK);
	assert_int_equal(arena_alloc(a, 0, &zero), ARENA_OK);

	assert_true(arena_lookup(a, big.address, &got));
	assert_int_equal(got.id, big.id);
	assert_true(arena_lookup(a, big.address + MiB + 12345, &got));
	assert_int_equal(got.address, big.address);
	assert_int_equal(got.size, 3 * MiB);
	assert_true(arena_lookup(a, big.address + 3 * MiB - 1, &got));
	assert_false(arena_lookup(a, big.address + 3 * MiB, &got)); /* padding */
	assert_false(arena_lookup(a, big.address - 1, &got));

	assert_true(arena_lookup(a, small.address + 699, &got));
	assert_int_equal(got.id, small.id);
	assert_false(arena_lookup(a, small.address + 700, &got));
	assert_true(arena_lookup(a, zero.address, &got));
	assert_int_equal(got.id, zero.id);
	assert_false(arena_lookup(a, zero.address + 1, &got));

	free_ok(a, big.address);
	assert_false(arena_lookup(a, big.address, &got));
	assert_false(arena_lookup(a, big.address + MiB, &got));
	/* Freed memory is still the arena's; other memory is not. */
	assert_true(arena_owns(a, big.address + MiB));
	assert_true(arena_owns(a, f->maps[0].base + f->maps[0].bytes - 1));
	assert_false(arena_owns(a, f->maps[0].base + f->maps[0].bytes));
	assert_false(arena_owns(a, f->maps[0].base - 1));
	assert_false(arena_owns(a, 0));
	assert_false(arena_lookup(a, 0, &got));
	arena_destroy(a);
	free(f);
}

/* The live allocation whose served bytes hold address, by brute force. */
static const struct arena_alloc *model_lookup(const struct arena_alloc *live, size_t n, uint64_t address)
{
	for (size_t i = 0; i < n; i++)
		if (address - live[i].address < (live[i].size ? live[i].size : 1))
			return &live[i];
	return NULL;
}

/* Lookups go through the block map first (large allocations, small blocks'
 * carriers, free blocks) and the live index for small ones; both must agree
 * with a brute-force model while ranges are split, merged, recycled as small
 * blocks and whole segments unmapped, with segments laid out either way. */
static void lookup_agrees_with_a_model_through_random_ops(void **state)
{
	enum { OPS = 3000, MAX_LIVE = 200, PROBES = 24 };
	const uint64_t segment = 16 * MiB;
	for (int descending = 0; descending < 2; descending++) {
		struct fake *f = fake_new();
		f->fences_instant = true;
		f->descending = descending;
		arena *a = arena_over(f, 128 * MiB, segment);
		struct arena_alloc live[MAX_LIVE], gone[8] = { 0 };
		size_t nlive = 0, ngone = 0, hits = 0, misses = 0;
		uint64_t rng = 11 + (uint64_t)descending;
		for (int op = 0; op < OPS; op++) {
			uint64_t r = rng_next(&rng);
			if (nlive && (nlive == MAX_LIVE || r % 100 < 45)) {
				size_t i = (r >> 16) % nlive;
				free_ok(a, live[i].address);
				gone[ngone++ % 8] = live[i];
				live[i] = live[--nlive];
			} else if (arena_alloc(a, random_size(&rng, segment), &live[nlive]) == ARENA_OK) {
				nlive++;
			}
			for (int p = 0; p < PROBES && (nlive || ngone); p++) {
				uint64_t q = rng_next(&rng);
				const struct arena_alloc *base = (q % 3 || !ngone) && nlive ? &live[q % nlive]
											  : &gone[q % (ngone < 8 ? ngone : 8)];
				/* Inside, at either end, past the end, before the start. */
				uint64_t span = (base->size ? base->size : 1) + 2 * MiB;
				uint64_t address = base->address - MiB + (q >> 8) % (span + MiB);
				const struct arena_alloc *want = model_lookup(live, nlive, address);
				struct arena_alloc got;
				bool found = arena_lookup(a, address, &got);
				assert_int_equal(found, want != NULL);
				if (want) {
					assert_int_equal(got.id, want->id);
					assert_int_equal(got.address, want->address);
					assert_int_equal(got.size, want->size);
				}
				hits += found;
				misses += !found;
			}
		}
		assert_true(hits > 1000 && misses > 1000); /* both answers were checked */
		assert_true(f->unmaps > 0);              /* and segments went away */
		arena_destroy(a);
		free(f);
	}
}

static void range_idle_sees_reserved_ranges_of_live_allocations(void **state)
{
	struct fake *f = fake_new();
	f->fences_instant = true;
	arena *a = arena_over(f, 0, 0);
	struct arena_alloc big, small, next;
	assert_int_equal(arena_alloc(a, 3 * MiB, &big), ARENA_OK); /* reserves 4 MiB */
	assert_int_equal(arena_alloc(a, 700, &small), ARENA_OK);
	uint64_t block = 2 * MiB;

	assert_false(arena_range_idle(a, big.address, block));
	/* The rounding padding is reserved for big: not idle either. */
	assert_false(arena_range_idle(a, big.address + 2 * block - 1, 1));
	assert_false(arena_range_idle(a, small.address & ~(block - 1), block));
	/* The part of a small block that no small allocation reaches is. */
	assert_true(arena_range_idle(a, small.address + 1024, block - 2048));
	assert_true(arena_range_idle(a, big.address, 0));
	assert_true(arena_range_idle(a, small.address + 100, 0)); /* empty, inside a live block */

	free_ok(a, big.address);
	assert_true(arena_range_idle(a, big.address, 2 * block));
	/* A range reaching into the small allocation's block is not idle. */
	assert_false(arena_range_idle(a, big.address, 8 * block));
	assert_int_equal(arena_alloc(a, 3 * MiB, &next), ARENA_OK);
	assert_int_equal(next.address, big.address);
	assert_false(arena_range_idle(a, big.address + block, block));
	arena_destroy(a);
	free(f);
}

static void free_of_unknown_address_is_enotfound(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 0);
	struct arena_alloc x, y;
	assert_int_equal(arena_free(a, 0x1000, NULL), ARENA_ENOTFOUND); /* before any segment */
	assert_int_equal(arena_alloc(a, 4 * MiB, &x), ARENA_OK);
	assert_int_equal(arena_alloc(a, 100, &y), ARENA_OK);
	struct arena_stats before, after;
	arena_get_stats(a, &before);
	assert_int_equal(arena_free(a, x.address + 512, NULL), ARENA_ENOTFOUND); /* interior */
	assert_int_equal(arena_free(a, y.address + 512, NULL), ARENA_ENOTFOUND); /* free space */
	assert_int_equal(arena_free(a, x.address + 256 * MiB, NULL), ARENA_ENOTFOUND);
	assert_int_equal(arena_free(a, 0, NULL), ARENA_ENOTFOUND);
	arena_get_stats(a, &after);
	assert_memory_equal(&before, &after, sizeof before);
	assert_int_equal(f->last_token, 0); /* no fence for a failed free */
	free_ok(a, x.address);
	assert_int_equal(arena_free(a, x.address, NULL), ARENA_ENOTFOUND); /* twice */
	arena_destroy(a);
	free(f);
}

static void ids_count_successful_allocations(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 4 * MiB, 0);
	struct arena_alloc out, freed;
	for (uint64_t want = 1; want <= 3; want++) {
		assert_int_equal(arena_alloc(a, 10, &out), ARENA_OK);
		assert_int_equal(out.id, want);
	}
	assert_int_equal(arena_alloc(a, 64 * MiB, &out), ARENA_ENOMEM);
	assert_int_equal(arena_alloc(a, MiB + 1, &out), ARENA_OK);
	assert_int_equal(out.id, 4);
	assert_int_equal(arena_free(a, out.address, &freed), ARENA_OK);
	assert_int_equal(freed.id, 4);
	assert_int_equal(freed.size, MiB + 1);
	assert_int_equal(freed.reserved, 2 * MiB);
	assert_int_equal(arena_alloc(a, MiB + 1, &out), ARENA_OK);
	assert_int_equal(out.id, 5); /* ids are not reused with the range */
	arena_destroy(a);
	free(f);
}

static void stats_follow_the_calls(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 8 * MiB);
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.segments, 0);
	assert_int_equal(st.mapped_bytes, 0);
	uint64_t x = alloc_ok(a, 3 * MiB);    /* 4 MiB */
	uint64_t y = alloc_ok(a, 1000);       /* 1024 B */
	uint64_t z = alloc_ok(a, 9 * MiB);    /* 10 MiB, own segment */
	arena_get_stats(a, &st);
	assert_int_equal(st.segments, 2);
	assert_int_equal(st.mapped_bytes, 18 * MiB);
	assert_int_equal(st.live_allocs, 3);
	assert_int_equal(st.live_bytes, 14 * MiB + 1024);
	assert_int_equal(st.peak_live_bytes, 14 * MiB + 1024);
	free_ok(a, z);
	free_ok(a, x);
	alloc_ok(a, 100);
	arena_get_stats(a, &st);
	assert_int_equal(st.live_allocs, 2);
	assert_int_equal(st.live_bytes, 1024 + 512);
	assert_int_equal(st.peak_live_bytes, 14 * MiB + 1024);
	assert_int_equal(st.total_allocs, 4);
	assert_int_equal(st.failed_allocs, 0);
	assert_int_equal(st.fence_waits, 0);
	assert_int_equal(st.mapped_bytes, 18 * MiB); /* cached, not unmapped */
	free_ok(a, y);
	arena_destroy(a);
	free(f);
}

static void destroy_unmaps_every_segment(void **state)
{
	struct fake *f = fake_new();
	arena *a = arena_over(f, 0, 8 * MiB);
	alloc_ok(a, 100);
	uint64_t x = alloc_ok(a, 6 * MiB);
	alloc_ok(a, 20 * MiB);
	alloc_ok(a, 7 * MiB);
	free_ok(a, x);
	assert_int_equal(f->nmaps, 3);
	arena_destroy(a);
	assert_int_equal(f->unmaps, 3);
	assert_int_equal(f->mapped, 0);
	for (size_t i = 0; i < f->nmaps; i++)
		assert_true(f->maps[i].unmapped);
	assert_false(f->bad_call);
	free(f);
}

struct collected {
	struct arena_alloc items[256];
	size_t n;
};

static void collect(void *ctx, const struct arena_alloc *al)
{
	struct collected *c = ctx;
	assert_true(c->n < 256);
	c->items[c->n++] = *al;
}

static void foreach_live_goes_in_address_order(void **state)
{
	struct fake *f = fake_new();
	f->descending = true; /* later segments at lower addresses */
	f->next_base = (uint64_t)3 << 44;
	arena *a = arena_over(f, 0, 4 * MiB);
	uint64_t addr[12];
	const uint64_t sizes[12] = { 3 * MiB, 100, 5 * MiB, 2000, MiB + 1, 64,
				     9 * MiB, 512, 3 * MiB, 1, 2 * MiB, 77 };
	for (int i = 0; i < 12; i++)
		addr[i] = alloc_ok(a, sizes[i]);
	free_ok(a, addr[3]);
	free_ok(a, addr[6]);
	struct collected c = { .n = 0 };
	arena_foreach_live(a, collect, &c);
	assert_int_equal(c.n, 10);
	for (size_t i = 1; i < c.n; i++)
		assert_true(c.items[i - 1].address < c.items[i].address);
	for (int i = 0; i < 12; i++) {
		bool listed = false;
		for (size_t j = 0; j < c.n; j++)
			listed |= c.items[j].address == addr[i] && c.items[j].size == sizes[i];
		assert_true(listed == (i != 3 && i != 6));
	}
	arena_destroy(a);
	free(f);
}

static void create_rejects_incomplete_backend(void **state)
{
	struct fake *f = fake_new();
	struct arena_backend b = fake_backend(f);
	b.fence_wait = NULL;
	assert_null(arena_create(NULL, &b));
	assert_null(arena_create(NULL, NULL));
	b = fake_backend(f);
	arena *a = arena_create(NULL, &b); /* NULL config: the defaults */
	assert_non_null(a);
	alloc_ok(a, 1);
	assert_int_equal(f->maps[0].bytes, 256 * MiB);
	arena_destroy(a);
	free(f);
}

/* ---- threads --------------------------------------------------------------- */

struct worker {
	arena *a;
	pthread_barrier_t *start;
	uint64_t seed;
	struct arena_alloc kept[32];
	size_t nkept;
	int failures;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	uint64_t rng = w->seed;
	pthread_barrier_wait(w->start);
	for (int op = 0; op < 20000; op++) {
		uint64_t r = rng_next(&rng);
		if (w->nkept && (w->nkept == 32 || r % 2)) {
			size_t i = (r >> 8) % w->nkept;
			if (arena_free(w->a, w->kept[i].address, NULL) != ARENA_OK)
				w->failures++;
			w->kept[i] = w->kept[--w->nkept];
		} else if (arena_alloc(w->a, random_size(&rng, 64 * MiB), &w->kept[w->nkept]) == ARENA_OK) {
			struct arena_alloc got;
			const struct arena_alloc *mine = &w->kept[w->nkept++];
			if (!arena_lookup(w->a, mine->address, &got) || got.id != mine->id)
				w->failures++;
		}
	}
	return NULL;
}

static void threads_share_one_arena(void **state)
{
	struct fake *f = fake_new();
	f->fences_instant = true;
	arena *a = arena_over(f, 0, 64 * MiB);
	enum { THREADS = 8 };
	struct worker w[THREADS];
	pthread_t tid[THREADS];
	pthread_barrier_t start;
	assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .a = a, .start = &start, .seed = 1000 + (uint64_t)i };
		assert_int_equal(pthread_create(&tid[i], NULL, worker_run, &w[i]), 0);
	}
	size_t kept = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(tid[i], NULL);
		assert_int_equal(w[i].failures, 0);
		kept += w[i].nkept;
	}
	pthread_barrier_destroy(&start);
	/* What the threads kept is what the arena lists, without overlap. */
	struct arena_stats st;
	arena_get_stats(a, &st);
	assert_int_equal(st.live_allocs, kept);
	struct collected c = { .n = 0 };
	arena_foreach_live(a, collect, &c);
	assert_int_equal(c.n, kept);
	for (size_t i = 1; i < c.n; i++)
		assert_true(c.items[i - 1].address + c.items[i - 1].reserved <= c.items[i].address);
	arena_destroy(a);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tree_stays_ordered_and_balanced),
		cmocka_unit_test(large_allocations_are_block_aligned_and_rounded),
		cmocka_unit_test(small_allocations_are_packed_in_blocks_of_their_own),
		cmocka_unit_test(small_threshold_is_configurable),
		cmocka_unit_test(sizes_past_the_address_space_are_enomem),
		cmocka_unit_test(random_ops_never_overlap_and_respect_fences),
		cmocka_unit_test(random_ops_with_refused_waits),
		cmocka_unit_test(range_is_reused_only_after_release),
		cmocka_unit_test(reused_range_waits_for_its_fence),
		cmocka_unit_test(device_range_is_ordered_not_waited_for),
		cmocka_unit_test(device_range_waits_without_fence_order),
		cmocka_unit_test(merged_free_ranges_carry_the_newest_fence),
		cmocka_unit_test(placement_is_best_fit_then_oldest_free),
		cmocka_unit_test(equal_fits_go_to_the_older_segment),
		cmocka_unit_test(emptied_small_block_goes_back_to_its_segment),
		cmocka_unit_test(segments_are_sized_by_default_and_for_large_requests),
		cmocka_unit_test(cap_is_respected_exactly),
		cmocka_unit_test(cap_unmaps_idle_segments_to_make_room),
		cmocka_unit_test(refused_unmap_keeps_the_segment),
		cmocka_unit_test(segment_neither_reserved_nor_unmapped_stays_counted),
		cmocka_unit_test(failed_small_split_gives_the_block_back),
		cmocka_unit_test(refused_map_is_enomem_and_retried_after_unmapping_idle),
		cmocka_unit_test(same_calls_give_same_relative_addresses),
		cmocka_unit_test(lookup_finds_interior_not_past_end_nor_freed),
		cmocka_unit_test(lookup_agrees_with_a_model_through_random_ops),
		cmocka_unit_test(range_idle_sees_reserved_ranges_of_live_allocations),
		cmocka_unit_test(free_of_unknown_address_is_enotfound),
		cmocka_unit_test(ids_count_successful_allocations),
		cmocka_unit_test(range_not_waited_for_is_passed_over),
		cmocka_unit_test(idle_segment_not_waited_for_is_kept_with_its_neighbours),
		cmocka_unit_test(idle_segment_not_waited_for_stays_while_others_make_room),
		cmocka_unit_test(range_not_waited_for_is_not_given_out_under_the_cap),
		cmocka_unit_test(last_resort_serves_an_allocation_refused_waits_would_fail),
		cmocka_unit_test(last_resort_not_asked_without_a_refused_wait),
		cmocka_unit_test(last_resort_does_not_replace_the_fences),
		cmocka_unit_test(stats_follow_the_calls),
		cmocka_unit_test(destroy_unmaps_every_segment),
		cmocka_unit_test(foreach_live_goes_in_address_order),
		cmocka_unit_test(create_rejects_incomplete_backend),
		cmocka_unit_test(threads_share_one_arena),
	};
	return cmocka_run_group_tests_name("arena", tests, NULL, NULL);
}
