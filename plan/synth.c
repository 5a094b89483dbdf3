/* synth.c: synthetic DNN-shaped traces (see synth.h). */
#include "synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "errmsg.h"
#include "execid.h"
#include "grow.h"
#include "trace_schema.h"
#include "search.h"

#define SMALL_LIMIT ((uint64_t)1 << 20)
#define BLOCK ((uint64_t)2 << 20)

void synth_defaults(struct synth_params *p)
{
	memset(p, 0, sizeof *p);
	p->seed = 1;
	p->layers = 8;
	p->iterations = 6;
	p->kernels_per_layer = 1;
	p->warmup_kernels = 4;
	p->min_bytes = (uint64_t)1 << 20;
	p->max_bytes = (uint64_t)64 << 20;
	p->min_kernel_ns = 20000;
	p->max_kernel_ns = 400000;
	p->device_memory = (uint64_t)16 << 30;
	p->faults = true;
	p->input_copy = true;
}

uint64_t synth_kernel_count(const struct synth_params *p)
{
	uint64_t L = p->layers;
	uint64_t per_iter = L * p->kernels_per_layer + 2 + (2 * L - 1) + L;
	return p->warmup_kernels + L + p->iterations * per_iter + L;
}

/* ---- the generator's state ---- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	/* splitmix64: fast, and the same stream on every platform. */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	return hi <= lo ? lo : lo + rnd(r) % (hi - lo + 1);
}

/* Free ranges of one reserved size, reused last-freed first. */
struct size_class {
	uint64_t reserved;
	uint64_t *addr;
	size_t n, cap;
};

struct galloc {
	uint64_t id, address, size, reserved;
	bool fresh; /* never touched by a kernel since it was mapped */
};

struct gen {
	const struct synth_params *p;
	struct rng rng;
	sqlite3 *db;
	sqlite3_stmt *ins_kernel, *ins_arg, *ins_alloc, *free_alloc, *ins_mig, *ins_fault,
		*ins_string, *ins_nvtx, *ins_memcpy;
	int64_t cpu, gpu;     /* clocks, ns */
	uint64_t seq, corr, next_id, next_string, mig_id;
	uint64_t bump;        /* next unmapped address */
	struct size_class *classes;
	size_t n_classes, cap_classes;
	char *err;
	size_t errlen;
	int rc;               /* first SQLite error */
};

static void check(struct gen *g, int rc)
{
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW && g->rc == SQLITE_OK) {
		g->rc = rc;
		um_errmsg(g->err, g->errlen, "writing the synthetic trace: %s", sqlite3_errmsg(g->db));
	}
}

static void run(struct gen *g, sqlite3_stmt *st)
{
	check(g, sqlite3_step(st));
	sqlite3_reset(st);
}

static struct size_class *class_of(struct gen *g, uint64_t reserved)
{
	size_t lo = lower_bound_u64(g->classes, g->n_classes, SEARCH_FIELD(struct size_class, reserved), reserved);
	if (lo < g->n_classes && g->classes[lo].reserved == reserved)
		return &g->classes[lo];
	struct size_class *c = room_for_one(g->classes, g->n_classes, &g->cap_classes, sizeof *c, 64);
	if (!c)
		return NULL;
	g->classes = c;
	memmove(g->classes + lo + 1, g->classes + lo, (g->n_classes - lo) * sizeof *g->classes);
	g->classes[lo] = (struct size_class){ .reserved = reserved };
	g->n_classes++;
	return &g->classes[lo];
}

static uint64_t reserve_of(uint64_t size)
{
	if (size > SMALL_LIMIT)
		return (size + BLOCK - 1) / BLOCK * BLOCK;
	return (size + 511) / 512 * 512;
}

static int galloc_new(struct gen *g, uint64_t size, struct galloc *out)
{
	uint64_t reserved = reserve_of(size);
	struct size_class *c = class_of(g, reserved);
	if (!c)
		return -1;
	out->fresh = c->n == 0;
	if (c->n) {
		out->address = c->addr[--c->n];
	} else {
		uint64_t align = size > SMALL_LIMIT ? BLOCK : 512;
		g->bump = (g->bump + align - 1) / align * align;
		out->address = g->bump;
		g->bump += reserved;
	}
	out->id = g->next_id++;
	out->size = size;
	out->reserved = reserved;
	g->cpu += 1000;
	sqlite3_stmt *st = g->ins_alloc;
	sqlite3_bind_int64(st, 1, (int64_t)out->id);
	sqlite3_bind_int64(st, 2, (int64_t)out->address);
	sqlite3_bind_int64(st, 3, (int64_t)size);
	sqlite3_bind_int64(st, 4, (int64_t)reserved);
	sqlite3_bind_int64(st, 5, g->cpu);
	run(g, st);
	return 0;
}

static int galloc_free(struct gen *g, struct galloc *a)
{
	struct size_class *c = class_of(g, a->reserved);
	if (!c)
		return -1;
	uint64_t *addr = room_for_one(c->addr, c->n, &c->cap, sizeof *addr, 8);
	if (!addr)
		return -1;
	c->addr = addr;
	c->addr[c->n++] = a->address;
	g->cpu += 1000;
	sqlite3_bind_int64(g->free_alloc, 1, g->cpu);
	sqlite3_bind_int64(g->free_alloc, 2, (int64_t)a->id);
	run(g, g->free_alloc);
	return 0;
}

static uint64_t intern(struct gen *g, const char *s)
{
	uint64_t id = g->next_string++;
	sqlite3_bind_int64(g->ins_string, 1, (int64_t)id);
	sqlite3_bind_text(g->ins_string, 2, s, -1, SQLITE_TRANSIENT);
	run(g, g->ins_string);
	return id;
}

/* Kernel names, interned once. */
enum kname { K_INIT, K_WARMUP, K_FWD, K_LOSS, K_LOSS_GRAD, K_BWD_W, K_BWD_D, K_ZERO, K_SGD, K_COUNT };
static const char *const kname_text[K_COUNT] = {
	"init_weights", "warmup_kernel", "fwd_gemm", "loss_fwd", "loss_bwd",
	"bwd_weight_gemm", "bwd_data_gemm", "zero_", "sgd_step",
};

struct kernel_spec {
	enum kname kind;
	uint32_t variant;  /* forward kernel index within a layer */
	uint64_t name_id;
	uint64_t dur_ns;
	struct galloc **args;
	size_t nargs;
};

/* A stray fault address: inside some allocation the kernel does not use
 * (the first weight, or past the last argument when it is the first). */
static uint64_t stray_address(const struct kernel_spec *k, const struct galloc *w0)
{
	for (size_t i = 0; i < k->nargs; i++)
		if (k->args[i] == w0)
			return k->args[k->nargs - 1]->address + k->args[k->nargs - 1]->reserved + BLOCK;
	return w0->address;
}

static void launch(struct gen *g, const struct kernel_spec *k, const struct galloc *w0)
{
	const struct synth_params *p = g->p;
	struct execid_arg ea[8];
	uint64_t grid = 1 + (k->args[0]->size >> 16);
	for (size_t i = 0; i < k->nargs; i++)
		ea[i] = (struct execid_arg){ (uint32_t)(8 * i), k->args[i]->size, 0 };
	char name[64];
	snprintf(name, sizeof name, "%s_%u", kname_text[k->kind], k->variant);
	struct execid_launch l = { name, 0, { (uint32_t)(grid > 65535 ? 65535 : grid), 1, 1 },
				   { 256, 1, 1 }, 0, ea, k->nargs };
	uint64_t exec = execid_of(&l, NULL);

	g->cpu += 4000;
	int64_t start = g->gpu > g->cpu + 3000 ? g->gpu : g->cpu + 3000;
	int64_t end = start + (int64_t)k->dur_ns;
	g->gpu = end;
	uint64_t corr = ++g->corr;
	sqlite3_stmt *st = g->ins_kernel;
	sqlite3_bind_int64(st, 1, (int64_t)corr);
	sqlite3_bind_int64(st, 2, (int64_t)g->seq++);
	sqlite3_bind_int64(st, 3, (int64_t)exec);
	sqlite3_bind_int64(st, 4, (int64_t)k->name_id);
	sqlite3_bind_int64(st, 5, (int64_t)l.grid[0]);
	sqlite3_bind_int64(st, 6, g->cpu);
	if (p->untimed) {
		sqlite3_bind_null(st, 7);
		sqlite3_bind_null(st, 8);
	} else {
		sqlite3_bind_int64(st, 7, start);
		sqlite3_bind_int64(st, 8, end);
	}
	run(g, st);
	for (size_t i = 0; i < k->nargs; i++) {
		sqlite3_bind_int64(g->ins_arg, 1, (int64_t)corr);
		sqlite3_bind_int64(g->ins_arg, 2, (int64_t)(8 * i));
		sqlite3_bind_int64(g->ins_arg, 3, (int64_t)k->args[i]->id);
		run(g, g->ins_arg);
	}
	if (!p->faults)
		return;
	/* First touch of fresh memory: one on-demand migration per block (at
	 * most 16 per tensor) while the kernel runs, and one sampled fault. */
	for (size_t i = 0; i < k->nargs; i++) {
		struct galloc *a = k->args[i];
		if (!a->fresh)
			continue;
		a->fresh = false;
		uint64_t blocks = (a->reserved + BLOCK - 1) / BLOCK;
		for (uint64_t b = 0; b < blocks && b < 16; b++) {
			uint64_t addr = a->address + b * BLOCK;
			if (rnd(&g->rng) % 100 < p->stray_fault_pct)
				addr = stray_address(k, w0) + b * 4096;
			int64_t t = start + (int64_t)((uint64_t)(end - start) * (b + 1) / 18);
			sqlite3_bind_int64(g->ins_mig, 1, (int64_t)++g->mig_id);
			sqlite3_bind_int64(g->ins_mig, 2, t);
			sqlite3_bind_int64(g->ins_mig, 3, t + 1000);
			sqlite3_bind_int64(g->ins_mig, 4, (int64_t)addr);
			sqlite3_bind_int64(g->ins_mig, 5, (int64_t)(a->size < 65536 ? a->size : 65536));
			run(g, g->ins_mig);
		}
		sqlite3_bind_int64(g->ins_fault, 1, start + 500);
		sqlite3_bind_int64(g->ins_fault, 2, (int64_t)a->address);
		run(g, g->ins_fault);
	}
}

static void memcpy_row(struct gen *g, const char *kind, uint64_t bytes, bool sync)
{
	int64_t start = g->gpu > g->cpu ? g->gpu : g->cpu;
	int64_t end = start + (int64_t)(bytes / 12) + 2000; /* ~12 GB/s */
	g->gpu = end;
	if (sync && g->cpu < end)
		g->cpu = end;
	sqlite3_bind_int64(g->ins_memcpy, 1, (int64_t)++g->corr);
	sqlite3_bind_text(g->ins_memcpy, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(g->ins_memcpy, 3, (int64_t)bytes);
	sqlite3_bind_int64(g->ins_memcpy, 4, start);
	sqlite3_bind_int64(g->ins_memcpy, 5, end);
	run(g, g->ins_memcpy);
}

static const char *const statements[] = {
	"INSERT INTO kernel(correlation_id, seq, exec_id, name_id, grid_x, grid_y, grid_z, "
	"block_x, block_y, block_z, shared_mem, stream_id, thread_id, launch_ns, start_ns, end_ns) "
	"VALUES (?1, ?2, ?3, ?4, ?5, 1, 1, 256, 1, 1, 0, 7, 1, ?6, ?7, ?8)",
	"INSERT INTO kernel_arg(correlation_id, param_offset, alloc_id, offset) VALUES (?1, ?2, ?3, 0)",
	"INSERT INTO alloc(id, address, size, reserved, api, alloc_ns, alloc_thread, live_at_exit) "
	"VALUES (?1, ?2, ?3, ?4, 'cudaMalloc', ?5, 1, 0)",
	"UPDATE alloc SET free_ns = ?1, free_thread = 1 WHERE id = ?2",
	"INSERT INTO migration(id, start_ns, end_ns, address, bytes, direction, cause) "
	"VALUES (?1, ?2, ?3, ?4, ?5, 'htod', 'fault')",
	"INSERT INTO fault(start_ns, end_ns, address, access, groups) VALUES (?1, ?1, ?2, 'read', 1)",
	"INSERT INTO string(id, value) VALUES (?1, ?2)",
	"INSERT INTO nvtx_range(name_id, thread_id, start_ns, end_ns) VALUES (?1, 1, ?2, ?3)",
	"INSERT INTO memcpy(correlation_id, kind, bytes, stream_id, start_ns, end_ns) "
	"VALUES (?1, ?2, ?3, 7, ?4, ?5)",
};

static int prepare_all(struct gen *g)
{
	sqlite3_stmt **st[] = { &g->ins_kernel, &g->ins_arg, &g->ins_alloc, &g->free_alloc,
				&g->ins_mig, &g->ins_fault, &g->ins_string, &g->ins_nvtx,
				&g->ins_memcpy };
	for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
		int rc = sqlite3_prepare_v2(g->db, statements[i], -1, st[i], NULL);
		if (rc != SQLITE_OK) {
			check(g, rc);
			return -1;
		}
	}
	return 0;
}

static void finalize_all(struct gen *g)
{
	sqlite3_finalize(g->ins_kernel);
	sqlite3_finalize(g->ins_arg);
	sqlite3_finalize(g->ins_alloc);
	sqlite3_finalize(g->free_alloc);
	sqlite3_finalize(g->ins_mig);
	sqlite3_finalize(g->ins_fault);
	sqlite3_finalize(g->ins_string);
	sqlite3_finalize(g->ins_nvtx);
	sqlite3_finalize(g->ins_memcpy);
}

/* The program itself. Returns 0, or -1 when out of memory. */
static int program(struct gen *g)
{
	const struct synth_params *p = g->p;
	const uint32_t L = p->layers;
	uint64_t names[K_COUNT];
	for (int i = 0; i < K_COUNT; i++)
		names[i] = intern(g, kname_text[i]);
	uint64_t *act = malloc(L * sizeof *act), *wsz = malloc(L * sizeof *wsz);
	uint64_t *dur = malloc((size_t)L * 4 * sizeof *dur);
	struct galloc *W = calloc(L, sizeof *W), *A = calloc(L, sizeof *A), *dA = calloc(L, sizeof *dA),
		      *G = calloc(L, sizeof *G), *M = calloc(L, sizeof *M);
	int rc = -1;
	if (!act || !wsz || !dur || !W || !A || !dA || !G || !M)
		goto out;
	uint64_t in_size = p->min_bytes, loss_size = 512;
	for (uint32_t l = 0; l < L; l++) {
		act[l] = rnd_range(&g->rng, p->min_bytes, p->max_bytes);
		if (l == 0)
			in_size = act[0]; /* the input batch is shaped like layer 0's output */
		wsz[l] = rnd_range(&g->rng, p->min_bytes, p->max_bytes);
		for (int j = 0; j < 4; j++)
			dur[4 * l + j] = rnd_range(&g->rng, p->min_kernel_ns, p->max_kernel_ns);
	}
	struct galloc *args[4];
#define KERNEL(kind_, variant_, dur_, ...)                                                   \
	do {                                                                                 \
		struct galloc *list_[] = { __VA_ARGS__ };                                    \
		memcpy(args, list_, sizeof list_);                                           \
		struct kernel_spec k_ = { kind_, variant_, names[kind_], dur_, args,        \
					  sizeof list_ / sizeof list_[0] };                  \
		launch(g, &k_, &W[0]);                                                       \
	} while (0)

	for (uint32_t l = 0; l < L; l++) {
		if (galloc_new(g, wsz[l], &W[l]))
			goto out;
		KERNEL(K_INIT, 0, dur[4 * l], &W[l]);
	}
	for (uint32_t i = 0; i < p->warmup_kernels; i++)
		KERNEL(K_WARMUP, i, p->min_kernel_ns, &W[i % L]);

	for (uint32_t it = 0; it < p->iterations; it++) {
		int64_t it_start = g->cpu;
		struct galloc X, LOSS;
		if (galloc_new(g, in_size, &X))
			goto out;
		if (p->input_copy) {
			memcpy_row(g, "htod", in_size, false);
			X.fresh = false; /* the copy touched it */
		}
		for (uint32_t l = 0; l < L; l++) {
			if (galloc_new(g, act[l], &A[l]))
				goto out;
			for (uint32_t j = 0; j < p->kernels_per_layer; j++)
				KERNEL(K_FWD, j, dur[4 * l + 1], l ? &A[l - 1] : &X, &W[l], &A[l]);
		}
		if (galloc_new(g, loss_size, &LOSS))
			goto out;
		KERNEL(K_LOSS, 0, p->min_kernel_ns, &A[L - 1], &LOSS);
		memcpy_row(g, "dtoh", loss_size, true);
		if (galloc_new(g, act[L - 1], &dA[L - 1]))
			goto out;
		KERNEL(K_LOSS_GRAD, 0, p->min_kernel_ns, &A[L - 1], &dA[L - 1]);
		if (galloc_free(g, &LOSS))
			goto out;
		for (uint32_t l = L; l-- > 0;) {
			if (galloc_new(g, wsz[l], &G[l]))
				goto out;
			KERNEL(K_BWD_W, 0, dur[4 * l + 2], &dA[l], l ? &A[l - 1] : &X, &G[l]);
			if (l > 0) {
				if (galloc_new(g, act[l - 1], &dA[l - 1]))
					goto out;
				KERNEL(K_BWD_D, 0, dur[4 * l + 3], &dA[l], &W[l], &dA[l - 1]);
			}
			if (galloc_free(g, &dA[l]) || galloc_free(g, &A[l]))
				goto out;
		}
		if (galloc_free(g, &X))
			goto out;
		if (it == 0)
			for (uint32_t l = 0; l < L; l++) {
				if (galloc_new(g, wsz[l], &M[l]))
					goto out;
				KERNEL(K_ZERO, 0, p->min_kernel_ns, &M[l]);
			}
		for (uint32_t l = 0; l < L; l++) {
			KERNEL(K_SGD, 0, dur[4 * l], &W[l], &G[l], &M[l]);
			if (galloc_free(g, &G[l]))
				goto out;
		}
		if (p->nvtx[0]) {
			char text[96];
			snprintf(text, sizeof text, "%s %u", p->nvtx, it);
			uint64_t id = intern(g, text);
			g->cpu += 1000;
			sqlite3_bind_int64(g->ins_nvtx, 1, (int64_t)id);
			sqlite3_bind_int64(g->ins_nvtx, 2, it_start);
			sqlite3_bind_int64(g->ins_nvtx, 3, g->cpu);
			run(g, g->ins_nvtx);
		}
	}
#undef KERNEL
	rc = 0;
out:
	free(act);
	free(wsz);
	free(dur);
	free(W);
	free(A);
	free(dA);
	free(G);
	free(M);
	return rc;
}

static void set_meta(struct gen *g, const char *key, const char *value)
{
	sqlite3_stmt *st;
	check(g, sqlite3_prepare_v2(g->db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
				    -1, &st, NULL));
	if (g->rc != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	check(g, sqlite3_step(st));
	sqlite3_finalize(st);
}

/* Takes the schema's explicit indexes out until the rows are in: building
 * an index once over sorted keys is several times faster than updating it
 * per row. Their DDL is kept in *sql (malloc'ed) to recreate them. */
static int drop_indexes(struct gen *g, char ***sql, size_t *n)
{
	sqlite3_stmt *st;
	check(g, sqlite3_prepare_v2(g->db, "SELECT name, sql FROM sqlite_master WHERE type = 'index' "
				    "AND sql IS NOT NULL ORDER BY name", -1, &st, NULL));
	if (g->rc != SQLITE_OK)
		return 0;
	char **names = NULL;
	int rc = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		char **ns = realloc(names, (*n + 1) * sizeof *ns), **ss = realloc(*sql, (*n + 1) * sizeof *ss);
		if (ns)
			names = ns;
		if (ss)
			*sql = ss;
		if (!ns || !ss) {
			rc = -1;
			break;
		}
		names[*n] = strdup((const char *)sqlite3_column_text(st, 0));
		(*sql)[*n] = strdup((const char *)sqlite3_column_text(st, 1));
		(*n)++;
		if (!names[*n - 1] || !(*sql)[*n - 1]) {
			rc = -1;
			break;
		}
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < *n; i++) {
		char drop[160];
		if (!rc && names[i]) {
			snprintf(drop, sizeof drop, "DROP INDEX \"%s\"", names[i]);
			check(g, sqlite3_exec(g->db, drop, NULL, NULL, NULL));
		}
		free(names[i]);
	}
	free(names);
	if (rc) {
		for (size_t i = 0; i < *n; i++)
			free((*sql)[i]);
		free(*sql);
		*sql = NULL;
		*n = 0;
	}
	return rc;
}

/* *acc += a * b; false where that passes INT64_MAX. */
static bool add_product(uint64_t *acc, uint64_t a, uint64_t b)
{
	uint64_t x;
	return !__builtin_mul_overflow(a, b, &x) && !__builtin_add_overflow(*acc, x, acc) &&
	       *acc <= INT64_MAX;
}

/* Whether every clock and address the trace of p holds fits the schema's
 * 64-bit signed columns (and the generator's int64 clocks): bounds from the
 * kernels and allocations the program makes, each kernel the longest, each
 * allocation the largest, each copy the input's. */
static bool fits(const struct synth_params *p)
{
	const uint64_t L = p->layers, it = p->iterations;
	uint64_t per_iter = 1, kernels = p->warmup_kernels, allocs = 0;
	uint64_t clock = 1000000 + 1000; /* the start, a migration's end past its kernel's */
	uint64_t addr = (uint64_t)2 << 40; /* the first, and a stray past the last */
	if (p->max_bytes > (uint64_t)1 << 62 || !add_product(&per_iter, L, p->kernels_per_layer + 3ULL) ||
	    !add_product(&kernels, L, 2) || !add_product(&kernels, it, per_iter) ||
	    !add_product(&allocs, L, 2) || !add_product(&allocs, it, 3 * L + 2))
		return false;
	return add_product(&addr, allocs, reserve_of(p->max_bytes) + 2 * BLOCK) &&
	       add_product(&clock, kernels, 7000) && add_product(&clock, kernels, p->max_kernel_ns) &&
	       add_product(&clock, allocs, 2000) && add_product(&clock, it, 6000) &&
	       add_product(&clock, it, 2 * (p->max_bytes / 12));
}

int synth_write(const char *path, const struct synth_params *p, char *err, size_t errlen)
{
	if (!p->layers || !p->iterations || !p->kernels_per_layer || !p->min_bytes ||
	    p->min_bytes > p->max_bytes || p->min_kernel_ns > p->max_kernel_ns ||
	    p->stray_fault_pct > 100 || !fits(p)) {
		um_errmsg(err, errlen, "%s: bad synthetic trace parameters", path);
		return -1;
	}
	unlink(path);
	struct gen g = { .p = p, .rng = { p->seed }, .err = err, .errlen = errlen,
			 .cpu = 1000000, .gpu = 1000000, .next_id = 1, .next_string = 1,
			 .bump = (uint64_t)1 << 40 };
	if (sqlite3_open(path, &g.db) != SQLITE_OK) {
		um_errmsg(err, errlen, "%s: cannot create: %s", path,
			g.db ? sqlite3_errmsg(g.db) : "out of memory");
		sqlite3_close(g.db);
		return -1;
	}
	/* A scratch file: durability buys nothing, speed does. */
	sqlite3_exec(g.db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF", NULL, NULL, NULL);
	char msg[256];
	if (trace_schema_create(g.db, msg, sizeof msg)) {
		um_errmsg(err, errlen, "%s: %s", path, msg);
		sqlite3_close(g.db);
		return -1;
	}
	char **indexes = NULL;
	size_t n_indexes = 0;
	if (drop_indexes(&g, &indexes, &n_indexes)) {
		um_errmsg(err, errlen, "%s: out of memory", path);
		sqlite3_close(g.db);
		return -1;
	}
	char buf[64];
	check(&g, sqlite3_exec(g.db, "BEGIN", NULL, NULL, NULL));
	set_meta(&g, "status", "complete");
	set_meta(&g, "umkit_version", "synthetic");
	set_meta(&g, "device_name", "synthetic device");
	snprintf(buf, sizeof buf, "synth seed=%llu layers=%u iterations=%u",
		 (unsigned long long)p->seed, p->layers, p->iterations);
	set_meta(&g, "command", buf);
	if (p->device_memory) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)p->device_memory);
		set_meta(&g, "device_memory", buf);
	}
	int rc = 0;
	if (g.rc == SQLITE_OK && prepare_all(&g) == 0 && program(&g) != 0) {
		um_errmsg(err, errlen, "%s: out of memory generating the trace", path);
		rc = -1;
	}
	finalize_all(&g);
	if (g.rc == SQLITE_OK)
		check(&g, sqlite3_exec(g.db, "UPDATE alloc SET live_at_exit = 1 WHERE free_ns IS NULL",
				       NULL, NULL, NULL));
	for (size_t i = 0; i < n_indexes; i++) {
		if (g.rc == SQLITE_OK)
			check(&g, sqlite3_exec(g.db, indexes[i], NULL, NULL, NULL));
		free(indexes[i]);
	}
	free(indexes);
	if (g.rc == SQLITE_OK)
		check(&g, sqlite3_exec(g.db, "COMMIT", NULL, NULL, NULL));
	for (size_t i = 0; i < g.n_classes; i++)
		free(g.classes[i].addr);
	free(g.classes);
	if (sqlite3_close(g.db) != SQLITE_OK && g.rc == SQLITE_OK) {
		um_errmsg(err, errlen, "%s: closing failed", path);
		rc = -1;
	}
	if (g.rc != SQLITE_OK) {
		char inner[256];
		snprintf(inner, sizeof inner, "%s", err);
		um_errmsg(err, errlen, "%s: %s", path, inner);
		rc = -1;
	}
	return rc;
}
