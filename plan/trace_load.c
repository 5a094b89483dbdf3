/* trace_load.c: reading a trace into the planner's arrays (see trace_load.h). */
#include "trace_load.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "arena.h"
#include "errmsg.h"
#include "execid.h"
#include "grow.h"
#include "trace_schema.h"
#include "search.h"

/* A growable array of fixed-size elements, so loading never needs to count
 * rows first (a second pass over a million rows costs as much as the first). */
struct grow {
	void *data;
	size_t n, cap, elem;
};

static void *grow_push(struct grow *g)
{
	void *d = room_for_one(g->data, g->n, &g->cap, g->elem, 1024);
	if (!d)
		return NULL;
	g->data = d;
	return (char *)g->data + g->elem * g->n++;
}

/* qsort, except that an empty table leaves base NULL, which qsort must not
 * be given. */
static void sort_rows(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static int64_t col_ns(sqlite3_stmt *st, int col, int64_t none)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? none : sqlite3_column_int64(st, col);
}

struct loader {
	sqlite3 *db;
	struct trace *t;
	char *err;
	size_t errlen;
};

static int prepare(struct loader *l, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(l->db, sql, -1, st, NULL) != SQLITE_OK) {
		um_errmsg(l->err, l->errlen, "%s: cannot query the trace: %s", l->t->path,
			trace_schema_errmsg(l->db));
		return -1;
	}
	return 0;
}

static int step_failed(struct loader *l, int rc, sqlite3_stmt *st)
{
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
	um_errmsg(l->err, l->errlen, "%s: reading the trace failed: %s", l->t->path,
		rc == SQLITE_NOMEM ? "out of memory" : trace_schema_errmsg(l->db));
	return -1;
}

static int oom(struct loader *l)
{
	um_errmsg(l->err, l->errlen, "%s: out of memory loading the trace", l->t->path);
	return -1;
}

/* The first column of the current row holding neither an integer nor
 * NULL, or -1. SQLite keeps what a column's affinity cannot convert ('abc',
 * 1.5 in an INTEGER column; anything in a table rebuilt by hand), and
 * sqlite3_column_int64 would read it as 0 or cut it. */
static int not_integer(sqlite3_stmt *st)
{
	for (int i = 0; i < sqlite3_column_count(st); i++) {
		int type = sqlite3_column_type(st, i);
		if (type != SQLITE_INTEGER && type != SQLITE_NULL)
			return i;
	}
	return -1;
}

/* The error for column col of the current row of table, which holds no
 * integer: the value as far as it prints on one line. */
static void refuse_not_integer(struct loader *l, const char *table, sqlite3_stmt *st, int col)
{
	char shown[41];
	const unsigned char *v = sqlite3_column_text(st, col);
	size_t i = 0;
	for (; v && v[i] && i < sizeof shown - 1; i++)
		shown[i] = v[i] >= 0x20 && v[i] < 0x7f ? (char)v[i] : '?';
	shown[i] = '\0';
	um_errmsg(l->err, l->errlen, "%s: a row of %s has %s '%s', not an integer: not a trace umrec wrote",
		  l->t->path, table, sqlite3_column_name(st, col), shown);
}

/* A name_id read from a row: the planner keeps names as 32-bit string
 * ids (trace_string), so one past them would be read cut, as another
 * string's id, and what it names planned under that string. The first
 * such id is kept in bad (seen), for refuse_name. */
struct bad_name {
	bool seen;
	int64_t id;
};

static uint32_t name_id(sqlite3_stmt *st, int col, struct bad_name *bad)
{
	int64_t id = sqlite3_column_int64(st, col);
	if ((id < 0 || id > UINT32_MAX) && !bad->seen)
		*bad = (struct bad_name){ true, id };
	return (uint32_t)id;
}

static int refuse_name(struct loader *l, const char *table, const struct bad_name *bad)
{
	um_errmsg(l->err, l->errlen, "%s: a row of %s has name_id %lld, not a string id: not a trace umrec wrote",
		  l->t->path, table, (long long)bad->id);
	return -1;
}

/* Steps through the rows of sql, a query of table whose columns are all
 * integers: row(ctx, st, slot) fills slot, one element of elem bytes, and
 * returns false to leave the row out. The rows kept end up in *rows
 * (malloc'd; NULL when none) and *n. Returns 0, or -1 with the error set
 * and nothing kept. */
static int load_rows(struct loader *l, const char *table, const char *sql, size_t elem,
		     bool (*row)(void *ctx, sqlite3_stmt *st, void *slot), void *ctx,
		     void **rows, size_t *n)
{
	sqlite3_stmt *st;
	if (prepare(l, sql, &st))
		return -1;
	struct grow g = { .elem = elem };
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int bad = not_integer(st);
		if (bad >= 0) {
			refuse_not_integer(l, table, st, bad);
			sqlite3_finalize(st);
			free(g.data);
			return -1;
		}
		void *slot = grow_push(&g);
		if (!slot) {
			sqlite3_finalize(st);
			free(g.data);
			return oom(l);
		}
		if (!row(ctx, st, slot))
			g.n--;
	}
	if (step_failed(l, rc, st)) {
		free(g.data);
		return -1;
	}
	*rows = g.data;
	*n = g.n;
	return 0;
}

static char *dup_text(const unsigned char *s)
{
	return strdup(s ? (const char *)s : "");
}

/* A meta value that must be a number the recorder wrote: decimal digits
 * alone, at most INT64_MAX, no leading zero (anything else is refused
 * rather than read as exabytes: strtoull takes "-1"; and a value padded
 * with zeros past the caller's buffer would be read cut short). */
static bool meta_number(const char *buf, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(buf, &end, 10);
	if (buf[0] < '0' || buf[0] > '9' || (buf[0] == '0' && buf[1]) || *end || errno || n > INT64_MAX)
		return false;
	*v = n;
	return true;
}

/* meta.key into buf: 1 when the key is there, 0 when not. A failed read
 * (a damaged meta table, a lock held past the timeout) is no absent key,
 * which would plan with the device's memory, reset or context unknown:
 * -1 with the error. */
static int meta_get(struct loader *l, const char *key, char *buf, size_t len)
{
	int rc = trace_schema_meta(l->db, key, buf, len);
	if (rc < 0)
		um_errmsg(l->err, l->errlen, "%s: reading meta %s failed: %s", l->t->path, key,
			  trace_schema_errmsg(l->db));
	return rc;
}

/* meta.key, a count, into *out: 0 where absent (traces older than the
 * key). Returns 0, or -1 with the error when it is not a count. */
static int meta_count(struct loader *l, const char *key, uint64_t *out)
{
	char buf[64];
	*out = 0;
	int rc = meta_get(l, key, buf, sizeof buf);
	if (rc < 0)
		return -1;
	if (rc == 1 && !meta_number(buf, out)) {
		um_errmsg(l->err, l->errlen, "%s: meta %s '%s' is not a count", l->t->path, key, buf);
		return -1;
	}
	return 0;
}

static int load_meta(struct loader *l)
{
	struct trace *t = l->t;
	char buf[512];
	uint64_t v;
	t->device_memory = 0;
	int rc = meta_get(l, "device_memory", buf, sizeof buf);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		if (!meta_number(buf, &v) || v == 0) {
			um_errmsg(l->err, l->errlen, "%s: meta device_memory '%s' is not a size in bytes",
				  t->path, buf);
			return -1;
		}
		t->device_memory = v;
	}
	/* Absent in traces recorded before umkit wrote it: taken as off. */
	if ((rc = meta_get(l, "framework_cache", buf, sizeof buf)) < 0)
		return -1;
	if (rc == 1) {
		if (strcmp(buf, "0") != 0 && strcmp(buf, "1") != 0) {
			um_errmsg(l->err, l->errlen, "%s: meta framework_cache '%s' is neither 0 nor 1",
				  t->path, buf);
			return -1;
		}
		t->framework_cache = buf[0] == '1';
	}
	if (meta_count(l, "runtime_allocs", &t->runtime_allocs) || meta_count(l, "runtime_alloc_bytes",
										  &t->runtime_alloc_bytes) ||
	    meta_count(l, "driver_allocs", &t->driver_allocs) ||
	    meta_count(l, "driver_alloc_bytes", &t->driver_alloc_bytes) ||
	    meta_count(l, "driver_alloc_peak_bytes", &t->driver_alloc_peak_bytes) ||
	    meta_count(l, "driver_managed_allocs", &t->driver_managed_allocs) ||
	    meta_count(l, "driver_managed_alloc_bytes", &t->driver_managed_alloc_bytes) ||
	    meta_count(l, "driver_managed_alloc_peak_bytes", &t->driver_managed_alloc_peak_bytes))
		return -1;
	if (t->driver_managed_alloc_peak_bytes > t->driver_managed_alloc_bytes) {
		um_errmsg(l->err, l->errlen, "%s: meta driver_managed_alloc_peak_bytes %llu is more than "
			  "driver_managed_alloc_bytes", t->path,
			  (unsigned long long)t->driver_managed_alloc_peak_bytes);
		return -1;
	}
	const char *peak_wrong = NULL;
	if (t->driver_alloc_peak_bytes > t->driver_alloc_bytes)
		peak_wrong = "is more than driver_alloc_bytes";
	else if (t->device_memory && t->driver_alloc_peak_bytes >= t->device_memory)
		peak_wrong = "leaves none of device_memory"; /* the default capacity would be none */
	if (peak_wrong) {
		um_errmsg(l->err, l->errlen, "%s: meta driver_alloc_peak_bytes %llu %s", t->path,
			  (unsigned long long)t->driver_alloc_peak_bytes, peak_wrong);
		return -1;
	}
	/* A program on several GPUs launches kernels in other contexts than
	 * the arena's: those are left out (load_kernels). */
	t->arena_context_id = -1;
	if ((rc = meta_get(l, "arena_context_id", buf, sizeof buf)) < 0)
		return -1;
	if (rc == 1) {
		if (!meta_number(buf, &v) || v > UINT32_MAX) {
			um_errmsg(l->err, l->errlen, "%s: meta arena_context_id '%s' is not a CUPTI context ID",
				  t->path, buf);
			return -1;
		}
		t->arena_context_id = (int64_t)v;
	}
	/* After the reset the program's memory was not the arena's: what ran
	 * then is left out (load_kernels). */
	t->device_reset_ns = TRACE_NS_NONE;
	if ((rc = meta_get(l, "device_reset_ns", buf, sizeof buf)) < 0)
		return -1;
	if (rc == 1) {
		if (!meta_number(buf, &v)) {
			um_errmsg(l->err, l->errlen, "%s: meta device_reset_ns '%s' is not a time in ns", t->path,
				  buf);
			return -1;
		}
		t->device_reset_ns = (int64_t)v;
	}
	if (meta_get(l, "device_name", buf, sizeof buf) < 0)
		return -1;
	t->device_name = strdup(buf);
	if (meta_get(l, "status", buf, sizeof buf) < 0)
		return -1;
	t->status = strdup(buf);

	/* The command line can be long: read it whole. */
	sqlite3_stmt *st;
	if (prepare(l, "SELECT value FROM meta WHERE key = 'command'", &st))
		return -1;
	rc = sqlite3_step(st);
	t->command = dup_text(rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL);
	if (step_failed(l, rc == SQLITE_ROW ? SQLITE_DONE : rc, st))
		return -1;
	if (!t->device_name || !t->status || !t->command)
		return oom(l);
	return 0;
}

static int load_strings(struct loader *l)
{
	struct trace *t = l->t;
	sqlite3_stmt *st;
	if (prepare(l, "SELECT id, value FROM string ORDER BY id", &st))
		return -1;
	struct grow ids = { .elem = sizeof(int64_t) }, strs = { .elem = sizeof(char *) };
	int rc;
	bool refused = false;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* An id that is no integer (a table rebuilt by hand) would be
		 * read as 0, out of the order the lookups search in, and the
		 * kernels it names planned under the name "?". */
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER) {
			refuse_not_integer(l, "string", st, 0);
			refused = true;
			break;
		}
		int64_t *id = grow_push(&ids);
		char **str = grow_push(&strs);
		if (!id || !str || !(*str = dup_text(sqlite3_column_text(st, 1)))) {
			if (str)
				strs.n--; /* the slot holds no string */
			sqlite3_finalize(st);
			t->string_ids = ids.data;
			t->strings = strs.data;
			t->n_strings = strs.n;
			return oom(l);
		}
		*id = sqlite3_column_int64(st, 0);
	}
	t->string_ids = ids.data;
	t->strings = strs.data;
	t->n_strings = strs.n;
	if (refused) {
		sqlite3_finalize(st);
		return -1;
	}
	if (step_failed(l, rc, st))
		return -1;
	/* By id: a repeat is the string before. */
	for (size_t i = 1; i < t->n_strings; i++)
		if (t->string_ids[i] == t->string_ids[i - 1]) {
			um_errmsg(l->err, l->errlen, "%s: string %lld appears more than once: not a trace umrec wrote",
				  t->path, (long long)t->string_ids[i]);
			return -1;
		}
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* An allocation's fields alone: a trace may hold close to a million, so 8
 * bytes more (a flag, with its padding) are 6 MiB more of umplan's peak
 * over bench/plan_1m.sh's trace. What else is known of one is kept apart
 * (alloc_rows). */
_Static_assert(sizeof(struct trace_alloc) == 6 * sizeof(uint64_t), "an allocation's row has no padding");

/* What alloc_row learns that the rows do not hold. */
struct alloc_rows {
	struct grow managed_ids; /* trace.managed_alloc_ids */
	bool out_of_memory;      /* managed_ids could not grow */
};

static bool alloc_row(void *ctx, sqlite3_stmt *st, void *slot)
{
	struct alloc_rows *ar = ctx;
	struct trace_alloc *a = slot;
	a->id = (uint64_t)sqlite3_column_int64(st, 0);
	a->address = (uint64_t)sqlite3_column_int64(st, 1);
	a->size = (uint64_t)sqlite3_column_int64(st, 2);
	a->reserved = (uint64_t)sqlite3_column_int64(st, 3);
	a->alloc_ns = sqlite3_column_int64(st, 4);
	a->free_ns = col_ns(st, 5, TRACE_NS_NEVER);
	if (a->free_ns < a->alloc_ns)
		a->free_ns = a->alloc_ns;
	if (sqlite3_column_int(st, 6)) {
		uint64_t *id = grow_push(&ar->managed_ids);
		if (id)
			*id = a->id;
		else
			ar->out_of_memory = true;
	}
	return true;
}

/* What the recorder writes for an allocation: an ordinal from 1, a size
 * reserved up to the next 2 MiB at most, a range that fits the address
 * space. Anything else would be planned as nonsense. */
static int check_alloc(struct loader *l, const struct trace_alloc *a)
{
	const char *bad = a->id == 0 || a->id > INT64_MAX      ? "an id below 1"
			  : a->size > INT64_MAX                  ? "a negative size"
			  : a->reserved < a->size                ? "less reserved than its size"
			  : a->reserved - a->size >= ARENA_BLOCK_SIZE ? "2 MiB or more reserved beyond its size"
			  : a->address > INT64_MAX - a->reserved  ? "a range past the address space"
								  : NULL;
	if (!bad)
		return 0;
	um_errmsg(l->err, l->errlen,
		  "%s: allocation %lld has %s (address %lld, size %lld, reserved %lld): not a trace umrec wrote",
		  l->t->path, (long long)a->id, bad, (long long)a->address, (long long)a->size,
		  (long long)a->reserved);
	return -1;
}

/* More memory than the allocations of any real run add up to, and little
 * enough that the planner's residency sums cannot overflow. */
#define TRACE_MAX_ALLOC_BYTES ((uint64_t)1 << 60)

static int load_allocs(struct loader *l)
{
	void *rows;
	struct alloc_rows ar = { { .elem = sizeof(uint64_t) }, false };
	int rc = load_rows(l, "alloc", "SELECT id, address, size, reserved, alloc_ns, free_ns, api = '" TRACE_API_MANAGED
			   "' FROM alloc ORDER BY id",
			   sizeof(struct trace_alloc), alloc_row, &ar, &rows, &l->t->n_allocs);
	l->t->managed_alloc_ids = ar.managed_ids.data;
	l->t->n_managed_allocs = ar.managed_ids.n;
	if (rc)
		return -1;
	l->t->allocs = rows;
	if (ar.out_of_memory)
		return oom(l);
	uint64_t total = 0;
	for (size_t i = 0; i < l->t->n_allocs; i++) {
		if (check_alloc(l, &l->t->allocs[i]))
			return -1;
		/* By id: a repeat is the row before. (A table rebuilt by hand
		 * may have lost its primary key.) */
		if (i && l->t->allocs[i].id == l->t->allocs[i - 1].id) {
			um_errmsg(l->err, l->errlen, "%s: allocation %lld appears more than once: not a trace umrec wrote",
				  l->t->path, (long long)l->t->allocs[i].id);
			return -1;
		}
		total += l->t->allocs[i].reserved; /* each below 2^63: no wrap before the check */
		if (total > TRACE_MAX_ALLOC_BYTES) {
			um_errmsg(l->err, l->errlen,
				  "%s: the allocations reserve more than 2^60 bytes in all (by allocation %lld): "
				  "not a trace umrec wrote",
				  l->t->path, (long long)l->t->allocs[i].id);
			return -1;
		}
	}
	return 0;
}

/* The allocation index whose ordinal is id, or -1. */
static long trace_alloc_index(const struct trace *t, uint64_t id)
{
	/* Ordinals are dense (1, 2, ...) in a well-formed trace: try the
	 * direct slot before searching. */
	if (id >= 1 && id <= t->n_allocs && t->allocs[id - 1].id == id)
		return (long)(id - 1);
	size_t lo = lower_bound_u64(t->allocs, t->n_allocs, SEARCH_FIELD(struct trace_alloc, id), id);
	return lo < t->n_allocs && t->allocs[lo].id == id ? (long)lo : -1;
}

/* (correlation id, kernel position) pairs, to attach argument rows, which
 * come in correlation-id order, to kernels, which are kept in seq order. */
struct corr_pos {
	uint64_t corr;
	uint64_t pos;
};

struct seq_row {
	int64_t seq;
	uint64_t corr;
	struct trace_kernel k;
};

/* The kernel and its two keys, nothing else: a million rows are read and
 * sorted at once, so 8 bytes more a row (a flag, with its padding) are
 * 8 MiB more of umplan's peak (bench/plan_1m.sh). What is known of a row
 * beyond its kernel is kept apart (kernel_rows). */
_Static_assert(sizeof(struct seq_row) == 2 * sizeof(uint64_t) + sizeof(struct trace_kernel),
	       "a kernel's row holds its kernel, seq and correlation ID alone");

static int cmp_seq_row(const void *a, const void *b)
{
	int64_t x = ((const struct seq_row *)a)->seq, y = ((const struct seq_row *)b)->seq;
	return (x > y) - (x < y);
}

static int cmp_corr_pos(const void *a, const void *b)
{
	uint64_t x = ((const struct corr_pos *)a)->corr, y = ((const struct corr_pos *)b)->corr;
	return (x > y) - (x < y);
}

/* The index of the string with id in the string table, n_strings when there
 * is none. */
static size_t string_index(const struct trace *t, uint32_t id)
{
	size_t i = lower_bound_i64(t->string_ids, t->n_strings, sizeof *t->string_ids, 0, id);
	return i < t->n_strings && t->string_ids[i] == (int64_t)id ? i : t->n_strings;
}

/* What kernel_row needs: the trace, whose strings are loaded, and a cache
 * of each string's hash state (by index; 0: not yet computed): kernel
 * names are long and few. And what it learns that the rows do not hold. */
struct kernel_rows {
	struct trace *t;
	uint64_t *name_states;
	bool graphs_apart; /* the trace has graph_kernel */
	/* The first kernel in launch order (the least seq) launched at or
	 * after the device's reset, if one was (reset_seen): it and every
	 * kernel after it are left out. */
	bool reset_seen;
	int64_t reset_seq;
	/* The seq of each kernel of another context than the arena's, left
	 * out of the rows (8 bytes each, where a row takes 64; none in a
	 * one-GPU trace): whether one counts as another context's or as after
	 * the reset is known once every row is read. */
	struct grow other_seqs;
	bool out_of_memory; /* other_seqs could not grow */
	struct bad_name bad_name;
};

/* The shape ID of the launch in the row at st (columns 7-13: grid, block,
 * shared memory) of the kernel named by string id name. */
static uint64_t shape_of(struct kernel_rows *kr, sqlite3_stmt *st, uint32_t name)
{
	size_t i = string_index(kr->t, name);
	bool known = i < kr->t->n_strings;
	const char *text = known ? kr->t->strings[i] : "?";
	struct execid_launch l = { text, known ? kr->name_states[i] : 0, { 0 }, { 0 },
				   (uint32_t)sqlite3_column_int64(st, 13), NULL, 0 };
	for (int d = 0; d < 3; d++) {
		l.grid[d] = (uint32_t)sqlite3_column_int64(st, 7 + d);
		l.block[d] = (uint32_t)sqlite3_column_int64(st, 10 + d);
	}
	if (known && !kr->name_states[i])
		l.name_state = kr->name_states[i] = execid_name_state(text);
	return execid_shape_of(&l);
}

/* The kernels CUDA graphs ran, in graph_kernel (none in a trace without
 * it): counted, not planned (no launch order). */
static int count_graph_kernels(struct loader *l)
{
	uint64_t n;
	if (trace_schema_count(l->db, "graph_kernel", &n) != 0) {
		um_errmsg(l->err, l->errlen, "%s: graph_kernel: %s", l->t->path, trace_schema_errmsg(l->db));
		return -1;
	}
	l->t->graph_kernels += (size_t)n;
	return 0;
}

/* Whether a time (TRACE_NS_NONE: unknown, not after) is at or after the
 * program's device reset: from then on its memory was not the arena's,
 * so what ran or moved then is left out. */
static bool after_reset(const struct trace *t, int64_t ns)
{
	return t->device_reset_ns != TRACE_NS_NONE && ns >= t->device_reset_ns;
}

/* Whether the kernel at seq was launched before the first launch at or
 * after the device's reset (every kernel was when none came after it). */
static bool before_reset_launch(const struct kernel_rows *kr, int64_t seq)
{
	return !kr->reset_seen || seq < kr->reset_seq;
}

/* Kernels without seq are counted, not kept: in a trace without
 * graph_kernel they are the kernels graphs ran (one per graph launch);
 * with it, kernels no launch callback showed (graph_kernel holds the
 * graphs'). The table decides, not the version: traces of session 43
 * before the version became 2 have it. */
static bool kernel_row(void *ctx, sqlite3_stmt *st, void *slot)
{
	struct kernel_rows *kr = ctx;
	struct seq_row *r = slot;
	if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
		if (kr->graphs_apart)
			kr->t->unlaunched_kernels++;
		else
			kr->t->graph_kernels++;
		return false;
	}
	r->seq = sqlite3_column_int64(st, 1);
	r->k.launch_ns = col_ns(st, 4, TRACE_NS_NONE);
	if (after_reset(kr->t, r->k.launch_ns) && before_reset_launch(kr, r->seq)) {
		kr->reset_seen = true;
		kr->reset_seq = r->seq;
	}
	/* Column 14, the stream's context, is there when the arena's is known
	 * (NULL: a stream without a row, or a kernel without a stream). */
	if (kr->t->arena_context_id >= 0 && sqlite3_column_type(st, 14) != SQLITE_NULL &&
	    sqlite3_column_int64(st, 14) != kr->t->arena_context_id) {
		int64_t *seq = grow_push(&kr->other_seqs);
		if (seq)
			*seq = r->seq;
		else
			kr->out_of_memory = true;
		return false;
	}
	r->corr = (uint64_t)sqlite3_column_int64(st, 0);
	r->k.exec_id = (uint64_t)sqlite3_column_int64(st, 2);
	r->k.name = name_id(st, 3, &kr->bad_name);
	r->k.start_ns = col_ns(st, 5, TRACE_NS_NONE);
	r->k.end_ns = col_ns(st, 6, TRACE_NS_NONE);
	r->k.shape_id = shape_of(kr, st, r->k.name);
	return true;
}

/* Whether a seq is in both or twice in one of rows (n, sorted by seq) and
 * other (m, sorted): the first such in *seq. */
static bool seq_repeated(const struct seq_row *rows, size_t n, const int64_t *other, size_t m, int64_t *seq)
{
	size_t i = 0, j = 0;
	for (bool first = true; i < n || j < m; first = false) {
		int64_t s = j == m || (i < n && rows[i].seq < other[j]) ? rows[i++].seq : other[j++];
		if (!first && s == *seq)
			return true;
		*seq = s;
	}
	return false;
}

static int load_kernels(struct loader *l, struct corr_pos **by_corr)
{
	struct trace *t = l->t;
	struct kernel_rows kr = { t, calloc(t->n_strings ? t->n_strings : 1, sizeof *kr.name_states),
				  trace_schema_has_table(l->db, "graph_kernel"), false, 0,
				  { .elem = sizeof(int64_t) }, false, { false, 0 } };
	if (!kr.name_states)
		return oom(l);
	void *data = NULL;
	size_t n;
	/* Rowid (correlation id) order is a plain table scan, much faster than
	 * walking the seq index; sorting a million rows in memory is cheap.
	 * With the arena's context known, each kernel's stream's context too. */
	const char *sql = t->arena_context_id < 0
				  ? "SELECT correlation_id, seq, exec_id, name_id, launch_ns, start_ns, end_ns, grid_x, "
				    "grid_y, grid_z, block_x, block_y, block_z, shared_mem FROM kernel"
				  : "SELECT correlation_id, seq, exec_id, name_id, launch_ns, start_ns, end_ns, grid_x, "
				    "grid_y, grid_z, block_x, block_y, block_z, shared_mem, s.context_id AS "
				    "\"stream.context_id\" FROM kernel LEFT JOIN stream s ON s.id = kernel.stream_id";
	int rc = load_rows(l, "kernel", sql, sizeof(struct seq_row), kernel_row, &kr, &data, &n);
	free(kr.name_states);
	if (!rc && kr.out_of_memory)
		rc = oom(l);
	if (!rc && kr.bad_name.seen)
		rc = refuse_name(l, "kernel", &kr.bad_name);
	if (!rc)
		rc = count_graph_kernels(l);
	if (rc) {
		free(data);
		free(kr.other_seqs.data);
		return -1;
	}
	/* From the first launch after the device's reset on (in launch order),
	 * the kernels are counted, not kept (one without a launch time among
	 * them too). Before it another context's kernels (another GPU's, or a
	 * context of the program's own) are counted, not kept: they ran in
	 * memory the arena does not serve. After a reset the device's context
	 * is a new one, whose kernels count as after the reset. */
	int64_t *other_seqs = kr.other_seqs.data;
	for (size_t i = 0; i < kr.other_seqs.n; i++)
		if (before_reset_launch(&kr, other_seqs[i]))
			t->other_context_kernels++;
		else
			t->after_reset_kernels++;
	/* A seq twice (a kernel table rebuilt by hand, its UNIQUE lost) leaves
	 * the launch order unknown: the two kernels would be planned in
	 * whichever order the sort left them. Sorted before the kernels after
	 * the reset are left out, so that a repeat among those is seen too. */
	struct seq_row *rows = data;
	sort_rows(rows, n, sizeof *rows, cmp_seq_row);
	sort_rows(other_seqs, kr.other_seqs.n, sizeof *other_seqs, cmp_i64);
	int64_t seq = 0;
	bool repeated = seq_repeated(rows, n, other_seqs, kr.other_seqs.n, &seq);
	free(other_seqs);
	if (repeated) {
		free(rows);
		um_errmsg(l->err, l->errlen, "%s: kernel seq %lld appears more than once: not a trace umrec wrote",
			  t->path, (long long)seq);
		return -1;
	}
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (before_reset_launch(&kr, rows[i].seq))
			rows[kept++] = rows[i];
	t->after_reset_kernels += n - kept;
	n = kept;
	t->kernels = malloc((n ? n : 1) * sizeof *t->kernels);
	*by_corr = malloc((n ? n : 1) * sizeof **by_corr);
	if (!t->kernels || !*by_corr) {
		free(rows);
		return oom(l);
	}
	int64_t last_launch = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		struct trace_kernel k = rows[i].k;
		if (k.launch_ns == TRACE_NS_NONE || k.launch_ns < last_launch) {
			if (k.launch_ns != TRACE_NS_NONE)
				t->launch_reordered = true;
			k.launch_ns = last_launch == INT64_MIN ? 0 : last_launch;
		}
		last_launch = k.launch_ns;
		/* 0 is CUPTI's "not collected", which recorders before session 48
		 * stored as a time (a forced flush of a kernel still queued). */
		if (k.start_ns <= 0 || k.end_ns == TRACE_NS_NONE || k.end_ns < k.start_ns) {
			t->untimed_kernels++;
			k.start_ns = k.end_ns = TRACE_NS_NONE;
		}
		t->kernels[i] = k;
		(*by_corr)[i] = (struct corr_pos){ rows[i].corr, i };
	}
	t->n_kernels = n;
	free(rows);
	sort_rows(*by_corr, n, sizeof **by_corr, cmp_corr_pos);
	for (size_t i = 1; i < n; i++)
		if ((*by_corr)[i].corr == (*by_corr)[i - 1].corr) {
			um_errmsg(l->err, l->errlen,
				  "%s: kernel %llu (correlation_id) appears more than once: not a trace umrec wrote",
				  t->path, (unsigned long long)(*by_corr)[i].corr);
			return -1;
		}
	return 0;
}

/* The index of the first of by_corr's n entries whose correlation id is at
 * least corr (n when none is). */
static size_t first_corr_at_least(const struct corr_pos *by_corr, size_t n, uint64_t corr)
{
	return lower_bound_u64(by_corr, n, SEARCH_FIELD(struct corr_pos, corr), corr);
}

/* Where argument rows go: each to its kernel's position (by_corr), ci the
 * position the previous row found. */
struct arg_rows {
	const struct trace *t;
	const struct corr_pos *by_corr;
	size_t ci;
};

/* An argument as (kernel position, allocation index); dangling references
 * (foreign keys are not enforced) and graph kernels' arguments are left out. */
static bool arg_row(void *ctx, sqlite3_stmt *st, void *slot)
{
	struct arg_rows *a = ctx;
	const struct trace *t = a->t;
	uint64_t corr = (uint64_t)sqlite3_column_int64(st, 0);
	long ai = trace_alloc_index(t, (uint64_t)sqlite3_column_int64(st, 1));
	if (ai < 0)
		return false;
	if (a->ci < t->n_kernels && a->by_corr[a->ci].corr > corr) /* not primary-key order */
		a->ci = first_corr_at_least(a->by_corr, t->n_kernels, corr);
	while (a->ci < t->n_kernels && a->by_corr[a->ci].corr < corr)
		a->ci++;
	if (a->ci == t->n_kernels || a->by_corr[a->ci].corr != corr)
		return false;
	uint32_t *p = slot;
	p[0] = (uint32_t)a->by_corr[a->ci].pos;
	p[1] = (uint32_t)ai;
	return true;
}

static int load_args(struct loader *l, const struct corr_pos *by_corr)
{
	struct trace *t = l->t;
	struct arg_rows ctx = { t, by_corr, 0 };
	void *data;
	size_t n_pairs;
	/* Primary-key order, asked for: left to itself SQLite scans the
	 * smaller alloc_id index, whose order makes the merge below jump back
	 * for nearly every row. In correlation-id order one merge pass against
	 * by_corr finds each row's kernel. */
	if (load_rows(l, "kernel_arg", "SELECT correlation_id, alloc_id FROM kernel_arg ORDER BY correlation_id, param_offset",
		      2 * sizeof(uint32_t), arg_row, &ctx, &data, &n_pairs))
		return -1;
	/* Counting sort into CSR by kernel position. */
	uint32_t *pairs = data;
	t->arg_first = calloc(t->n_kernels + 1, sizeof *t->arg_first);
	t->arg_alloc = malloc((n_pairs ? n_pairs : 1) * sizeof *t->arg_alloc);
	if (!t->arg_first || !t->arg_alloc) {
		free(pairs);
		return oom(l);
	}
	for (size_t i = 0; i < n_pairs; i++)
		t->arg_first[pairs[2 * i] + 1]++;
	for (size_t k = 0; k < t->n_kernels; k++)
		t->arg_first[k + 1] += t->arg_first[k];
	uint32_t *fill = malloc((t->n_kernels + 1) * sizeof *fill);
	if (!fill) {
		free(pairs);
		return oom(l);
	}
	memcpy(fill, t->arg_first, (t->n_kernels + 1) * sizeof *fill);
	for (size_t i = 0; i < n_pairs; i++)
		t->arg_alloc[fill[pairs[2 * i]]++] = pairs[2 * i + 1];
	free(fill);
	free(pairs);
	/* Sort and deduplicate each kernel's list (a tensor passed twice is
	 * one access). Lists are short: insertion sort. */
	size_t out = 0;
	for (size_t k = 0; k < t->n_kernels; k++) {
		uint32_t b = t->arg_first[k], e = t->arg_first[k + 1];
		uint32_t *a = t->arg_alloc + b;
		for (uint32_t i = 1; i < e - b; i++) {
			uint32_t v = a[i], j = i;
			while (j > 0 && a[j - 1] > v) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = v;
		}
		t->arg_first[k] = (uint32_t)out;
		for (uint32_t i = 0; i < e - b; i++)
			if (i == 0 || a[i] != a[i - 1])
				t->arg_alloc[out++] = a[i];
	}
	t->arg_first[t->n_kernels] = (uint32_t)out;
	t->n_args = out;
	return 0;
}

static int cmp_mig(const void *a, const void *b)
{
	const struct trace_migration *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	if (x->address != y->address)
		return (x->address > y->address) - (x->address < y->address);
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* What migration_row learns that the rows do not hold: the first row whose
 * bytes no migration moves (why, or NULL), or the direction whose total
 * would wrap (or NULL). */
struct migration_rows {
	struct trace *t;
	const char *bad;
	int64_t bad_bytes;
	const char *wrapped;
};

/* Adds bytes (at most 2^60) to *total; false where that would pass 2^64. */
static bool add_bytes(uint64_t *total, uint64_t bytes)
{
	if (*total > UINT64_MAX - bytes)
		return false;
	*total += bytes;
	return true;
}

/* Totals of every migration; only on-demand (fault) HtoD ones are kept.
 * The totals are the report's UM traffic: a negative count (a table
 * rebuilt by hand) would be added as 2^64 less it, and printed as
 * exabytes, or wrap the sum back to a plausible size. */
static bool migration_row(void *ctx, sqlite3_stmt *st, void *slot)
{
	struct migration_rows *mr = ctx;
	struct trace *t = mr->t;
	if (mr->bad || mr->wrapped)
		return false; /* refused (load_migrations) */
	/* One migration of more than the allocations may reserve in all is
	 * no count either. */
	int64_t n = sqlite3_column_int64(st, 2);
	mr->bad = n < 0 ? "below 0" : (uint64_t)n > TRACE_MAX_ALLOC_BYTES ? "more than 2^60" : NULL;
	if (mr->bad) {
		mr->bad_bytes = n;
		return false;
	}
	if (after_reset(t, sqlite3_column_int64(st, 0)))
		return false;
	uint64_t bytes = (uint64_t)n;
	bool htod = sqlite3_column_int(st, 3), fault = sqlite3_column_int(st, 5);
	if (htod ? !add_bytes(&t->htod_bytes, bytes)
		 : sqlite3_column_int(st, 4) && !add_bytes(&t->dtoh_bytes, bytes)) {
		mr->wrapped = htod ? "to the GPU" : "to the host";
		return false;
	}
	if (!htod || !fault)
		return false;
	t->fault_bytes += bytes; /* part of htod_bytes */
	struct trace_migration *m = slot;
	m->start_ns = sqlite3_column_int64(st, 0);
	m->address = (uint64_t)sqlite3_column_int64(st, 1);
	m->bytes = bytes;
	return true;
}

static bool fault_row(void *trace, sqlite3_stmt *st, void *slot)
{
	if (after_reset(trace, sqlite3_column_int64(st, 0)))
		return false;
	struct trace_migration *m = slot;
	m->start_ns = sqlite3_column_int64(st, 0);
	m->address = (uint64_t)sqlite3_column_int64(st, 1);
	m->bytes = 0;
	return true;
}

static int load_migrations(struct loader *l)
{
	struct trace *t = l->t;
	struct migration_rows mr = { t, NULL, 0, NULL };
	void *rows;
	if (load_rows(l, "migration",
		      "SELECT start_ns, address, bytes, direction = 'htod', direction = 'dtoh', cause = 'fault' FROM migration",
		      sizeof(struct trace_migration), migration_row, &mr, &rows, &t->n_fault_migrations))
		return -1;
	t->fault_migrations = rows;
	if (mr.bad) {
		um_errmsg(l->err, l->errlen, "%s: a row of migration has bytes %lld, %s: not a trace umrec wrote",
			  t->path, (long long)mr.bad_bytes, mr.bad);
		return -1;
	}
	if (mr.wrapped) {
		um_errmsg(l->err, l->errlen,
			  "%s: the migrations %s move 2^64 bytes or more in all: not a trace umrec wrote", t->path,
			  mr.wrapped);
		return -1;
	}
	sort_rows(t->fault_migrations, t->n_fault_migrations, sizeof(struct trace_migration), cmp_mig);
	if (load_rows(l, "fault", "SELECT start_ns, address FROM fault", sizeof(struct trace_migration),
		      fault_row, t, &rows, &t->n_faults))
		return -1;
	t->faults = rows;
	sort_rows(t->faults, t->n_faults, sizeof(struct trace_migration), cmp_mig);
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* The position of the first kernel launched after the API call with
 * correlation id corr (kernels' ids come from the same counter). */
static size_t position_after_call(const struct trace *t, const struct corr_pos *by_corr, uint64_t corr)
{
	size_t i = first_corr_at_least(by_corr, t->n_kernels, corr);
	return i < t->n_kernels ? by_corr[i].pos : t->n_kernels;
}

static int cmp_alloc_write(const void *a, const void *b)
{
	const struct trace_alloc_write *x = a, *y = b;
	if (x->alloc_id != y->alloc_id)
		return (x->alloc_id > y->alloc_id) - (x->alloc_id < y->alloc_id);
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The copies and memsets that may write device memory, each with its
 * destination's allocation where write_dst gives it (a trace older than
 * version 3 has none): -1 with no row there, NULL in the row (none of the
 * arena's). */
static const char writes_sql[] =
	"SELECT w.correlation_id, w.start_ns, CASE WHEN d.correlation_id IS NULL THEN -1 ELSE d.alloc_id END "
	"FROM (SELECT correlation_id, start_ns FROM memcpy WHERE kind NOT IN ('dtoh', 'htoh') "
	"UNION ALL SELECT correlation_id, start_ns FROM memset) w "
	"LEFT JOIN write_dst d ON d.correlation_id = w.correlation_id";
static const char writes_sql_v2[] =
	"SELECT correlation_id, start_ns, -1 FROM memcpy WHERE kind NOT IN ('dtoh', 'htoh') "
	"UNION ALL SELECT correlation_id, start_ns, -1 FROM memset";

static int load_writes(struct loader *l, const struct corr_pos *by_corr)
{
	struct trace *t = l->t;
	sqlite3_stmt *st;
	if (prepare(l, trace_schema_has_table(l->db, "write_dst") ? writes_sql : writes_sql_v2, &st))
		return -1;
	struct grow gp = { .elem = sizeof(size_t) }, gn = { .elem = sizeof(int64_t) },
		    ga = { .elem = sizeof(struct trace_alloc_write) };
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 1) != SQLITE_NULL && after_reset(t, sqlite3_column_int64(st, 1)))
			continue;
		if (sqlite3_column_type(st, 2) == SQLITE_NULL)
			continue; /* into none of the arena's allocations */
		bool placed = sqlite3_column_type(st, 0) != SQLITE_NULL;
		bool known = sqlite3_column_int64(st, 2) >= 0;
		void *p = grow_push(known ? &ga : placed ? &gp : &gn);
		if (!p) {
			sqlite3_finalize(st);
			free(gp.data);
			free(gn.data);
			free(ga.data);
			return oom(l);
		}
		size_t pos = placed ? position_after_call(t, by_corr, (uint64_t)sqlite3_column_int64(st, 0)) : 0;
		if (known)
			*(struct trace_alloc_write *)p =
				(struct trace_alloc_write){ (uint64_t)sqlite3_column_int64(st, 2), pos };
		else if (placed)
			*(size_t *)p = pos;
		else
			*(int64_t *)p = sqlite3_column_int64(st, 1);
	}
	t->write_pos = gp.data;
	t->n_write_pos = gp.n;
	t->write_ns = gn.data;
	t->n_write_ns = gn.n;
	t->alloc_writes = ga.data;
	t->n_alloc_writes = ga.n;
	if (step_failed(l, rc, st))
		return -1;
	sort_rows(t->write_pos, t->n_write_pos, sizeof(size_t), cmp_size);
	sort_rows(t->write_ns, t->n_write_ns, sizeof(int64_t), cmp_i64);
	sort_rows(t->alloc_writes, t->n_alloc_writes, sizeof(struct trace_alloc_write), cmp_alloc_write);
	return 0;
}

static int cmp_nvtx(const void *a, const void *b)
{
	const struct trace_nvtx *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	if (x->end_ns != y->end_ns)
		return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns); /* outer first */
	return (x->name > y->name) - (x->name < y->name);
}

struct nvtx_rows {
	const struct trace *t;
	struct bad_name bad_name;
};

static bool nvtx_row(void *ctx, sqlite3_stmt *st, void *slot)
{
	struct nvtx_rows *nr = ctx;
	struct trace_nvtx *r = slot;
	r->start_ns = sqlite3_column_int64(st, 1);
	if (after_reset(nr->t, r->start_ns))
		return false;
	r->name = name_id(st, 0, &nr->bad_name);
	r->end_ns = col_ns(st, 2, TRACE_NS_NEVER);
	return true;
}

static int load_nvtx(struct loader *l)
{
	struct trace *t = l->t;
	struct nvtx_rows nr = { t, { false, 0 } };
	void *rows;
	if (load_rows(l, "nvtx_range", "SELECT name_id, start_ns, end_ns FROM nvtx_range", sizeof(struct trace_nvtx),
		      nvtx_row, &nr, &rows, &t->n_nvtx))
		return -1;
	t->nvtx = rows;
	if (nr.bad_name.seen)
		return refuse_name(l, "nvtx_range", &nr.bad_name);
	sort_rows(t->nvtx, t->n_nvtx, sizeof(struct trace_nvtx), cmp_nvtx);
	return 0;
}

struct trace *trace_load(const char *path, char *err, size_t errlen)
{
	struct trace *t = calloc(1, sizeof *t);
	if (!t || !(t->path = strdup(path))) {
		free(t);
		um_errmsg(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	struct loader l = { NULL, t, err, errlen };
	if (trace_schema_open(path, &l.db, err, errlen)) {
		trace_free(t);
		return NULL;
	}
	struct corr_pos *by_corr = NULL;
	int rc = load_meta(&l);
	if (!rc)
		rc = load_strings(&l);
	if (!rc)
		rc = load_allocs(&l);
	if (!rc)
		rc = load_kernels(&l, &by_corr);
	if (!rc)
		rc = load_args(&l, by_corr);
	if (!rc)
		rc = load_migrations(&l);
	if (!rc)
		rc = load_writes(&l, by_corr);
	if (!rc)
		rc = load_nvtx(&l);
	free(by_corr);
	sqlite3_close(l.db);
	if (rc) {
		trace_free(t);
		return NULL;
	}
	return t;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	free(t->path);
	free(t->kernels);
	free(t->arg_first);
	free(t->arg_alloc);
	free(t->allocs);
	free(t->managed_alloc_ids);
	free(t->fault_migrations);
	free(t->faults);
	free(t->write_pos);
	free(t->write_ns);
	free(t->alloc_writes);
	free(t->nvtx);
	for (size_t i = 0; i < t->n_strings; i++)
		free(t->strings[i]);
	free(t->strings);
	free(t->string_ids);
	free(t->device_name);
	free(t->command);
	free(t->status);
	free(t);
}

const char *trace_string(const struct trace *t, uint32_t id)
{
	size_t i = string_index(t, id);
	return i < t->n_strings ? t->strings[i] : "?";
}

bool trace_host_writes(const struct trace *t, const struct trace_alloc *a)
{
	size_t i = lower_bound_u64(t->managed_alloc_ids, t->n_managed_allocs, sizeof(uint64_t), 0, a->id);
	return i < t->n_managed_allocs && t->managed_alloc_ids[i] == a->id;
}

size_t trace_position_at(const struct trace *t, int64_t ns)
{
	return lower_bound_i64(t->kernels, t->n_kernels, SEARCH_FIELD(struct trace_kernel, launch_ns), ns);
}

bool trace_write_between(const struct trace *t, const struct trace_alloc *a, size_t from_pos, size_t to_pos,
			 int64_t from_ns, int64_t to_ns)
{
	/* An allocation's writes are few: its run is walked. */
	for (size_t i = lower_bound_u64(t->alloc_writes, t->n_alloc_writes,
					SEARCH_FIELD(struct trace_alloc_write, alloc_id), a->id);
	     i < t->n_alloc_writes && t->alloc_writes[i].alloc_id == a->id && t->alloc_writes[i].pos <= to_pos; i++)
		if (t->alloc_writes[i].pos >= from_pos)
			return true;
	size_t lo = lower_bound_u64(t->write_pos, t->n_write_pos, sizeof *t->write_pos, 0, from_pos);
	if (lo < t->n_write_pos && t->write_pos[lo] <= to_pos)
		return true;
	lo = lower_bound_i64(t->write_ns, t->n_write_ns, sizeof *t->write_ns, 0, from_ns);
	return lo < t->n_write_ns && t->write_ns[lo] <= to_ns;
}
