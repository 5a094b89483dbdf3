/*
 * Unit tests for the DeepUM correlation tables (common/corr.c): prediction
 * from a repeating kernel sequence, the successor and way replacement
 * policies, block lists and their caps, determinism, and the decoder.
 */
#include <time.h>

#include "testutil.h"

#include "corr.h"

static struct corr_config small_config(uint32_t rows, uint32_t ways, uint32_t succ)
{
	struct corr_config c;
	corr_config_default(&c);
	c.rows = rows;
	c.ways = ways;
	c.successors = succ;
	return c;
}

static unsigned char *encode(const corr_tables *t, size_t *elen, size_t *blen)
{
	struct bytes_buf e = { 0 }, b = { 0 };
	corr_encode_exec(t, &e);
	corr_encode_blocks(t, &b);
	assert_false(e.oom || b.oom);
	unsigned char *out = malloc(e.len + b.len);
	memcpy(out, e.data, e.len);
	memcpy(out + e.len, b.data, b.len);
	*elen = e.len;
	*blen = b.len;
	bytes_buf_free(&e);
	bytes_buf_free(&b);
	return out;
}

/* The tables as the replayer reads them back from plan.bin: encoded,
 * decoded (which copies what it keeps), the image freed. */
static corr_tables *round_trip(const corr_tables *t)
{
	size_t el, bl;
	unsigned char *img = encode(t, &el, &bl);
	char err[256];
	corr_tables *d = corr_decode(img, el, img + el, bl, "plan.bin", err, sizeof err);
	free(img);
	if (!d)
		fail_msg("%s", err);
	return d;
}

static void defaults(void **state)
{
	struct corr_config c;
	corr_config_default(&c);
	assert_int_equal(c.rows, 2048);
	assert_int_equal(c.ways, 2);
	assert_int_equal(c.successors, 4);
	assert_true(c.block_size == (2u << 20));
	assert_true(c.wrap);
	char err[128];
	assert_int_equal(corr_config_check(&c, err, sizeof err), 0);
	c.ways = 0;
	assert_int_equal(corr_config_check(&c, err, sizeof err), -1);
	assert_string_equal(err, "correlation ways 0 out of range (1..16)");
	assert_null(corr_build(&c, NULL, 0, NULL, err, sizeof err));
	c.ways = 2;
	c.block_size = 3;
	assert_int_equal(corr_config_check(&c, err, sizeof err), -1);
	assert_string_equal(err, "block size 3 is not a power of two");
}

static void predicts_repeating_sequence(void **state)
{
	/* Three iterations of A B C D E: the tables should predict the loop. */
	const uint64_t loop[5] = { 0xa, 0xb, 0xc, 0xd, 0xe };
	uint64_t seq[15];
	for (int i = 0; i < 15; i++)
		seq[i] = loop[i % 5];
	struct corr_config c = small_config(64, 2, 4);
	corr_tables *t = corr_build(&c, seq, 15, NULL, NULL, 0);
	assert_non_null(t);
	uint64_t out[12];
	assert_int_equal(corr_next_execs(t, 0xc, out, 7), 7);
	const uint64_t want[7] = { 0xd, 0xe, 0xa, 0xb, 0xc, 0xd, 0xe };
	assert_memory_equal(out, want, sizeof want);
	assert_int_equal(corr_successors(t, 0xe, out, 4), 1);
	assert_true(out[0] == 0xa);
	assert_int_equal(corr_next_execs(t, 0x99, out, 4), 0); /* unknown */
	assert_int_equal(corr_next_execs(t, 0, out, 4), 0);
	struct corr_stats st;
	corr_get_stats(t, &st);
	assert_int_equal(st.exec_entries, 5);
	assert_int_equal(st.successor_links, 5);
	assert_int_equal(st.exec_evictions, 0);
	corr_destroy(t);

	/* Without wrap the last kernel has no successor. */
	c.wrap = false;
	t = corr_build(&c, loop, 5, NULL, NULL, 0);
	assert_int_equal(corr_next_execs(t, 0xc, out, 5), 2);
	corr_destroy(t);
}

static void successors_most_recent_first(void **state)
{
	/* A is followed by B, then C, then B again: B is the most recent. */
	const uint64_t seq[] = { 0xa, 0xb, 0xa, 0xc, 0xa, 0xb };
	struct corr_config c = small_config(16, 2, 4);
	c.wrap = false;
	corr_tables *t = corr_build(&c, seq, 6, NULL, NULL, 0);
	uint64_t out[4];
	assert_int_equal(corr_successors(t, 0xa, out, 4), 2);
	assert_true(out[0] == 0xb && out[1] == 0xc);
	assert_int_equal(corr_successors(t, 0xa, out, 1), 1);
	corr_destroy(t);

	/* X followed by six different kernels keeps the 4 most recent. */
	const uint64_t fan[] = { 0x100, 1, 0x100, 2, 0x100, 3, 0x100, 4, 0x100, 5, 0x100, 6 };
	t = corr_build(&c, fan, 12, NULL, NULL, 0);
	assert_int_equal(corr_successors(t, 0x100, out, 4), 4);
	const uint64_t want[4] = { 6, 5, 4, 3 };
	assert_memory_equal(out, want, sizeof want);
	corr_destroy(t);

	/* Execution ID 0 (unknown) is never a key or a successor. */
	const uint64_t gap[] = { 0xa, 0, 0xb };
	t = corr_build(&c, gap, 3, NULL, NULL, 0);
	assert_int_equal(corr_successors(t, 0xa, out, 4), 0);
	assert_int_equal(corr_successors(t, 0, out, 4), 0);
	corr_destroy(t);
}

static void ways_evict_least_recent(void **state)
{
	/* One set of two ways. Every kernel but the last becomes a key (the
	 * predecessor of the next): 1, 10, 2, 20, 1, 11, 3. From the third on,
	 * each claims the way of the least recently seen key: 5 evictions, and
	 * the two most recent keys (11 and 3) remain. */
	struct corr_config c = small_config(1, 2, 2);
	c.wrap = false;
	const uint64_t seq[] = { 1, 10, 2, 20, 1, 11, 3, 30 };
	corr_tables *t = corr_build(&c, seq, 8, NULL, NULL, 0);
	uint64_t out[2];
	assert_int_equal(corr_successors(t, 3, out, 2), 1);
	assert_true(out[0] == 30);
	assert_int_equal(corr_successors(t, 11, out, 2), 1);
	assert_int_equal(corr_successors(t, 1, out, 2), 0);
	struct corr_stats st;
	corr_get_stats(t, &st);
	assert_int_equal(st.exec_entries, 2);
	assert_int_equal(st.rows_used, 1);
	assert_int_equal(st.exec_evictions, 5);
	corr_destroy(t);

	/* Keys 1 and 2 alternate in a 2-way set, then key 1 gains successor 3:
	 * no evictions, and 1's successors are most recent first. */
	c = small_config(1, 2, 2);
	c.wrap = false;
	const uint64_t seq2[] = { 1, 2, 1, 2, 1, 3 };
	t = corr_build(&c, seq2, 6, NULL, NULL, 0);
	assert_int_equal(corr_successors(t, 1, out, 2), 2);
	assert_true(out[0] == 3 && out[1] == 2);
	assert_int_equal(corr_successors(t, 2, out, 2), 1);
	corr_get_stats(t, &st);
	assert_int_equal(st.exec_evictions, 0);
	corr_destroy(t);

	/* LRU, not FIFO: A, B, then A again; C replaces B. */
	t = corr_create(&c, NULL, 0);
	assert_int_equal(corr_observe(t, 0xa, 1, NULL, 0), 0);
	assert_int_equal(corr_observe(t, 0xb, 2, NULL, 0), 0);
	assert_int_equal(corr_observe(t, 0xa, 3, NULL, 0), 0);
	assert_int_equal(corr_observe(t, 0xc, 4, NULL, 0), 0);
	assert_int_equal(corr_successors(t, 0xb, out, 2), 0);
	assert_int_equal(corr_successors(t, 0xa, out, 2), 2);
	assert_int_equal(corr_successors(t, 0xc, out, 2), 1);
	corr_destroy(t);

	/* Set placement: key % rows; keys in different sets do not collide. */
	c = small_config(4, 1, 1);
	c.wrap = false;
	const uint64_t seq3[] = { 4, 100, 5, 101, 6, 102, 7, 103 };
	t = corr_build(&c, seq3, 8, NULL, NULL, 0);
	/* 100..103 land in sets 0..3 and evict 4..7 (one way each). */
	assert_int_equal(corr_successors(t, 4, out, 1), 0);
	assert_int_equal(corr_successors(t, 102, out, 1), 1);
	assert_true(out[0] == 7);
	corr_destroy(t);
}

static void block_lists(void **state)
{
	const struct corr_block k0[] = { { 0, 0 }, { 0, 1 }, { 2, 5 } };
	const struct corr_block k1[] = { { 1, 0 } };
	const struct corr_block k0b[] = { { 2, 5 }, { 3, 0 }, { 0, 0 } }; /* same exec ID again */
	const uint64_t seq[] = { 0x70, 0x80, 0x70 };
	const struct corr_kernel_blocks kb[] = { { k0, 3 }, { k1, 1 }, { k0b, 3 } };
	struct corr_config c = small_config(16, 2, 4);
	c.wrap = false;
	corr_tables *t = corr_build(&c, seq, 3, kb, NULL, 0);
	size_t n;
	const struct corr_block *b = corr_blocks_of(t, 0x70, &n);
	/* Union in first-touch order, duplicates skipped: the successor chain. */
	assert_int_equal(n, 4);
	const struct corr_block want[] = { { 0, 0 }, { 0, 1 }, { 2, 5 }, { 3, 0 } };
	assert_memory_equal(b, want, sizeof want);
	b = corr_blocks_of(t, 0x80, &n);
	assert_int_equal(n, 1);
	assert_null(corr_blocks_of(t, 0x90, &n));
	assert_int_equal(n, 0);

	/* Lookahead as the replayer uses it: next execs, then their blocks. */
	uint64_t next[2];
	assert_int_equal(corr_next_execs(t, 0x70, next, 2), 2);
	assert_true(next[0] == 0x80);
	b = corr_blocks_of(t, next[0], &n);
	assert_int_equal(b[0].alloc, 1);

	assert_int_equal(corr_block_list_count(t), 2);
	const struct corr_block *lb;
	assert_true(corr_block_list_get(t, 0, &lb, &n) == 0x70);
	assert_true(corr_block_list_get(t, 1, &lb, &n) == 0x80);
	corr_destroy(t);
}

static void block_caps(void **state)
{
	struct corr_block many[100];
	for (uint32_t i = 0; i < 100; i++)
		many[i] = (struct corr_block){ 0, i };
	const uint64_t seq[] = { 1, 2, 3 };
	const struct corr_kernel_blocks kb[] = { { many, 100 }, { many, 100 }, { many, 100 } };
	struct corr_config c = small_config(16, 2, 4);
	c.max_blocks_per_exec = 30;
	c.max_block_entries = 70;
	corr_tables *t = corr_build(&c, seq, 3, kb, NULL, 0);
	size_t n;
	const struct corr_block *b = corr_blocks_of(t, 1, &n);
	assert_int_equal(n, 30);
	assert_int_equal(b[29].block, 29); /* a capped list keeps its first blocks */
	corr_blocks_of(t, 2, &n);
	assert_int_equal(n, 30);
	corr_blocks_of(t, 3, &n);
	assert_int_equal(n, 10);
	struct corr_stats st;
	corr_get_stats(t, &st);
	assert_int_equal(st.block_entries, 70);
	assert_int_equal(st.blocks_dropped, 230);
	assert_int_equal(st.block_lists, 3);
	/* Blocks a full list already holds are not dropped again, nor are
	 * those of a list when the table is full. */
	assert_int_equal(corr_observe(t, 3, 1, many, 30), 0);
	assert_int_equal(corr_observe(t, 1, 3, many, 10), 0);
	corr_get_stats(t, &st);
	assert_int_equal(st.blocks_dropped, 230);
	/* The count survives the encoding. */
	corr_tables *d = round_trip(t);
	struct corr_stats sd;
	corr_get_stats(d, &sd);
	assert_int_equal(sd.blocks_dropped, 230);
	assert_int_equal(sd.block_entries, 70);
	corr_destroy(d);
	corr_destroy(t);

	/* A large list stays fast and exact (hash-indexed duplicates). */
	static struct corr_block big[20000];
	for (uint32_t i = 0; i < 20000; i++)
		big[i] = (struct corr_block){ i % 7, i / 7 % 2000 };
	const struct corr_kernel_blocks kbig[] = { { big, 20000 }, { big, 20000 } };
	c = small_config(16, 2, 4);
	c.max_blocks_per_exec = 1u << 20;
	t = corr_build(&c, seq, 2, kbig, NULL, 0);
	corr_blocks_of(t, 1, &n);
	assert_int_equal(n, 14000);
	corr_destroy(t);
}

/* Lists are kept in exec-ID order whatever the order of the kernels that
 * made them, and encoded in it after online learning appends out of
 * order (the decoder refuses lists out of order). */
static void block_lists_in_exec_id_order(void **state)
{
	const struct corr_block k[] = { { 1, 0 } };
	const uint64_t seq[] = { 0x90, 0x80, 0x70 };
	const struct corr_kernel_blocks kb[] = { { k, 1 }, { k, 1 }, { k, 1 } };
	struct corr_config c = small_config(16, 2, 4);
	corr_tables *t = corr_build(&c, seq, 3, kb, NULL, 0);
	const struct corr_block *lb;
	size_t n;
	assert_int_equal(corr_block_list_count(t), 3);
	assert_true(corr_block_list_get(t, 0, &lb, &n) == 0x70);
	assert_true(corr_block_list_get(t, 1, &lb, &n) == 0x80);
	assert_true(corr_block_list_get(t, 2, &lb, &n) == 0x90);
	assert_int_equal(corr_observe(t, 0x70, 0x10, k, 1), 0);
	corr_tables *d = round_trip(t);
	assert_true(corr_block_list_get(d, 0, &lb, &n) == 0x10);
	assert_true(corr_block_list_get(d, 3, &lb, &n) == 0x90);
	corr_destroy(d);
	corr_destroy(t);
}

/* The inverse of a multiplication by odd c modulo 2^64 (Newton's
 * iteration: each step doubles the bits that are right). */
static uint64_t odd_inverse(uint64_t c)
{
	uint64_t x = c;
	for (int i = 0; i < 6; i++)
		x *= 2 - c * x;
	return x;
}

/* The key whose hash under corr.c's mixer (MurmurHash3's finalizer), with
 * no seed, is h: the keys a crafted plan would hold for h = i << 20, all
 * in one slot of any index up to 2^20 entries. */
static uint64_t unmix(uint64_t h)
{
	h ^= h >> 33;
	h *= odd_inverse(0xc4ceb9fe1a85ec53ULL);
	h ^= h >> 33;
	h *= odd_inverse(0xff51afd7ed558ccdULL);
	h ^= h >> 33;
	return h;
}

enum { CRAFTED = 1 << 15 };

static uint64_t elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)((b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec));
}

/* Nanoseconds, the fastest of three rounds (a round the machine preempted
 * says nothing of the tables), to learn CRAFTED blocks of one kernel and
 * CRAFTED kernels of one block each: keys that collide under the fixed
 * hash when crafted, consecutive ones when not. */
static uint64_t learn_ns(bool crafted)
{
	static struct corr_block blocks[CRAFTED];
	for (uint32_t i = 0; i < CRAFTED; i++) {
		uint64_t k = crafted ? unmix((uint64_t)i << 20) : i;
		blocks[i] = (struct corr_block){ (uint32_t)(k >> 32), (uint32_t)k };
	}
	struct corr_config c = small_config(16, 2, 4);
	c.max_blocks_per_exec = CRAFTED;
	uint64_t best = UINT64_MAX;
	for (int round = 0; round < 3; round++) {
		corr_tables *t = corr_create(&c, NULL, 0);
		assert_non_null(t);
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		assert_int_equal(corr_observe(t, 0, 1, blocks, CRAFTED), 0);
		for (uint32_t i = 0; i < CRAFTED; i++) {
			uint64_t id = crafted ? unmix((uint64_t)i << 20) : i + 2;
			assert_int_equal(corr_observe(t, 0, id ? id : 2, blocks, 1), 0);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		struct corr_stats st;
		corr_get_stats(t, &st);
		assert_int_equal(st.block_entries, 2 * CRAFTED);
		corr_destroy(t);
		best = elapsed_ns(&a, &b) < best ? elapsed_ns(&a, &b) : best;
	}
	return best;
}

/* The list and block indexes hash with a secret of their own: keys a
 * plan file could hold, chosen to collide under a fixed hash, cost what
 * any others do. Unkeyed, the crafted ones took about 300 times as long
 * here. Compared as a ratio, so that a slow machine or a sanitizer's build
 * slows both. */
static void crafted_keys_do_not_collide(void **state)
{
	(void)state;
	uint64_t plain = learn_ns(false), crafted = learn_ns(true);
	assert_true(crafted < 10 * plain);
}

static void deterministic_and_round_trips(void **state)
{
	uint64_t seq[400];
	static struct corr_block blocks[400][3];
	struct corr_kernel_blocks kb[400];
	uint64_t x = 12345;
	for (int i = 0; i < 400; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		seq[i] = (x >> 40) % 97 + 1; /* collisions and repeats on purpose */
		for (int k = 0; k < 3; k++)
			blocks[i][k] = (struct corr_block){ (uint32_t)(x >> (10 * k)) % 5,
							    (uint32_t)(x >> (7 * k)) % 9 };
		kb[i] = (struct corr_kernel_blocks){ blocks[i], 3 };
	}
	struct corr_config c = small_config(16, 2, 3);
	corr_tables *a = corr_build(&c, seq, 400, kb, NULL, 0);
	corr_tables *b = corr_build(&c, seq, 400, kb, NULL, 0);
	size_t ea, ba, eb, bb;
	unsigned char *ia = encode(a, &ea, &ba), *ib = encode(b, &eb, &bb);
	assert_int_equal(ea + ba, eb + bb);
	assert_memory_equal(ia, ib, ea + ba);

	char err[256];
	corr_tables *d = corr_decode(ia, ea, ia + ea, ba, "plan.bin", err, sizeof err);
	if (!d)
		fail_msg("%s", err);
	size_t ed, bd;
	unsigned char *id = encode(d, &ed, &bd);
	assert_int_equal(ed + bd, ea + ba);
	assert_memory_equal(id, ia, ea + ba);
	struct corr_stats sa, sd;
	corr_get_stats(a, &sa);
	corr_get_stats(d, &sd);
	assert_memory_equal(&sa, &sd, sizeof sa);
	assert_true(sa.exec_evictions > 0); /* 97 keys in 32 slots */
	uint64_t pa[8], pd[8];
	for (uint64_t k = 1; k <= 97; k++) {
		size_t na = corr_next_execs(a, k, pa, 8), nd = corr_next_execs(d, k, pd, 8);
		assert_int_equal(na, nd);
		assert_memory_equal(pa, pd, na * sizeof *pa);
		size_t la, ld;
		const struct corr_block *xa = corr_blocks_of(a, k, &la), *xd = corr_blocks_of(d, k, &ld);
		assert_int_equal(la, ld);
		if (la)
			assert_memory_equal(xa, xd, la * sizeof *xa);
	}

	/* Online learning after decoding: a new ID gets a list. */
	const struct corr_block nb[] = { { 4, 4 } };
	assert_int_equal(corr_observe(d, 5, 1000, nb, 1), 0);
	size_t n;
	assert_non_null(corr_blocks_of(d, 1000, &n));
	assert_int_equal(corr_successors(d, 5, pd, 1), 1);
	assert_true(pd[0] == 1000);

	/* Every truncation of either section is refused, cleanly. */
	for (size_t cut = 0; cut < ea; cut++) {
		unsigned char *e = malloc(cut ? cut : 1);
		memcpy(e, ia, cut);
		assert_null(corr_decode(e, cut, ia + ea, ba, "plan.bin", err, sizeof err));
		free(e);
	}
	for (size_t cut = 0; cut < ba; cut++) {
		unsigned char *bl = malloc(cut ? cut : 1);
		memcpy(bl, ia + ea, cut);
		assert_null(corr_decode(ia, ea, bl, cut, "plan.bin", err, sizeof err));
		free(bl);
	}
	free(ia);
	free(ib);
	free(id);
	corr_destroy(a);
	corr_destroy(b);
	corr_destroy(d);
}

/* Each limit of corr_config_check at its edge: the largest value taken,
 * the next refused, and 0 refused where a table needs at least one. */
static void config_ranges(void **state)
{
	struct corr_config c;
	char err[128];
	const struct {
		uint32_t *field;
		uint32_t max;
		bool zero_ok;
		const char *msg_zero, *msg_over;
	} cases[] = {
		{ &c.rows, CORR_MAX_ROWS, false, "correlation rows 0 out of range (1..65536)",
		  "correlation rows 65537 out of range (1..65536)" },
		{ &c.ways, CORR_MAX_WAYS, false, "correlation ways 0 out of range (1..16)",
		  "correlation ways 17 out of range (1..16)" },
		{ &c.successors, CORR_MAX_SUCCESSORS, false, "correlation successors 0 out of range (1..16)",
		  "correlation successors 17 out of range (1..16)" },
		{ &c.max_blocks_per_exec, CORR_MAX_BLOCKS_PER_EXEC, true, NULL,
		  "blocks per execution 1048577 out of range (0..1048576)" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		corr_config_default(&c);
		*cases[i].field = cases[i].max;
		assert_int_equal(corr_config_check(&c, err, sizeof err), 0);
		*cases[i].field = cases[i].max + 1;
		assert_int_equal(corr_config_check(&c, err, sizeof err), -1);
		assert_string_equal(err, cases[i].msg_over);
		*cases[i].field = 0;
		if (cases[i].zero_ok) {
			assert_int_equal(corr_config_check(&c, err, sizeof err), 0);
		} else {
			assert_int_equal(corr_config_check(&c, err, sizeof err), -1);
			assert_string_equal(err, cases[i].msg_zero);
		}
	}
	corr_config_default(&c);
	c.max_block_entries = CORR_MAX_BLOCK_ENTRIES;
	assert_int_equal(corr_config_check(&c, err, sizeof err), 0);
	c.max_block_entries = CORR_MAX_BLOCK_ENTRIES + 1;
	assert_int_equal(corr_config_check(&c, err, sizeof err), -1);
	assert_string_equal(err, "block entries 67108865 out of range (0..67108864)");
	c.max_block_entries = 0;
	assert_int_equal(corr_config_check(&c, err, sizeof err), 0);
}

/* ---- sections written by hand, as docs/plan-format.md lays them out ---- */

struct le {
	unsigned char b[512];
	size_t n;
};

static void le_put(struct le *w, uint64_t v, int bytes)
{
	assert_true(w->n + (size_t)bytes <= sizeof w->b);
	for (int i = 0; i < bytes; i++)
		w->b[w->n++] = (unsigned char)(v >> (8 * i));
}

/* An exec section's head: rows, ways, successors, wrap, clock, evictions. */
static void le_exec_head(struct le *w, uint32_t rows, uint32_t ways, uint32_t succ, uint64_t clock)
{
	w->n = 0;
	le_put(w, rows, 4);
	le_put(w, ways, 4);
	le_put(w, succ, 4);
	le_put(w, 1, 1);
	le_put(w, clock, 8);
	le_put(w, 0, 8);
}

/* A slot holding key, seen at seen, with n successors from succ. */
static void le_slot(struct le *w, uint64_t key, uint64_t seen, uint32_t n, const uint64_t *succ)
{
	le_put(w, key, 8);
	le_put(w, seen, 8);
	le_put(w, n, 4);
	for (uint32_t i = 0; i < n; i++)
		le_put(w, succ[i], 8);
}

/* A block section with no lists under the default caps. */
static void le_no_blocks(struct le *w)
{
	w->n = 0;
	le_put(w, 2 << 20, 8);
	le_put(w, 4096, 4);
	le_put(w, 4 << 20, 8);
	le_put(w, 0, 8);
	le_put(w, 0, 8);
}

/* Both sections of a table built from three kernels with blocks,
 * byte for byte as the format lays them out: a writer and reader that
 * agree on another layout (a block's allocation and index swapped in
 * both) round-trip unnoticed. */
static void sections_laid_out_as_documented(void **state)
{
	const uint64_t seq[] = { 3, 5, 3 };
	const struct corr_block k3[] = { { 7, 1 }, { 2, 9 } }, k5[] = { { 4, 0 } };
	const struct corr_kernel_blocks kb[] = { { k3, 2 }, { k5, 1 }, { k3, 1 } };
	struct corr_config c = small_config(2, 2, 2);
	c.max_blocks_per_exec = 2;
	c.max_block_entries = 100;
	corr_tables *t = corr_build(&c, seq, 3, kb, NULL, 0);
	assert_non_null(t);
	size_t el, bl;
	unsigned char *img = encode(t, &el, &bl);
	/* Observed: 3 -> 5 (clock 2), 5 -> 3 (3), and the wrap 3 -> 3 (4).
	 * Key 3 in set 1, way 0; key 5 in set 1, way 1; set 0 empty. */
	struct le w;
	le_exec_head(&w, 2, 2, 2, 4);
	le_put(&w, 0, 8);
	le_put(&w, 0, 8);
	const uint64_t after3[] = { 3, 5 }, after5[] = { 3 };
	le_slot(&w, 3, 4, 2, after3);
	le_slot(&w, 5, 3, 1, after5);
	assert_int_equal(el, w.n);
	assert_memory_equal(img, w.b, w.n);

	w.n = 0;
	le_put(&w, 2 << 20, 8);
	le_put(&w, 2, 4);
	le_put(&w, 100, 8);
	le_put(&w, 0, 8); /* nothing dropped: the third kernel's block is 3's already */
	le_put(&w, 2, 8);
	le_put(&w, 3, 8);
	le_put(&w, 2, 4);
	le_put(&w, 7, 4);
	le_put(&w, 1, 4);
	le_put(&w, 2, 4);
	le_put(&w, 9, 4);
	le_put(&w, 5, 8);
	le_put(&w, 1, 4);
	le_put(&w, 4, 4);
	le_put(&w, 0, 4);
	assert_int_equal(bl, w.n);
	assert_memory_equal(img + el, w.b, w.n);
	free(img);
	corr_destroy(t);
}

/* Slots a writer never makes are refused: a key twice in its set, a key
 * seen after the table's clock, more successors than the table keeps, a
 * successor 0 or one listed twice. A key with no successors loads, and
 * predicts nothing. */
static void decoder_rejects_bad_slots(void **state)
{
	struct le e, b;
	char err[256];
	le_no_blocks(&b);
	const uint64_t one[] = { 9 }, three[] = { 9, 8, 7 }, zero[] = { 0 }, twice[] = { 9, 9 };
	const struct {
		uint64_t key0, seen0;
		uint32_t n0;
		const uint64_t *succ0;
		uint64_t key1;
		const char *msg;
	} cases[] = {
		{ 4, 1, 1, one, 4, "plan.bin: correlation exec table: bad entry in set 0 way 1" },
		{ 4, 11, 1, one, 0, "plan.bin: correlation exec table: bad entry in set 0 way 0" },
		{ 4, 1, 3, three, 0, "plan.bin: correlation exec table: bad entry in set 0 way 0" },
		{ 4, 1, 1, zero, 0, "plan.bin: correlation exec table: bad successor in set 0 way 0" },
		{ 4, 1, 2, twice, 0, "plan.bin: correlation exec table: bad successor in set 0 way 0" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		/* One set of two ways, two successors each, clock 10. */
		le_exec_head(&e, 1, 2, 2, 10);
		le_slot(&e, cases[i].key0, cases[i].seen0, cases[i].n0, cases[i].succ0);
		if (cases[i].key1)
			le_slot(&e, cases[i].key1, 2, 1, one);
		else
			le_put(&e, 0, 8);
		err[0] = 0;
		corr_tables *t = corr_decode(e.b, e.n, b.b, b.n, "plan.bin", err, sizeof err);
		if (t)
			fail_msg("case %zu loaded", i);
		assert_string_equal(err, cases[i].msg);
	}

	/* At the edges: seen at the clock, as many successors as kept. */
	le_exec_head(&e, 1, 2, 2, 10);
	const uint64_t two[] = { 9, 8 };
	le_slot(&e, 4, 10, 2, two);
	le_slot(&e, 6, 3, 0, NULL);
	corr_tables *t = corr_decode(e.b, e.n, b.b, b.n, "plan.bin", err, sizeof err);
	if (!t)
		fail_msg("%s", err);
	uint64_t out[4];
	assert_int_equal(corr_next_execs(t, 4, out, 1), 1);
	assert_true(out[0] == 9);
	assert_int_equal(corr_successors(t, 6, out, 4), 0);
	assert_int_equal(corr_next_execs(t, 6, out, 4), 0);
	corr_destroy(t);
}

/* Two keys of one set last seen at the same clock (a decoded table can
 * hold that): a new key takes the lower way, as the format says. */
static void lru_tie_takes_the_lowest_way(void **state)
{
	struct le e, b;
	char err[256];
	le_no_blocks(&b);
	const uint64_t one[] = { 9 };
	le_exec_head(&e, 1, 2, 1, 10);
	le_slot(&e, 4, 5, 1, one);
	le_slot(&e, 6, 5, 1, one);
	corr_tables *t = corr_decode(e.b, e.n, b.b, b.n, "plan.bin", err, sizeof err);
	if (!t)
		fail_msg("%s", err);
	assert_int_equal(corr_observe(t, 8, 9, NULL, 0), 0);
	uint64_t out[1];
	assert_int_equal(corr_successors(t, 4, out, 1), 0);
	assert_int_equal(corr_successors(t, 6, out, 1), 1);
	assert_int_equal(corr_successors(t, 8, out, 1), 1);
	struct corr_exec_slot slot;
	corr_exec_slot_get(t, 0, &slot);
	assert_true(slot.exec_id == 8);
	corr_destroy(t);
}

/* Block lists past the table's caps are refused: one longer than
 * max_blocks_per_exec, or lists together past max_block_entries. Right
 * at the caps they load. */
static void decoder_keeps_the_block_caps(void **state)
{
	struct le e, b;
	char err[256];
	le_exec_head(&e, 1, 1, 1, 0);
	le_put(&e, 0, 8);
	for (int over = 0; over < 3; over++) {
		/* Caps: 2 blocks a list, 3 in all; lists of 2 and 1 blocks, or
		 * of 3 (per list), or of 2 and 2 (in all). */
		const uint32_t sizes[3][2] = { { 2, 1 }, { 3, 0 }, { 2, 2 } };
		b.n = 0;
		le_put(&b, 2 << 20, 8);
		le_put(&b, 2, 4);
		le_put(&b, 3, 8);
		le_put(&b, 0, 8);
		le_put(&b, sizes[over][1] ? 2 : 1, 8);
		for (int l = 0; l < 2 && sizes[over][l]; l++) {
			le_put(&b, 10 + (uint64_t)l, 8);
			le_put(&b, sizes[over][l], 4);
			for (uint32_t k = 0; k < sizes[over][l]; k++) {
				le_put(&b, 0, 4);
				le_put(&b, k, 4);
			}
		}
		corr_tables *t = corr_decode(e.b, e.n, b.b, b.n, "plan.bin", err, sizeof err);
		if (over == 0) {
			if (!t)
				fail_msg("%s", err);
			struct corr_stats st;
			corr_get_stats(t, &st);
			assert_int_equal(st.block_entries, 3);
			corr_destroy(t);
			continue;
		}
		assert_null(t);
		assert_string_equal(err, over == 1 ? "plan.bin: correlation block list 0 has 3 blocks (empty, or "
						     "over the table's caps)"
						   : "plan.bin: correlation block list 1 has 2 blocks (empty, or "
						     "over the table's caps)");
	}
}

static void decoder_rejects_inconsistency(void **state)
{
	const uint64_t seq[] = { 1, 2, 3 };
	const struct corr_block k[] = { { 0, 0 }, { 0, 1 } };
	const struct corr_kernel_blocks kb[] = { { k, 2 }, { k, 1 }, { NULL, 0 } };
	struct corr_config c = small_config(4, 1, 2);
	corr_tables *t = corr_build(&c, seq, 3, kb, NULL, 0);
	size_t el, bl;
	unsigned char *img = encode(t, &el, &bl);
	unsigned char *blk = img + el;
	char err[256];

	/* Exec section: rows, ways, successors (u32), wrap (u8), clock,
	 * evictions (u64): 29 bytes. Then one slot per set (ways = 1): set 0
	 * is empty (an 8-byte zero key, bytes 29..36), set 1 holds key 1 from
	 * byte 37. */
	unsigned char *e = malloc(el);
	memcpy(e, img, el);
	e[4] = 0; /* ways 0 */
	assert_null(corr_decode(e, el, blk, bl, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: correlation exec table: correlation ways 0 out of "
				 "range (1..16)");
	memcpy(e, img, el);
	e[12] = 2; /* wrap flag */
	assert_null(corr_decode(e, el, blk, bl, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: correlation exec table: bad wrap flag");
	memcpy(e, img, el);
	e[0] = 0xff, e[1] = 0xff; /* 65535 rows: far more slots than bytes */
	assert_null(corr_decode(e, el, blk, bl, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: correlation exec table is truncated");
	memcpy(e, img, el);
	e[37] = 2; /* set 1 now holds key 2, which belongs in set 2 */
	assert_null(corr_decode(e, el, blk, bl, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: correlation exec table: bad entry in set 1 way 0");
	free(e);

	/* Block section: block_size, caps, dropped, list count: 36 bytes. List
	 * 0 (exec ID 1: ID, count, blocks (0,0) at 48 and (0,1) at 56), then
	 * list 1 (exec ID 2) at 64. */
	unsigned char b[84];
	assert_int_equal(bl, sizeof b);
	memcpy(b, blk, sizeof b);
	memcpy(b + 64, "\x01\0\0\0\0\0\0\0", 8); /* list 1's ID becomes 1 */
	assert_null(corr_decode(img, el, b, bl, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: correlation block list 1 is out of order or has exec "
				 "ID 0");
	memcpy(b, blk, sizeof b);
	memcpy(b + 56, "\0\0\0\0\0\0\0\0", 8); /* second block = first */
	assert_null(corr_decode(img, el, b, bl, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: correlation block list 0 repeats a block");
	memcpy(b, blk, sizeof b);
	b[44] = 0; /* list 0 claims 0 blocks */
	assert_null(corr_decode(img, el, b, bl, "plan.bin", err, sizeof err));
	assert_non_null(strstr(err, "correlation block list 0 has 0 blocks"));
	free(img);
	corr_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(predicts_repeating_sequence),
		cmocka_unit_test(successors_most_recent_first),
		cmocka_unit_test(ways_evict_least_recent),
		cmocka_unit_test(block_lists),
		cmocka_unit_test(block_caps),
		cmocka_unit_test(block_lists_in_exec_id_order),
		cmocka_unit_test(crafted_keys_do_not_collide),
		cmocka_unit_test(deterministic_and_round_trips),
		cmocka_unit_test(decoder_rejects_inconsistency),
		cmocka_unit_test(config_ranges),
		cmocka_unit_test(sections_laid_out_as_documented),
		cmocka_unit_test(decoder_rejects_bad_slots),
		cmocka_unit_test(lru_tie_takes_the_lowest_way),
		cmocka_unit_test(decoder_keeps_the_block_caps),
	};
	return cmocka_run_group_tests_name("corr", tests, NULL, NULL);
}
