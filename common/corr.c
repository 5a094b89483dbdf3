/*
 * corr.c: DeepUM correlation tables (see corr.h for the policy, and
 * docs/plan-format.md for the two sections' encoding).
 *
 * The exec-ID table is stored flat: slot s = set * ways + way, with parallel
 * arrays for keys, last-seen clocks, successor counts and successor IDs.
 * Block lists are kept in an array with an open-addressing index from exec
 * ID to list, and each list has its own index so a repeated block is found
 * in O(1) (a kernel may touch thousands of blocks, and identical layers
 * repeat them).
 */
#include "corr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "grow.h"

struct blist {
	uint64_t exec_id;
	struct corr_block *b;
	uint32_t n, cap;
	uint32_t *set;    /* open addressing: index into b, plus 1; 0 = empty */
	uint32_t set_cap; /* power of two, >= 2 * n */
};

struct corr_tables {
	struct corr_config cfg;
	uint64_t *key;   /* [rows * ways], 0 = empty */
	uint64_t *seen;  /* [rows * ways] clock of the key's last observation */
	uint32_t *nsucc; /* [rows * ways] */
	uint64_t *succ;  /* [rows * ways * successors], most recent first */
	uint64_t clock;
	uint64_t evictions;

	struct blist *lists;
	size_t n_lists, cap_lists;
	uint32_t *index;   /* exec ID -> list index + 1; 0 = empty */
	size_t index_cap;  /* power of two, >= 2 * n_lists */
	uint64_t seed;     /* keys the indexes' hashes (hash_seed) */
	uint64_t block_entries, blocks_dropped;
};

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* A secret of each table's for the hashes of its list and block indexes.
 * Decoded tables come from a file: keys chosen to collide under a fixed
 * hash would make every insertion probe all of the entries before it (a
 * list of 2^20 blocks, CORR_MAX_BLOCKS_PER_EXEC, some 5 * 10^11 probes).
 * No order the tables give out depends on it: lists and blocks are kept
 * in arrays in insertion order. Without the kernel's entropy, the
 * table's address (randomised where the heap is) stands in. */
static uint64_t hash_seed(const corr_tables *t)
{
	uint64_t seed;
	if (getentropy(&seed, sizeof seed) != 0)
		seed = mix64((uint64_t)(uintptr_t)t);
	return seed;
}

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

void corr_config_default(struct corr_config *cfg)
{
	cfg->rows = 2048;
	cfg->ways = 2;
	cfg->successors = 4;
	cfg->max_blocks_per_exec = 4096;
	cfg->max_block_entries = (uint64_t)4 << 20;
	cfg->block_size = (uint64_t)2 << 20;
	cfg->wrap = true;
}

int corr_config_check(const struct corr_config *cfg, char *err, size_t errlen)
{
	if (cfg->rows < 1 || cfg->rows > CORR_MAX_ROWS) {
		um_errmsg(err, errlen, "correlation rows %u out of range (1..%u)", (unsigned)cfg->rows,
		       CORR_MAX_ROWS);
		return -1;
	}
	if (cfg->ways < 1 || cfg->ways > CORR_MAX_WAYS) {
		um_errmsg(err, errlen, "correlation ways %u out of range (1..%u)", (unsigned)cfg->ways,
		       CORR_MAX_WAYS);
		return -1;
	}
	if (cfg->successors < 1 || cfg->successors > CORR_MAX_SUCCESSORS) {
		um_errmsg(err, errlen, "correlation successors %u out of range (1..%u)",
		       (unsigned)cfg->successors, CORR_MAX_SUCCESSORS);
		return -1;
	}
	if (cfg->max_blocks_per_exec > CORR_MAX_BLOCKS_PER_EXEC) {
		um_errmsg(err, errlen, "blocks per execution %u out of range (0..%u)",
		       (unsigned)cfg->max_blocks_per_exec, CORR_MAX_BLOCKS_PER_EXEC);
		return -1;
	}
	if (cfg->max_block_entries > CORR_MAX_BLOCK_ENTRIES) {
		um_errmsg(err, errlen, "block entries %llu out of range (0..%llu)",
		       (unsigned long long)cfg->max_block_entries,
		       (unsigned long long)CORR_MAX_BLOCK_ENTRIES);
		return -1;
	}
	if (!pow2(cfg->block_size)) {
		um_errmsg(err, errlen, "block size %llu is not a power of two",
		       (unsigned long long)cfg->block_size);
		return -1;
	}
	return 0;
}

corr_tables *corr_create(const struct corr_config *cfg, char *err, size_t errlen)
{
	if (corr_config_check(cfg, err, errlen) != 0)
		return NULL;
	size_t slots = (size_t)cfg->rows * cfg->ways;
	corr_tables *t = calloc(1, sizeof *t);
	if (!t)
		goto oom;
	t->cfg = *cfg;
	t->seed = hash_seed(t);
	t->key = calloc(slots, sizeof *t->key);
	t->seen = calloc(slots, sizeof *t->seen);
	t->nsucc = calloc(slots, sizeof *t->nsucc);
	t->succ = calloc(slots * cfg->successors, sizeof *t->succ);
	if (!t->key || !t->seen || !t->nsucc || !t->succ)
		goto oom;
	return t;
oom:
	corr_destroy(t);
	um_errmsg(err, errlen, "out of memory");
	return NULL;
}

void corr_destroy(corr_tables *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_lists; i++) {
		free(t->lists[i].b);
		free(t->lists[i].set);
	}
	free(t->lists);
	free(t->index);
	free(t->key);
	free(t->seen);
	free(t->nsucc);
	free(t->succ);
	free(t);
}

const struct corr_config *corr_config_of(const corr_tables *t)
{
	return &t->cfg;
}

/* ---- exec-ID table ---- */

/* The slot holding key, or -1. */
static long exec_find(const corr_tables *t, uint64_t key)
{
	size_t base = (size_t)(key % t->cfg.rows) * t->cfg.ways;
	for (size_t w = 0; w < t->cfg.ways; w++)
		if (t->key[base + w] == key)
			return (long)(base + w);
	return -1;
}

/* The slot for key, claiming the first empty way or else the least recently
 * seen one (lowest way on a tie, so building is deterministic). */
static size_t exec_claim(corr_tables *t, uint64_t key)
{
	long found = exec_find(t, key);
	if (found >= 0)
		return (size_t)found;
	size_t base = (size_t)(key % t->cfg.rows) * t->cfg.ways;
	size_t victim = base;
	for (size_t w = 0; w < t->cfg.ways; w++) {
		size_t s = base + w;
		if (t->key[s] == 0) {
			victim = s;
			break;
		}
		if (t->seen[s] < t->seen[victim])
			victim = s;
	}
	if (t->key[victim] != 0)
		t->evictions++;
	t->key[victim] = key;
	t->nsucc[victim] = 0;
	return victim;
}

/* Puts next at the front of slot s's successors (moving it if present,
 * else pushing the oldest out when full). */
static void exec_push_successor(corr_tables *t, size_t s, uint64_t next)
{
	uint64_t *succ = t->succ + s * t->cfg.successors;
	uint32_t n = t->nsucc[s], j = 0;
	while (j < n && succ[j] != next)
		j++;
	if (j == n && n < t->cfg.successors)
		t->nsucc[s] = ++n;
	if (j == n)
		j = n - 1; /* full: the last one drops out */
	memmove(succ + 1, succ, j * sizeof *succ);
	succ[0] = next;
}

/* ---- block lists ---- */

static uint64_t list_hash(const corr_tables *t, uint64_t exec_id)
{
	return mix64(exec_id ^ t->seed);
}

static uint64_t block_hash(const corr_tables *t, struct corr_block b)
{
	return mix64((((uint64_t)b.alloc << 32) | b.block) ^ t->seed);
}

/* The list of exec_id, or NULL. */
static struct blist *list_find(const corr_tables *t, uint64_t exec_id)
{
	if (!t->index_cap)
		return NULL;
	size_t mask = t->index_cap - 1;
	for (size_t i = list_hash(t, exec_id) & mask;; i = (i + 1) & mask) {
		uint32_t v = t->index[i];
		if (!v)
			return NULL;
		if (t->lists[v - 1].exec_id == exec_id)
			return &t->lists[v - 1];
	}
}

static int index_rebuild(corr_tables *t, size_t cap)
{
	uint32_t *idx = calloc(cap, sizeof *idx);
	if (!idx)
		return -1;
	free(t->index);
	t->index = idx;
	t->index_cap = cap;
	for (size_t l = 0; l < t->n_lists; l++) {
		size_t i = list_hash(t, t->lists[l].exec_id) & (cap - 1);
		while (idx[i])
			i = (i + 1) & (cap - 1);
		idx[i] = (uint32_t)(l + 1);
	}
	return 0;
}

/* A new, empty list for exec_id (which has none), or NULL when out of
 * memory. */
static struct blist *list_add(corr_tables *t, uint64_t exec_id)
{
	struct blist *l = room_for_one(t->lists, t->n_lists, &t->cap_lists, sizeof *l, 64);
	if (!l)
		return NULL;
	t->lists = l;
	t->lists[t->n_lists] = (struct blist){ .exec_id = exec_id };
	t->n_lists++;
	if (2 * t->n_lists > t->index_cap) {
		if (index_rebuild(t, t->index_cap ? t->index_cap * 2 : 128) != 0) {
			t->n_lists--;
			return NULL;
		}
	} else {
		size_t mask = t->index_cap - 1;
		size_t i = list_hash(t, exec_id) & mask;
		while (t->index[i])
			i = (i + 1) & mask;
		t->index[i] = (uint32_t)t->n_lists;
	}
	return &t->lists[t->n_lists - 1];
}

/* Where b is (or would go) in l's set. */
static uint32_t *set_slot(const corr_tables *t, const struct blist *l, struct corr_block b)
{
	uint32_t mask = l->set_cap - 1;
	for (uint32_t i = (uint32_t)block_hash(t, b) & mask;; i = (i + 1) & mask) {
		uint32_t v = l->set[i];
		if (!v || (l->b[v - 1].alloc == b.alloc && l->b[v - 1].block == b.block))
			return &l->set[i];
	}
}

static int set_grow(const corr_tables *t, struct blist *l)
{
	uint32_t cap = l->set_cap ? l->set_cap * 2 : 16;
	uint32_t *old = l->set;
	l->set = calloc(cap, sizeof *l->set);
	if (!l->set) {
		l->set = old;
		return -1;
	}
	free(old);
	l->set_cap = cap;
	for (uint32_t k = 0; k < l->n; k++)
		*set_slot(t, l, l->b[k]) = k + 1;
	return 0;
}

/* Appends b to l unless present. Returns 1 if added, 0 if already there, -1
 * when out of memory. The caller has checked the caps. */
static int list_append(const corr_tables *t, struct blist *l, struct corr_block b)
{
	if (2 * (l->n + 1) > l->set_cap && set_grow(t, l) != 0)
		return -1;
	uint32_t *slot = set_slot(t, l, b);
	if (*slot)
		return 0;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;
		struct corr_block *nb = realloc(l->b, cap * sizeof *nb);
		if (!nb)
			return -1;
		l->b = nb;
		l->cap = cap;
	}
	l->b[l->n] = b;
	*slot = ++l->n;
	return 1;
}

static bool list_has(const corr_tables *t, const struct blist *l, struct corr_block b)
{
	return l->set_cap && *set_slot(t, l, b) != 0;
}

static int add_blocks(corr_tables *t, uint64_t exec_id, const struct corr_block *blocks,
		      size_t n)
{
	if (!n)
		return 0;
	struct blist *l = list_find(t, exec_id);
	for (size_t i = 0; i < n; i++) {
		if (l && list_has(t, l, blocks[i]))
			continue;
		if (t->block_entries >= t->cfg.max_block_entries ||
		    (l ? l->n : 0) >= t->cfg.max_blocks_per_exec) {
			t->blocks_dropped++;
			continue;
		}
		if (!l && !(l = list_add(t, exec_id)))
			return -1;
		int rc = list_append(t, l, blocks[i]);
		if (rc < 0)
			return -1;
		t->block_entries += (uint64_t)rc;
	}
	return 0;
}

int corr_observe(corr_tables *t, uint64_t prev_exec_id, uint64_t exec_id,
		 const struct corr_block *blocks, size_t n)
{
	t->clock++;
	if (exec_id == 0)
		return 0;
	if (prev_exec_id != 0) {
		size_t s = exec_claim(t, prev_exec_id);
		t->seen[s] = t->clock;
		exec_push_successor(t, s, exec_id);
	}
	return add_blocks(t, exec_id, blocks, n);
}

static int by_exec_id(const void *a, const void *b)
{
	uint64_t x = ((const struct blist *)a)->exec_id, y = ((const struct blist *)b)->exec_id;
	return (x > y) - (x < y);
}

corr_tables *corr_build(const struct corr_config *cfg, const uint64_t *exec_ids,
			size_t n_kernels, const struct corr_kernel_blocks *blocks,
			char *err, size_t errlen)
{
	corr_tables *t = corr_create(cfg, err, errlen);
	if (!t)
		return NULL;
	for (size_t i = 0; i < n_kernels; i++) {
		uint64_t prev = i ? exec_ids[i - 1] : 0;
		const struct corr_block *b = blocks ? blocks[i].blocks : NULL;
		if (corr_observe(t, prev, exec_ids[i], b, blocks ? blocks[i].n : 0) != 0)
			goto oom;
	}
	/* Without blocks an observation allocates nothing, so it can not fail. */
	if (cfg->wrap && n_kernels)
		corr_observe(t, exec_ids[n_kernels - 1], exec_ids[0], NULL, 0);
	/* Canonical order, so equal inputs give equal walks and encodings. */
	if (t->n_lists > 1) {
		qsort(t->lists, t->n_lists, sizeof *t->lists, by_exec_id);
		if (index_rebuild(t, t->index_cap) != 0)
			goto oom;
	}
	return t;
oom:
	corr_destroy(t);
	um_errmsg(err, errlen, "out of memory");
	return NULL;
}

/* ---- lookups ---- */

size_t corr_successors(const corr_tables *t, uint64_t exec_id, uint64_t *out, size_t max)
{
	long s = exec_id ? exec_find(t, exec_id) : -1;
	if (s < 0)
		return 0;
	size_t n = t->nsucc[s] < max ? t->nsucc[s] : max;
	for (size_t i = 0; i < n; i++)
		out[i] = t->succ[(size_t)s * t->cfg.successors + i];
	return n;
}

size_t corr_next_execs(const corr_tables *t, uint64_t exec_id, uint64_t *out, size_t max)
{
	size_t k = 0;
	uint64_t cur = exec_id;
	while (k < max && cur) {
		long s = exec_find(t, cur);
		if (s < 0 || t->nsucc[s] == 0)
			break;
		cur = t->succ[(size_t)s * t->cfg.successors];
		out[k++] = cur;
	}
	return k;
}

const struct corr_block *corr_blocks_of(const corr_tables *t, uint64_t exec_id, size_t *n)
{
	const struct blist *l = exec_id ? list_find(t, exec_id) : NULL;
	*n = l ? l->n : 0;
	return l ? l->b : NULL;
}

void corr_get_stats(const corr_tables *t, struct corr_stats *out)
{
	memset(out, 0, sizeof *out);
	for (size_t r = 0; r < t->cfg.rows; r++) {
		bool used = false;
		for (size_t w = 0; w < t->cfg.ways; w++) {
			size_t s = r * t->cfg.ways + w;
			if (!t->key[s])
				continue;
			used = true;
			out->exec_entries++;
			out->successor_links += t->nsucc[s];
		}
		out->rows_used += used;
	}
	out->exec_evictions = t->evictions;
	out->block_lists = t->n_lists;
	out->block_entries = t->block_entries;
	out->blocks_dropped = t->blocks_dropped;
}

size_t corr_exec_slot_count(const corr_tables *t)
{
	return (size_t)t->cfg.rows * t->cfg.ways;
}

void corr_exec_slot_get(const corr_tables *t, size_t i, struct corr_exec_slot *out)
{
	out->exec_id = t->key[i];
	out->last_seen = t->seen[i];
	out->n_successors = t->nsucc[i];
	out->successors = t->succ + i * t->cfg.successors;
}

size_t corr_block_list_count(const corr_tables *t)
{
	return t->n_lists;
}

uint64_t corr_block_list_get(const corr_tables *t, size_t i, const struct corr_block **blocks,
			     size_t *n)
{
	*blocks = t->lists[i].b;
	*n = t->lists[i].n;
	return t->lists[i].exec_id;
}

/* ---- encoding ---- */

void corr_encode_exec(const corr_tables *t, struct bytes_buf *out)
{
	bytes_put_u32(out, t->cfg.rows);
	bytes_put_u32(out, t->cfg.ways);
	bytes_put_u32(out, t->cfg.successors);
	bytes_put_u8(out, t->cfg.wrap);
	bytes_put_u64(out, t->clock);
	bytes_put_u64(out, t->evictions);
	size_t slots = corr_exec_slot_count(t);
	for (size_t s = 0; s < slots; s++) {
		bytes_put_u64(out, t->key[s]);
		if (!t->key[s])
			continue;
		bytes_put_u64(out, t->seen[s]);
		bytes_put_u32(out, t->nsucc[s]);
		for (uint32_t j = 0; j < t->nsucc[s]; j++)
			bytes_put_u64(out, t->succ[s * t->cfg.successors + j]);
	}
}

static int by_exec_id_ptr(const void *a, const void *b)
{
	return by_exec_id(*(const struct blist *const *)a, *(const struct blist *const *)b);
}

void corr_encode_blocks(const corr_tables *t, struct bytes_buf *out)
{
	bytes_put_u64(out, t->cfg.block_size);
	bytes_put_u32(out, t->cfg.max_blocks_per_exec);
	bytes_put_u64(out, t->cfg.max_block_entries);
	bytes_put_u64(out, t->blocks_dropped);
	bytes_put_u64(out, t->n_lists);
	/* Sorted here as well: online observation may have appended lists out
	 * of order, and the encoding must be canonical. */
	const struct blist **order = malloc((t->n_lists ? t->n_lists : 1) * sizeof *order);
	if (!order) {
		out->oom = true;
		return;
	}
	for (size_t i = 0; i < t->n_lists; i++)
		order[i] = &t->lists[i];
	qsort(order, t->n_lists, sizeof *order, by_exec_id_ptr);
	for (size_t i = 0; i < t->n_lists; i++) {
		bytes_put_u64(out, order[i]->exec_id);
		bytes_put_u32(out, order[i]->n);
		for (uint32_t k = 0; k < order[i]->n; k++) {
			bytes_put_u32(out, order[i]->b[k].alloc);
			bytes_put_u32(out, order[i]->b[k].block);
		}
	}
	free(order);
}

static corr_tables *decode_exec(const void *sec, size_t len, const char *name, char *err,
				size_t errlen)
{
	struct bytes_reader r = bytes_reader_init(sec, len);
	struct corr_config cfg;
	corr_config_default(&cfg);
	cfg.rows = bytes_get_u32(&r);
	cfg.ways = bytes_get_u32(&r);
	cfg.successors = bytes_get_u32(&r);
	uint8_t wrap = bytes_get_u8(&r);
	uint64_t clock = bytes_get_u64(&r);
	uint64_t evictions = bytes_get_u64(&r);
	if (!bytes_reader_ok(&r)) {
		um_errmsg(err, errlen, "%s: correlation exec table is truncated", name);
		return NULL;
	}
	cfg.wrap = wrap != 0;
	char why[160];
	if (wrap > 1 || corr_config_check(&cfg, why, sizeof why) != 0) {
		um_errmsg(err, errlen, "%s: correlation exec table: %s", name,
		       wrap > 1 ? "bad wrap flag" : why);
		return NULL;
	}
	size_t slots = (size_t)cfg.rows * cfg.ways;
	/* Every slot takes at least its 8-byte key: refuse before allocating. */
	if (!bytes_can_hold(&r, slots, 8)) {
		um_errmsg(err, errlen, "%s: correlation exec table is truncated", name);
		return NULL;
	}
	corr_tables *t = corr_create(&cfg, NULL, 0);
	if (!t) {
		um_errmsg(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	t->clock = clock;
	t->evictions = evictions;
	for (size_t s = 0; s < slots; s++) {
		uint64_t key = bytes_get_u64(&r);
		if (!key)
			continue;
		uint64_t seen = bytes_get_u64(&r);
		uint32_t n = bytes_get_u32(&r);
		if (!bytes_reader_ok(&r))
			break;
		size_t set = s / cfg.ways;
		if (key % cfg.rows != set || exec_find(t, key) >= 0 || seen > clock ||
		    n > cfg.successors) {
			um_errmsg(err, errlen, "%s: correlation exec table: bad entry in set %zu way %zu",
			       name, set, s % cfg.ways);
			goto fail;
		}
		uint64_t *succ = t->succ + s * cfg.successors;
		for (uint32_t j = 0; j < n; j++) {
			succ[j] = bytes_get_u64(&r);
			bool dup = false;
			for (uint32_t k = 0; k < j; k++)
				dup |= succ[k] == succ[j];
			if (bytes_reader_ok(&r) && (succ[j] == 0 || dup)) {
				um_errmsg(err, errlen,
				       "%s: correlation exec table: bad successor in set %zu way %zu",
				       name, set, s % cfg.ways);
				goto fail;
			}
		}
		t->key[s] = key;
		t->seen[s] = seen;
		t->nsucc[s] = n;
	}
	if (!bytes_reader_ok(&r) || r.pos != r.len) {
		um_errmsg(err, errlen, "%s: correlation exec table is %s", name,
		       bytes_reader_ok(&r) ? "longer than its entries" : "truncated");
		goto fail;
	}
	return t;
fail:
	corr_destroy(t);
	return NULL;
}

static int decode_blocks(corr_tables *t, const void *sec, size_t len, const char *name,
			 char *err, size_t errlen)
{
	struct bytes_reader r = bytes_reader_init(sec, len);
	t->cfg.block_size = bytes_get_u64(&r);
	t->cfg.max_blocks_per_exec = bytes_get_u32(&r);
	t->cfg.max_block_entries = bytes_get_u64(&r);
	t->blocks_dropped = bytes_get_u64(&r);
	uint64_t n_lists = bytes_get_u64(&r);
	char why[160];
	if (!bytes_reader_ok(&r)) {
		um_errmsg(err, errlen, "%s: correlation block table is truncated", name);
		return -1;
	}
	if (corr_config_check(&t->cfg, why, sizeof why) != 0) {
		um_errmsg(err, errlen, "%s: correlation block table: %s", name, why);
		return -1;
	}
	/* A list takes at least 12 bytes (exec ID, count). */
	if (!bytes_can_hold(&r, n_lists, 12)) {
		um_errmsg(err, errlen, "%s: correlation block table is truncated", name);
		return -1;
	}
	uint64_t prev = 0;
	for (uint64_t i = 0; i < n_lists; i++) {
		uint64_t exec_id = bytes_get_u64(&r);
		uint32_t n = bytes_get_u32(&r);
		if (!bytes_reader_ok(&r) || !bytes_can_hold(&r, n, 8)) {
			um_errmsg(err, errlen, "%s: correlation block table is truncated", name);
			return -1;
		}
		if (exec_id <= prev) {
			um_errmsg(err, errlen,
			       "%s: correlation block list %llu is out of order or has exec ID 0",
			       name, (unsigned long long)i);
			return -1;
		}
		prev = exec_id;
		if (n == 0 || n > t->cfg.max_blocks_per_exec ||
		    n > t->cfg.max_block_entries - t->block_entries) {
			um_errmsg(err, errlen, "%s: correlation block list %llu has %u blocks "
			       "(empty, or over the table's caps)", name,
			       (unsigned long long)i, (unsigned)n);
			return -1;
		}
		struct blist *l = list_add(t, exec_id);
		if (!l) {
			um_errmsg(err, errlen, "%s: out of memory", name);
			return -1;
		}
		for (uint32_t k = 0; k < n; k++) {
			struct corr_block b;
			b.alloc = bytes_get_u32(&r);
			b.block = bytes_get_u32(&r);
			int rc = list_append(t, l, b);
			if (rc < 0) {
				um_errmsg(err, errlen, "%s: out of memory", name);
				return -1;
			}
			if (rc == 0) {
				um_errmsg(err, errlen, "%s: correlation block list %llu repeats a block",
				       name, (unsigned long long)i);
				return -1;
			}
		}
		t->block_entries += n;
	}
	if (r.pos != r.len) {
		um_errmsg(err, errlen, "%s: correlation block table is longer than its lists", name);
		return -1;
	}
	return 0;
}

corr_tables *corr_decode(const void *exec_sec, size_t exec_len, const void *block_sec,
			 size_t block_len, const char *name, char *err, size_t errlen)
{
	corr_tables *t = decode_exec(exec_sec, exec_len, name, err, errlen);
	if (t && decode_blocks(t, block_sec, block_len, name, err, errlen) != 0) {
		corr_destroy(t);
		return NULL;
	}
	return t;
}
