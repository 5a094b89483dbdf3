/* Unit tests for the small common helpers: sizes, pitched layouts and
 * execution IDs. */
#include "testutil.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <stdatomic.h>

#include "addr_set.h"
#include "execid.h"
#include "gate.h"
#include "grow.h"
#include "launch_view.h"
#include "log.h"
#include "pitch.h"
#include "replace_file.h"
#include "search.h"
#include "set_aside.h"
#include "size.h"
#include "thread.h"
#include "thread_scratch.h"

static void size_parses_units(void **state)
{
	uint64_t v;
	assert_int_equal(um_size_parse("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(um_size_parse("8G", &v), 0);
	assert_int_equal(v, 8ULL << 30);
	assert_int_equal(um_size_parse("512MiB", &v), 0);
	assert_int_equal(v, 512ULL << 20);
	assert_int_equal(um_size_parse("1.5gb", &v), 0);
	assert_int_equal(v, 3ULL << 29);
	assert_int_equal(um_size_parse("2k", &v), 0);
	assert_int_equal(v, 2048);
}

static void size_rejects_junk(void **state)
{
	uint64_t v = 7;
	const char *bad[] = { "", "-1G", "G", "12X", "1.2.3", " 5", "1e30T", "nan", "inf" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(um_size_parse(bad[i], &v), -1);
	assert_int_equal(v, 7);
}

/* Only what docs/cli.md lists is a size: decimal digits, an optional
 * fraction and a unit. strtod's other forms (hex, exponents, a sign,
 * inf and nan) are not, however they would round. */
static void size_takes_only_decimal_numbers(void **state)
{
	uint64_t v = 7;
	const char *bad[] = { "0x1p30", "0X40000000", "0x10G", "1e3", "1E3G", "+4G", "inf",
			      "infinity", "nan", "NaN", "5.", ".5G", "1,5G", "4 G", "4G " };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (um_size_parse(bad[i], &v) != UM_SIZE_NOT_A_SIZE)
			fail_msg("'%s' is taken for a size", bad[i]);
	assert_int_equal(v, 7);
	assert_int_equal(um_size_parse("0.5K", &v), UM_SIZE_OK);
	assert_int_equal(v, 512);
	assert_int_equal(um_size_parse("1.25MiB", &v), UM_SIZE_OK);
	assert_int_equal(v, 5ULL << 18);
	assert_int_equal(um_size_parse("007G", &v), UM_SIZE_OK);
	assert_int_equal(v, 7ULL << 30);
	assert_int_equal(um_size_parse("2.000000000000000000000000001G", &v), UM_SIZE_OK);
	assert_int_equal(v, 2ULL << 30);
}

/* A fraction of a byte is dropped, never rounded up into a byte more:
 * exactly so for any digits (a double of them was a byte over for
 * 0.806286T, whose 886520832312.9 bytes it made ...313). */
static void size_drops_a_fraction_of_a_byte(void **state)
{
	uint64_t v;
	const struct {
		const char *text;
		uint64_t bytes;
	} cases[] = {
		{ "0.806286T", 886520832312ULL },
		{ "0.99999999999999999999", 0 },
		{ "1.99999999999999999999", 1 },
		{ "0.49999999999999999999999999999999999999999999K", 511 },
		{ "0.5K", 512 },
		{ "0.0009765625K", 1 },
		{ "0.00097656249999999999999999999999999999999999999999K", 0 },
		{ "1.3T", 1429365116108ULL },
		{ "16777215.99999999999999999999T", UINT64_MAX },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (um_size_parse(cases[i].text, &v) != UM_SIZE_OK)
			fail_msg("'%s' is not taken", cases[i].text);
		if (v != cases[i].bytes)
			fail_msg("'%s' is %llu bytes, not %llu", cases[i].text, (unsigned long long)v,
				 (unsigned long long)cases[i].bytes);
	}
}

/* A size past 2^64 - 1 bytes is a size, too large: not "not a size". */
static void size_too_large_is_its_own_error(void **state)
{
	uint64_t v = 7;
	const char *huge[] = { "99999999999999999999G", "18446744073709551616", "16777216T",
			       "99999999999999999999999999" };
	for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++)
		if (um_size_parse(huge[i], &v) != UM_SIZE_TOO_LARGE)
			fail_msg("'%s' is not found too large", huge[i]);
	assert_int_equal(v, 7);
	assert_int_equal(um_size_parse("18446744073709551615", &v), UM_SIZE_OK);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(um_size_parse("16777215T", &v), UM_SIZE_OK);
	assert_int_equal(v, 16777215ULL << 40);
	/* Junk after the digits is the problem to name, not their size. */
	assert_int_equal(um_size_parse("99999999999999999999X", &v), UM_SIZE_NOT_A_SIZE);
}

static void memory_size_says_too_large(void **state)
{
	uint64_t v;
	char err[256];
	/* Past 2^64 bytes, and past the 2^63 a size of memory stays below. */
	const char *huge[] = { "99999999999999999999G", "9223372036854775808" };
	for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
		assert_int_equal(um_memory_size_parse("--gpu-budget", huge[i], &v, err, sizeof err), -1);
		assert_non_null(strstr(err, "is too large"));
		assert_non_null(strstr(err, huge[i]));
		assert_non_null(strstr(err, "--gpu-budget"));
	}
	assert_int_equal(um_memory_size_parse("--gpu-budget", "0x1p30", &v, err, sizeof err), -1);
	assert_non_null(strstr(err, "'0x1p30' is not a size"));
}

static void size_formats(void **state)
{
	char buf[32];
	assert_string_equal(um_size_format(512, buf, sizeof buf), "512 B");
	assert_string_equal(um_size_format(3ULL << 29, buf, sizeof buf), "1.50 GiB");
	/* Just under a unit rounds up into it, not to 1024.00 of the one below. */
	assert_string_equal(um_size_format(1023, buf, sizeof buf), "1023 B");
	assert_string_equal(um_size_format((1ULL << 20) - 1, buf, sizeof buf), "1.00 MiB");
	assert_string_equal(um_size_format((1ULL << 20) - 6000, buf, sizeof buf), "1018.14 KiB");
}

static void pitched_rows_round_up_to_the_alignment(void **state)
{
	size_t pitch = 0, bytes = 0;
	assert_true(um_pitched_layout(1, 1, 1, 512, &pitch, &bytes));
	assert_int_equal(pitch, 512);
	assert_int_equal(bytes, 512);
	assert_true(um_pitched_layout(512, 3, 1, 512, &pitch, &bytes));
	assert_int_equal(pitch, 512);
	assert_int_equal(bytes, 3 * 512);
	assert_true(um_pitched_layout(4000, 7, 5, 512, &pitch, &bytes));
	assert_int_equal(pitch, 4096);
	assert_int_equal(bytes, 4096 * 7 * 5);
	assert_true(um_pitched_layout(100, 2, 1, 96, &pitch, &bytes)); /* not a power of two */
	assert_int_equal(pitch, 192);
	assert_int_equal(bytes, 384);
}

static void pitched_layout_refuses_zero_and_overflow(void **state)
{
	size_t pitch = 7, bytes = 9;
	const size_t big = SIZE_MAX / 2;
	assert_false(um_pitched_layout(0, 1, 1, 512, &pitch, &bytes));
	assert_false(um_pitched_layout(1, 0, 1, 512, &pitch, &bytes));
	assert_false(um_pitched_layout(1, 1, 0, 512, &pitch, &bytes));
	assert_false(um_pitched_layout(1, 1, 1, 0, &pitch, &bytes));
	assert_false(um_pitched_layout(SIZE_MAX - 10, 1, 1, 512, &pitch, &bytes)); /* the rounding */
	assert_false(um_pitched_layout(big, 3, 1, 512, &pitch, &bytes));	   /* a slice */
	assert_false(um_pitched_layout(1 << 20, 1 << 20, 1 << 24, 512, &pitch, &bytes)); /* the slices */
	assert_int_equal(pitch, 7); /* neither set */
	assert_int_equal(bytes, 9);
}

static void addr_set_keeps_what_was_added(void **state)
{
	struct addr_set s = ADDR_SET_INIT;
	assert_false(addr_set_has(&s, 0));
	assert_false(addr_set_covers(&s, 0));
	assert_false(addr_set_remove(&s, 7, NULL));
	/* Out of order and past the first growth, with a repeat. */
	for (uint64_t i = 0; i < 40; i++)
		assert_int_equal(addr_set_add(&s, (i * 7919) % 40 * 512, 100), 0);
	assert_int_equal(addr_set_add(&s, 512, 200), 0);
	assert_int_equal(s.n, 40);
	for (size_t i = 1; i < s.n; i++)
		assert_true(s.a[i - 1].address < s.a[i].address);
	assert_true(addr_set_has(&s, 39 * 512));
	assert_false(addr_set_has(&s, 513));
	/* Inside a range, its repeat's size; between two, past the last. */
	assert_true(addr_set_covers(&s, 0));
	assert_true(addr_set_covers(&s, 512 + 199));
	assert_false(addr_set_covers(&s, 2 * 512 + 100));
	assert_true(addr_set_covers(&s, 39 * 512 + 99));
	assert_false(addr_set_covers(&s, 39 * 512 + 100));
	uint64_t size = 0;
	assert_true(addr_set_remove(&s, 0, NULL));
	assert_true(addr_set_remove(&s, 39 * 512, &size));
	assert_int_equal(size, 100);
	assert_false(addr_set_remove(&s, 39 * 512, NULL));
	assert_false(addr_set_has(&s, 0));
	assert_false(addr_set_covers(&s, 50));
	assert_true(addr_set_has(&s, 20 * 512));
	assert_int_equal(atomic_load(&s.size), 38);
	free(s.a);
}

/* Memory handed out again was freed: a range added over others (stale ones,
 * whose frees the set was never told of) replaces every one it overlaps,
 * the one starting before it included, and no other. */
static void addr_set_drops_what_a_new_range_overlaps(void **state)
{
	struct addr_set s = ADDR_SET_INIT;
	for (uint64_t i = 0; i < 10; i++)
		assert_int_equal(addr_set_add(&s, 0x1000 * (i + 1), 0x100), 0);
	/* From inside the 3rd range (0x3000) to the start of the 6th. */
	assert_int_equal(addr_set_add(&s, 0x3080, 0x6000 - 0x3080), 0);
	assert_int_equal(s.n, 8);
	assert_false(addr_set_has(&s, 0x3000));
	assert_false(addr_set_has(&s, 0x5000));
	assert_true(addr_set_has(&s, 0x6000));
	assert_true(addr_set_covers(&s, 0x5fff));
	assert_true(addr_set_covers(&s, 0x2000));
	/* A long stale range, then a short one inside it: covered only there. */
	assert_int_equal(addr_set_add(&s, 0x100000, 0x10000), 0);
	assert_int_equal(addr_set_add(&s, 0x102000, 0x10), 0);
	assert_false(addr_set_has(&s, 0x100000));
	assert_true(addr_set_covers(&s, 0x10200f));
	assert_false(addr_set_covers(&s, 0x105000));
	/* The same start: replaced, with its new size. */
	assert_int_equal(addr_set_add(&s, 0x6000, 0x10), 0);
	assert_false(addr_set_covers(&s, 0x6010));
	for (size_t i = 1; i < s.n; i++)
		assert_true(s.a[i - 1].address + s.a[i - 1].size <= s.a[i].address);
	assert_int_equal(atomic_load(&s.size), s.n);
	free(s.a);
}

static struct execid_launch base_launch(const struct execid_arg *args, size_t n)
{
	struct execid_launch l = { "gemm_kernel", 0, { 4, 2, 1 }, { 128, 1, 1 }, 1024, args, n };
	return l;
}

static void execid_stable_and_sensitive(void **state)
{
	struct execid_arg args[2] = { { 0, 1 << 22, 0 }, { 8, 1 << 20, 256 } };
	struct execid_launch l = base_launch(args, 2);
	uint64_t id = execid_of(&l, NULL);
	assert_true(id != 0);
	assert_int_equal(execid_of(&l, NULL), id);

	struct execid_launch m = l;
	m.grid[0] = 5;
	assert_true(execid_of(&m, NULL) != id);
	m = l;
	m.name = "gemm_kernel2";
	assert_true(execid_of(&m, NULL) != id);
	m = l;
	m.shared_mem = 0;
	assert_true(execid_of(&m, NULL) != id);

	struct execid_arg moved[2] = { args[0], args[1] };
	moved[1].offset = 512;
	m = base_launch(moved, 2);
	assert_true(execid_of(&m, NULL) != id);
	m = base_launch(args, 1);
	assert_true(execid_of(&m, NULL) != id);
}

/* The shape ID names the kernel and its launch shape, whatever the
 * arguments; execid_of gives the same one in its pass. */
static void execid_shape_ignores_arguments(void **state)
{
	struct execid_arg args[2] = { { 0, 1 << 22, 0 }, { 8, 1 << 20, 256 } };
	struct execid_launch l = base_launch(args, 2), m = base_launch(args, 1);
	uint64_t shape = 0, id = execid_of(&l, &shape);
	assert_int_equal(shape, execid_shape_of(&l));
	assert_true(shape != id && shape != 0);
	assert_int_equal(execid_shape_of(&m), shape);
	m = base_launch(NULL, 0);
	assert_int_equal(execid_of(&m, NULL), shape);
	m.block[1] = 2;
	assert_true(execid_shape_of(&m) != shape);
	m = l;
	m.name = "gemm_kernel2";
	assert_true(execid_shape_of(&m) != shape);
}

static void execid_precomputed_name_state_gives_the_same_id(void **state)
{
	struct execid_arg args[1] = { { 0, 1 << 22, 64 } };
	struct execid_launch l = base_launch(args, 1);
	uint64_t id = execid_of(&l, NULL);
	l.name_state = execid_name_state(l.name);
	assert_int_equal(execid_of(&l, NULL), id);
	l.name_state = execid_name_state("other_kernel");
	assert_true(execid_of(&l, NULL) != id);
}

static void execid_known_value(void **state)
{
	/* Pinned so that traces and plans from different builds agree. */
	assert_int_equal(execid_fnv1a(EXECID_FNV_SEED, "a", 1), 0xaf63dc4c8601ec8cULL);
}

/* The IDs of a real recording (tests/fixtures/h100_train_sim.db, made on
 * an H100 by umrec) are what execid_of gives for its kernel rows: the
 * name, grid, block and shared memory, and each kernel_arg row (in
 * parameter order) with its allocation's size. Its small kernels' words
 * are all steady, so every argument row counts. A change to the hash
 * (the mixing, the order, the finish) would break every plan made from an
 * existing trace: this is the known answer for all of it. */
static void execid_matches_a_recording(void **state)
{
	char path[512];
	sqlite3 *db;
	test_fixture(path, sizeof path, "h100_train_sim.db");
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		fail_msg("%s: %s", path, sqlite3_errmsg(db));
	sqlite3_stmt *k, *a;
	assert_int_equal(sqlite3_prepare_v2(db,
					    "SELECT k.correlation_id, k.exec_id, s.value, k.grid_x, k.grid_y,"
					    " k.grid_z, k.block_x, k.block_y, k.block_z, k.shared_mem"
					    " FROM kernel k JOIN string s ON s.id = k.name_id"
					    " WHERE k.exec_id IS NOT NULL ORDER BY k.seq",
					    -1, &k, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "SELECT g.param_offset, a.size, g.offset FROM kernel_arg g"
					    " JOIN alloc a ON a.id = g.alloc_id"
					    " WHERE g.correlation_id = ? ORDER BY g.param_offset",
					    -1, &a, NULL),
			 SQLITE_OK);
	size_t kernels = 0, with_args = 0;
	while (sqlite3_step(k) == SQLITE_ROW) {
		struct execid_arg args[64];
		size_t n = 0;
		sqlite3_bind_int64(a, 1, sqlite3_column_int64(k, 0));
		while (sqlite3_step(a) == SQLITE_ROW) {
			assert_true(n < 64);
			args[n++] = (struct execid_arg){ (uint32_t)sqlite3_column_int64(a, 0),
							 (uint64_t)sqlite3_column_int64(a, 1),
							 (uint64_t)sqlite3_column_int64(a, 2) };
		}
		sqlite3_reset(a);
		struct execid_launch l = { (const char *)sqlite3_column_text(k, 2), 0, { 0 }, { 0 }, 0, args, n };
		for (int d = 0; d < 3; d++) {
			l.grid[d] = (uint32_t)sqlite3_column_int64(k, 3 + d);
			l.block[d] = (uint32_t)sqlite3_column_int64(k, 6 + d);
		}
		l.shared_mem = (uint32_t)sqlite3_column_int64(k, 9);
		uint64_t recorded = (uint64_t)sqlite3_column_int64(k, 1), got = execid_of(&l, NULL);
		if (got != recorded)
			fail_msg("kernel %lld (%s, %zu args): recorded %016llx, execid_of %016llx",
				 (long long)sqlite3_column_int64(k, 0), l.name, n,
				 (unsigned long long)recorded, (unsigned long long)got);
		kernels++;
		with_args += n > 0;
	}
	sqlite3_finalize(a);
	sqlite3_finalize(k);
	sqlite3_close(db);
	assert_int_equal(kernels, 200); /* tests/fixtures/README.md */
	assert_int_equal(with_args, 200); /* each names its buffers */
}

/* Lower and upper bounds agree with a linear scan, signed keys across zero
 * and the extremes included, for plain arrays and struct fields alike. */
static void search_bounds_match_a_scan(void **state)
{
	const int64_t s[] = { INT64_MIN, -5, -5, -1, 0, 0, 3, 3, 3, INT64_MAX };
	const uint64_t u[] = { 0, 1, 1, 7, UINT64_C(1) << 63, UINT64_MAX, UINT64_MAX };
	struct rec { uint32_t pad; uint64_t key; } r[7];
	const size_t ns = sizeof s / sizeof *s, nu = sizeof u / sizeof *u;
	for (size_t i = 0; i < nu; i++)
		r[i] = (struct rec){ 0, u[i] };
	const int64_t sk[] = { INT64_MIN, -6, -5, -2, -1, 0, 1, 3, 4, INT64_MAX };
	for (size_t k = 0; k < sizeof sk / sizeof *sk; k++) {
		size_t lo = 0, up = 0;
		while (lo < ns && s[lo] < sk[k])
			lo++;
		while (up < ns && s[up] <= sk[k])
			up++;
		assert_int_equal(lower_bound_i64(s, ns, sizeof *s, 0, sk[k]), lo);
		assert_int_equal(upper_bound_i64(s, ns, sizeof *s, 0, sk[k]), up);
	}
	const uint64_t uk[] = { 0, 1, 2, 7, 8, UINT64_C(1) << 63, UINT64_MAX - 1, UINT64_MAX };
	for (size_t k = 0; k < sizeof uk / sizeof *uk; k++) {
		size_t lo = 0, up = 0;
		while (lo < nu && u[lo] < uk[k])
			lo++;
		while (up < nu && u[up] <= uk[k])
			up++;
		assert_int_equal(lower_bound_u64(u, nu, sizeof *u, 0, uk[k]), lo);
		assert_int_equal(upper_bound_u64(r, nu, SEARCH_FIELD(struct rec, key), uk[k]), up);
	}
	assert_int_equal(lower_bound_u64(NULL, 0, sizeof *u, 0, 5), 0);
}

/* An array grown one element at a time keeps what it held: it starts at
 * the first capacity, doubles only when full, and is handed back as it is
 * while there is room. */
static void room_for_one_doubles_when_full(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;
	for (uint32_t n = 0; n < 100; n++) {
		uint32_t *p = room_for_one(v, n, &cap, sizeof *v, 4);
		assert_non_null(p);
		if (v && n < 4)
			assert_ptr_equal(p, v);
		v = p;
		v[n] = n * 7;
		size_t want = 4;
		while (want <= n)
			want *= 2;
		assert_int_equal(cap, want);
	}
	for (uint32_t n = 0; n < 100; n++)
		assert_int_equal(v[n], n * 7);
	assert_ptr_equal(room_for_one(v, 100, &cap, sizeof *v, 4), v);
	free(v);
}

/* Room for several elements at once: the capacity doubles from the first
 * until they all fit, and the array is handed back as it is when they
 * already do. */
static void room_for_doubles_until_all_fit(void **state)
{
	size_t cap = 0;
	uint32_t *v = room_for(NULL, 0, 3, &cap, sizeof *v, 4);
	assert_non_null(v);
	assert_int_equal(cap, 4);
	assert_ptr_equal(room_for(v, 1, 3, &cap, sizeof *v, 4), v);
	assert_int_equal(cap, 4);
	for (uint32_t i = 0; i < 4; i++)
		v[i] = i + 1;
	uint32_t *p = room_for(v, 4, 13, &cap, sizeof *v, 4);
	assert_non_null(p);
	assert_int_equal(cap, 32); /* 4, 8, 16, 32 >= 17 */
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(p[i], i + 1);
	assert_ptr_equal(room_for(p, 17, 15, &cap, sizeof *p, 4), p);
	free(p);
}

/* A count or a byte size past size_t is no room, and the array is kept,
 * where the sums wrapped: n + more wrapping below *cap handed v back as if
 * it fit, and grown * size wrapping asked realloc for a few bytes. */
static void room_for_refuses_sizes_past_size_t(void **state)
{
	size_t cap = 4;
	uint32_t *v = malloc(cap * sizeof *v);
	assert_non_null(v);
	assert_null(room_for(v, 2, SIZE_MAX - 1, &cap, sizeof *v, 4));
	assert_null(room_for(v, 4, SIZE_MAX / 2, &cap, sizeof *v, 4));
	assert_null(room_for(v, 4, SIZE_MAX / 8, &cap, sizeof *v, 4));
	assert_int_equal(cap, 4);
	free(v);
}

/* Threads pass a gate in a loop, noting in `late` any pass made after
 * gate_close returned (closed_done set by the closer) and in `busy` any
 * call inside at that moment; both must stay 0, and no pass succeeds
 * after the close. */
struct gate_run {
	struct gate g;
	atomic_bool closed_done, stop;
	atomic_uint busy, late, passes;
};

static void *gate_caller(void *arg)
{
	struct gate_run *r = arg;
	while (!atomic_load(&r->stop)) {
		if (!gate_enter(&r->g))
			continue;
		atomic_fetch_add(&r->busy, 1);
		atomic_fetch_add(&r->passes, 1);
		for (volatile int i = 0; i < 100; i++)
			;
		if (atomic_load(&r->closed_done))
			atomic_fetch_add(&r->late, 1);
		atomic_fetch_sub(&r->busy, 1);
		gate_leave(&r->g);
	}
	return NULL;
}

static void gate_close_waits_for_calls_inside(void **state)
{
	static struct gate_run r = { .g = GATE_SHUT };
	pthread_t t[4];
	assert_false(gate_enter(&r.g));
	gate_open(&r.g);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, gate_caller, &r), 0);
	while (atomic_load(&r.passes) < 10000)
		sched_yield();
	gate_close(&r.g);
	assert_int_equal(atomic_load(&r.busy), 0);
	atomic_store(&r.closed_done, true);
	unsigned passes = atomic_load(&r.passes);
	for (int spin = 0; spin < 1000; spin++)
		sched_yield();
	atomic_store(&r.stop, true);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(atomic_load(&r.late), 0);
	assert_int_equal(atomic_load(&r.passes), passes);
	assert_false(gate_enter(&r.g));
}

/* The fences' view of launches: a fence that began before an unsubscribe
 * or a new subscription does not undo it when its wait ends. */
/* The new thread's mask, as it sees it. */
static void *own_mask(void *arg)
{
	pthread_sigmask(SIG_SETMASK, NULL, arg);
	return NULL;
}

/* A library thread takes no signal, whatever its creator's mask; the
 * creator's is left as it was. */
static void library_threads_take_no_signals(void **state)
{
	sigset_t before, after, seen;
	pthread_sigmask(SIG_SETMASK, NULL, &before);
	pthread_t t;
	assert_int_equal(thread_start_unsignalled(&t, own_mask, &seen), 0);
	pthread_join(t, NULL);
	pthread_sigmask(SIG_SETMASK, NULL, &after);
	assert_false(sigismember(&before, SIGINT)); /* the test runs unmasked */
	assert_true(sigismember(&seen, SIGINT) && sigismember(&seen, SIGTERM) && sigismember(&seen, SIGUSR1) &&
		    sigismember(&seen, SIGPROF) && sigismember(&seen, SIGALRM));
	assert_int_equal(sigismember(&after, SIGINT), sigismember(&before, SIGINT));
	assert_int_equal(sigismember(&after, SIGPROF), sigismember(&before, SIGPROF));
}

static void launch_view_never_undoes_a_later_change(void **state)
{
	launch_view v = LAUNCH_VIEW_INIT;
	unsigned a, b;
	assert_true(launch_view_fence_begin(&v, &a));
	assert_int_equal(a, 0);
	launch_view_fence_end(&v, a, true);
	assert_true(launch_view_fence_begin(&v, &a)); /* still unseen */

	launch_view_seen(&v, false);
	assert_true(launch_view_fence_begin(&v, &a));
	assert_int_not_equal(a, 0);
	assert_true(launch_view_fence_begin(&v, &b)); /* another fence meanwhile */
	assert_int_equal(b, 0);
	launch_view_fence_end(&v, a, true);
	assert_false(launch_view_fence_begin(&v, &a)); /* seen: streams named */

	launch_view_seen(&v, false);
	assert_true(launch_view_fence_begin(&v, &a));
	launch_view_unseen(&v); /* the exit path, during the wait */
	launch_view_fence_end(&v, a, true);
	assert_true(launch_view_fence_begin(&v, &a));
	assert_int_equal(a, 0);

	launch_view_seen(&v, false);
	assert_true(launch_view_fence_begin(&v, &a));
	launch_view_seen(&v, false); /* subscribed again during the wait */
	launch_view_fence_end(&v, a, true);
	assert_true(launch_view_fence_begin(&v, &a));
	assert_int_not_equal(a, 0); /* the next fence waits and claims again */
	launch_view_fence_end(&v, a, true);

	/* A claims; unsubscribe and subscribe again; B claims; A's wait ends
	 * first: B's wait, the one after the new subscription, must still
	 * be the one that ends the unseen time. */
	launch_view_seen(&v, false);
	assert_true(launch_view_fence_begin(&v, &a));
	launch_view_unseen(&v);
	launch_view_seen(&v, false);
	assert_true(launch_view_fence_begin(&v, &b));
	launch_view_fence_end(&v, a, true);
	unsigned c;
	assert_true(launch_view_fence_begin(&v, &c));
	launch_view_fence_end(&v, b, true);
	assert_false(launch_view_fence_begin(&v, &c));

	/* A wait that could not be made (a synchronize refused) ends nothing:
	 * the next fence claims the change again. */
	launch_view_seen(&v, false);
	assert_true(launch_view_fence_begin(&v, &a));
	launch_view_fence_end(&v, a, false);
	assert_true(launch_view_fence_begin(&v, &b));
	assert_int_not_equal(b, 0);
	launch_view_fence_end(&v, b, true);
	assert_false(launch_view_fence_begin(&v, &c));

	launch_view_seen(&v, true); /* before any work: nothing to wait for */
	assert_false(launch_view_fence_begin(&v, &c));
}

static struct thread_scratch scratch = THREAD_SCRATCH_INIT(40 << 10);
static pthread_barrier_t both_wrote;

/* Writes its thread's mark into its buffer and reads it back after the
 * other thread has written its own. */
static void *use_scratch(void *mark)
{
	unsigned char *buf = thread_scratch_get(&scratch);
	if (buf)
		memset(buf, *(unsigned char *)mark, scratch.size);
	pthread_barrier_wait(&both_wrote);
	bool kept = buf && thread_scratch_get(&scratch) == buf && buf[0] == *(unsigned char *)mark &&
		    buf[scratch.size - 1] == *(unsigned char *)mark;
	return kept ? buf : NULL;
}

/* Each thread keeps its own buffer, the same at every call, though its
 * stack (32 KiB) could not hold one; they are freed at the threads' exits
 * (the sanitizer build's leak check). */
static void thread_scratch_is_each_threads_own(void **state)
{
	(void)state;
	pthread_attr_t small;
	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, 32 << 10);
	unsigned char marks[2] = { 0xa5, 0x5a };
	pthread_t t[2];
	void *buf[2];
	pthread_barrier_init(&both_wrote, NULL, 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], &small, use_scratch, &marks[i]), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], &buf[i]), 0);
	assert_non_null(buf[0]);
	assert_non_null(buf[1]);
	assert_ptr_not_equal(buf[0], buf[1]);
	pthread_barrier_destroy(&both_wrote);
	pthread_attr_destroy(&small);
}

/* A file whose name is as long as the file system takes (NAME_MAX) is
 * replaced and set aside all the same: the temporary's and the folder's
 * names, which add to the file's, are cut to fit. */
static void longest_file_name_replaced_and_set_aside(void **state)
{
	(void)state;
	char dir[512], path[1024], aside[4096], err[512];
	test_path(dir, sizeof dir, "");
	snprintf(path, sizeof path, "%s%0*d", dir, NAME_MAX, 0);
	struct replace_file r;
	if (replace_file_begin(&r, path, err, sizeof err))
		fail_msg("%s", err);
	fputs("whole\n", r.f);
	if (replace_file_commit(&r, err, sizeof err))
		fail_msg("%s", err);
	assert_int_equal(access(path, F_OK), 0);
	static const char *const alone[] = { "" };
	static const struct file_set one = { alone, 1, "file" };
	if (set_aside(path, &one, aside, sizeof aside, err, sizeof err))
		fail_msg("%s", err);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(aside, F_OK), 0);
	assert_int_equal(set_aside_drop(aside, &one, err, sizeof err), 0);
	assert_int_equal(access(aside, F_OK), -1);
}

/* The new contents keep the earlier file's mode (a user's chmod 600), and
 * a new file gets what creating it would give: under umask 077, 0600,
 * where both were 0644. */
static void replaced_file_keeps_its_mode(void **state)
{
	(void)state;
	char path[512], err[512];
	struct stat st;
	test_path(path, sizeof path, "mode.out");
	unlink(path);
	mode_t old = umask(077);
	struct replace_file r;
	if (replace_file_begin(&r, path, err, sizeof err) || replace_file_commit(&r, err, sizeof err))
		fail_msg("%s", err);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(chmod(path, 0640), 0);
	if (replace_file_begin(&r, path, err, sizeof err) || replace_file_commit(&r, err, sizeof err))
		fail_msg("%s", err);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
}

/* A run killed between setting the earlier output aside and dropping it
 * or putting it back leaves its folder, which nothing else points to: the
 * next run's start names it. */
static char left_path[512], left_aside[4096];
static struct kept_output left_kept;
static const char *const left_alone[] = { "" };
static const struct file_set left_one = { left_alone, 1, "plan" };

static void begin_over_a_left_folder(void)
{
	char err[512];
	if (kept_output_begin(&left_kept, left_path, &left_one, err, sizeof err))
		fail_msg("%s", err);
}

static void folder_left_by_a_killed_run_named(void **state)
{
	(void)state;
	char err[512], folder[4096];
	test_path(left_path, sizeof left_path, "left.bin");
	FILE *f = fopen(left_path, "w");
	assert_non_null(f);
	fclose(f);
	if (set_aside(left_path, &left_one, left_aside, sizeof left_aside, err, sizeof err))
		fail_msg("%s", err);
	f = fopen(left_path, "w"); /* the killed run's own output */
	assert_non_null(f);
	fclose(f);
	snprintf(folder, sizeof folder, "%s", left_aside);
	*strrchr(folder, '/') = '\0';
	const char *said = stderr_of(begin_over_a_left_folder);
	assert_non_null(strstr(said, folder));
	assert_non_null(strstr(said, "set aside by a run killed"));
	kept_output_end(&left_kept);
	assert_int_equal(set_aside_drop(left_aside, &left_one, err, sizeof err), 0);
}

/* A message as long as the tools' error buffers keeps its end. */
static void say_long(void)
{
	char path[3001];
	memset(path, 'd', sizeof path - 1);
	path[sizeof path - 1] = '\0';
	um_error("%s: cannot open: set UMKIT_X to its path", path);
}

static void long_messages_keep_their_end(void **state)
{
	(void)state;
	const char *said = stderr_of(say_long);
	assert_non_null(strstr(said, "ddd: cannot open: set UMKIT_X to its path\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(size_parses_units),
		cmocka_unit_test(long_messages_keep_their_end),
		cmocka_unit_test(size_takes_only_decimal_numbers),
		cmocka_unit_test(size_drops_a_fraction_of_a_byte),
		cmocka_unit_test(size_too_large_is_its_own_error),
		cmocka_unit_test(memory_size_says_too_large),
		cmocka_unit_test(size_rejects_junk),
		cmocka_unit_test(size_formats),
		cmocka_unit_test(addr_set_keeps_what_was_added),
		cmocka_unit_test(addr_set_drops_what_a_new_range_overlaps),
		cmocka_unit_test(pitched_rows_round_up_to_the_alignment),
		cmocka_unit_test(pitched_layout_refuses_zero_and_overflow),
		cmocka_unit_test(execid_stable_and_sensitive),
		cmocka_unit_test(execid_shape_ignores_arguments),
		cmocka_unit_test(execid_precomputed_name_state_gives_the_same_id),
		cmocka_unit_test(execid_known_value),
		cmocka_unit_test(execid_matches_a_recording),
		cmocka_unit_test(search_bounds_match_a_scan),
		cmocka_unit_test(room_for_one_doubles_when_full),
		cmocka_unit_test(room_for_doubles_until_all_fit),
		cmocka_unit_test(room_for_refuses_sizes_past_size_t),
		cmocka_unit_test(library_threads_take_no_signals),
		cmocka_unit_test(gate_close_waits_for_calls_inside),
		cmocka_unit_test(launch_view_never_undoes_a_later_change),
		cmocka_unit_test(thread_scratch_is_each_threads_own),
		cmocka_unit_test(longest_file_name_replaced_and_set_aside),
		cmocka_unit_test(replaced_file_keeps_its_mode),
		cmocka_unit_test(folder_left_by_a_killed_run_named),
	};
	return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}
