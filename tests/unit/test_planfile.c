/*
 * Unit tests for the plan.bin container (common/planfile.c) and the byte
 * codec under it (common/bytes.c): round trips, byte-identical output, and
 * the promise that no damaged file crashes the reader or reads back as
 * something else. The sweeps here are meant to be run under
 * AddressSanitizer too.
 */
#include "testutil.h"

#include "bytes.h"
#include "execid.h"
#include "plan/plan_json.h"
#include "plan_sample.h"
#include "planfile.h"

#define HEADER_LEN 32
#define CHECKSUM_AT 24

static unsigned char *writer_image(planfile_writer *w, size_t *len)
{
	void *d;
	assert_int_equal(planfile_writer_encode(w, &d, len), 0);
	return d;
}

/* The image of the sample plan: a small, real plan file. */
static unsigned char *real_image(size_t *len)
{
	struct plan *p = sample_plan();
	unsigned char *img = sample_image(p, len);
	plan_destroy(p);
	return img;
}

/* Rewrites the file checksum after a deliberate edit, to reach the checks
 * behind it. */
static void fix_checksum(unsigned char *d, size_t len)
{
	uint64_t h = execid_fnv1a(EXECID_FNV_SEED, d, CHECKSUM_AT);
	h = execid_fnv1a(h, d + HEADER_LEN, len - HEADER_LEN);
	for (int i = 0; i < 8; i++)
		d[CHECKSUM_AT + i] = (unsigned char)(h >> (8 * i));
}

static void put_le(unsigned char *d, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		d[i] = (unsigned char)(v >> (8 * i));
}

static void bytes_round_trip(void **state)
{
	struct bytes_buf b = { 0 };
	bytes_put_u8(&b, 0xab);
	bytes_put_u32(&b, 0x01020304);
	bytes_put_u64(&b, 0x1122334455667788ULL);
	bytes_put_raw(&b, "xyz", 3);
	assert_false(b.oom);
	assert_int_equal(b.len, 16);
	/* Little-endian on every host. */
	assert_int_equal(b.data[1], 0x04);
	assert_int_equal(b.data[5], 0x88);

	struct bytes_reader r = bytes_reader_init(b.data, b.len);
	assert_int_equal(bytes_get_u8(&r), 0xab);
	assert_int_equal(bytes_get_u32(&r), 0x01020304);
	assert_true(bytes_get_u64(&r) == 0x1122334455667788ULL);
	assert_true(bytes_can_hold(&r, 3, 1));
	assert_false(bytes_can_hold(&r, 2, 2));
	assert_false(bytes_can_hold(&r, UINT64_MAX, 8));
	assert_memory_equal(bytes_get_raw(&r, 3), "xyz", 3);
	assert_true(bytes_reader_ok(&r));
	/* Past the end: 0, and the reader stays bad. */
	assert_int_equal(bytes_get_u32(&r), 0);
	assert_false(bytes_reader_ok(&r));
	assert_null(bytes_get_raw(&r, 0));
	bytes_buf_free(&b);

	struct bytes_reader e = bytes_reader_init(NULL, 0);
	assert_non_null(bytes_get_raw(&e, 0));
	assert_true(bytes_reader_ok(&e));
}

static void round_trip(void **state)
{
	planfile_writer *w = planfile_writer_create();
	unsigned char big[100000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 7 / 100);
	assert_int_equal(planfile_writer_add(w, 9, "nine", 4), 0);
	assert_int_equal(planfile_writer_add(w, 2, big, sizeof big), 0);
	assert_int_equal(planfile_writer_add(w, 5, NULL, 0), 0);
	assert_int_equal(planfile_writer_add(w, 2, "dup", 3), -1);

	char path[512], err[256];
	test_path(path, sizeof path, "round.bin");
	assert_int_equal(planfile_writer_save(w, path, err, sizeof err), 0);
	planfile_writer_destroy(w);

	planfile *p = planfile_open(path, err, sizeof err);
	assert_non_null(p);
	assert_int_equal(planfile_section_count(p), 3);
	/* File order is id order, whatever the order of adding. */
	assert_int_equal(planfile_section_id(p, 0), 2);
	assert_int_equal(planfile_section_id(p, 1), 5);
	assert_int_equal(planfile_section_id(p, 2), 9);
	size_t len;
	const void *d = planfile_section(p, 2, &len);
	assert_int_equal(len, sizeof big);
	assert_memory_equal(d, big, sizeof big);
	d = planfile_section(p, 5, &len);
	assert_non_null(d);
	assert_int_equal(len, 0);
	d = planfile_section(p, 9, &len);
	assert_int_equal(len, 4);
	assert_memory_equal(d, "nine", 4);
	len = 99;
	assert_null(planfile_section(p, 3, &len));
	assert_int_equal(len, 0);
	assert_int_equal(planfile_section_id(p, 3), 0); /* past the last */
	planfile_close(p);

	/* Compressed: the 100 kB section is mostly runs. */
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	assert_true(ftell(f) < 10000);
	fclose(f);
}

static void identical_output(void **state)
{
	size_t la, lb;
	planfile_writer *a = planfile_writer_create(), *b = planfile_writer_create();
	planfile_writer_add(a, 1, "alpha", 5);
	planfile_writer_add(a, 7, "omega", 5);
	planfile_writer_add(b, 7, "omega", 5);
	planfile_writer_add(b, 1, "alpha", 5);
	unsigned char *ia = writer_image(a, &la), *ib = writer_image(b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(ia, ib, la);
	free(ia);
	free(ib);
	planfile_writer_destroy(a);
	planfile_writer_destroy(b);

	/* A whole plan saved twice, from ops given in a different order. */
	struct plan *p = sample_plan(), *q = sample_plan();
	struct plan_op t = q->ops[0];
	q->ops[0] = q->ops[q->n_ops - 1];
	q->ops[q->n_ops - 1] = t;
	plan_finalize(q);
	char pa[512], pb[512], err[256];
	test_path(pa, sizeof pa, "same-a.bin");
	test_path(pb, sizeof pb, "same-b.bin");
	assert_int_equal(plan_save(p, pa, err, sizeof err), 0);
	assert_int_equal(plan_save(q, pb, err, sizeof err), 0);
	plan_destroy(p);
	plan_destroy(q);
	char cmd[1100];
	snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", pa, pb);
	assert_int_equal(system(cmd), 0);
}

static void every_truncation_fails(void **state)
{
	size_t len;
	unsigned char *img = real_image(&len);
	char err[256], want[128];
	assert_true(len > 200);
	for (size_t n = 0; n < len; n++) {
		unsigned char *cut = malloc(n ? n : 1); /* exact size, so ASan sees overreads */
		memcpy(cut, img, n);
		err[0] = 0;
		assert_null(planfile_open_mem(cut, n, "plan.bin", err, sizeof err));
		assert_true(strncmp(err, "plan.bin: ", 10) == 0);
		assert_null(plan_load_mem(cut, n, "plan.bin", err, sizeof err));
		if (n >= HEADER_LEN) {
			snprintf(want, sizeof want, "plan.bin: truncated (%zu of %zu bytes)", n, len);
			assert_string_equal(err, want);
		}
		free(cut);
	}
	assert_null(planfile_open_mem(img, 0, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: not a umkit plan (empty file)");
	assert_null(planfile_open_mem(img, 12, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: truncated (12 of at least 32 bytes)");

	/* Trailing bytes are damage too. */
	unsigned char *longer = malloc(len + 1);
	memcpy(longer, img, len);
	longer[len] = 0;
	assert_null(planfile_open_mem(longer, len + 1, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: 1 unexpected bytes after the end of the plan");
	free(longer);
	free(img);
}

static void every_flip_fails(void **state)
{
	size_t len;
	unsigned char *img = real_image(&len);
	const unsigned char patterns[] = { 0x01, 0x80, 0xff, 0x5a };
	char err[256];
	for (size_t i = 0; i < len; i++) {
		for (size_t k = 0; k < sizeof patterns; k++) {
			img[i] ^= patterns[k];
			err[0] = 0;
			planfile *p = planfile_open_mem(img, len, "plan.bin", err, sizeof err);
			if (p)
				fail_msg("flip 0x%02x at byte %zu still opens", patterns[k], i);
			assert_true(strncmp(err, "plan.bin: ", 10) == 0);
			img[i] ^= patterns[k];
		}
	}
	/* Sanity: the unflipped image opens. */
	planfile *p = planfile_open_mem(img, len, "plan.bin", err, sizeof err);
	assert_non_null(p);
	planfile_close(p);
	free(img);
}

/* With the outer checksum forged, damage must still be caught by the section
 * table checks, zstd and the section checksums, or else read back exactly
 * as written: never as different content. */
static void forged_flips_never_misread(void **state)
{
	size_t len;
	unsigned char *img = real_image(&len);
	planfile *orig = planfile_open_mem(img, len, "plan.bin", NULL, 0);
	assert_non_null(orig);
	char err[256];
	for (size_t i = HEADER_LEN; i < len; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			img[i] ^= (unsigned char)(1u << bit);
			fix_checksum(img, len);
			planfile *p = planfile_open_mem(img, len, "plan.bin", err, sizeof err);
			if (p) {
				assert_int_equal(planfile_section_count(p), planfile_section_count(orig));
				for (size_t s = 0; s < planfile_section_count(p); s++) {
					uint32_t id = planfile_section_id(p, s);
					size_t a, b;
					const void *da = planfile_section(p, id, &a);
					const void *db = planfile_section(orig, id, &b);
					assert_non_null(db);
					assert_int_equal(a, b);
					assert_memory_equal(da, db, a);
				}
				planfile_close(p);
			}
			img[i] ^= (unsigned char)(1u << bit);
		}
	}
	planfile_close(orig);
	free(img);
}

static void header_messages(void **state)
{
	size_t len;
	unsigned char *img = real_image(&len);
	char err[256], want[128];

	img[3] = 'X';
	assert_null(planfile_open_mem(img, len, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: not a umkit plan (bad magic)");
	assert_null(planfile_open_mem("PK\3\4", 4, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: not a umkit plan (bad magic)");
	img[3] = 'P';

	put_le(img + 8, PLANFILE_VERSION + 1, 4);
	assert_null(planfile_open_mem(img, len, "plan.bin", err, sizeof err));
	snprintf(want, sizeof want, "plan.bin: format version %d is newer than this umkit (%d)",
		 PLANFILE_VERSION + 1, PLANFILE_VERSION);
	assert_string_equal(err, want);
	put_le(img + 8, 0, 4);
	assert_null(planfile_open_mem(img, len, "plan.bin", err, sizeof err));
	snprintf(want, sizeof want, "plan.bin: format version 0 is not supported (this umkit reads "
		 "1 to %d)", PLANFILE_VERSION);
	assert_string_equal(err, want);
	put_le(img + 8, PLANFILE_VERSION, 4);

	img[len - 1] ^= 1;
	assert_null(planfile_open_mem(img, len, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: checksum mismatch (file corrupt)");
	img[len - 1] ^= 1;

	/* Every byte of the magic counts, its NUL too. */
	img[7] = 'X';
	assert_null(planfile_open_mem(img, len, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: not a umkit plan (bad magic)");
	img[7] = 0;
	/* A byte short of the header: nothing of it is read. */
	assert_null(planfile_open_mem(img, HEADER_LEN - 1, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: truncated (31 of at least 32 bytes)");
	assert_null(planfile_open_mem(img, 5, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: truncated (5 of at least 32 bytes)");
	free(img);
}

/* Bytes after the last section, counted in the payload length and the
 * checksum, are refused: the sections end the file. */
static void bytes_after_the_last_section(void **state)
{
	size_t len;
	unsigned char *img = real_image(&len);
	unsigned char *d = calloc(len + 7, 1);
	assert_non_null(d);
	memcpy(d, img, len);
	put_le(d + 16, len + 7 - HEADER_LEN, 8);
	fix_checksum(d, len + 7);
	char err[256];
	assert_null(planfile_open_mem(d, len + 7, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: 7 bytes after the last section");
	free(d);
	free(img);
}

/* planfile_is_plan reads the whole magic: a plan is one, a file sharing
 * its first bytes or shorter than the magic is not. */
static void is_plan_reads_the_whole_magic(void **state)
{
	size_t len;
	unsigned char *img = real_image(&len);
	const struct {
		const void *data;
		size_t len;
		bool plan;
	} cases[] = { { img, len, true }, { "UMKPLANX", 8, false }, { "UMKPxxxx", 8, false },
		      { "UMKPLAN", 7, false }, { "", 0, false } };
	char path[512];
	test_path(path, sizeof path, "magic.bin");
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		FILE *f = fopen(path, "w+b");
		assert_non_null(f);
		assert_int_equal(fwrite(cases[i].data, 1, cases[i].len, f), cases[i].len);
		rewind(f);
		if (planfile_is_plan(f) != cases[i].plan)
			fail_msg("case %zu: planfile_is_plan says %s", i, cases[i].plan ? "no" : "yes");
		fclose(f);
	}
	free(img);
}

/* Version 2 added the optional section 8 and changed nothing else: a
 * version 1 file, which has no section 8, still loads. */
static void version_1_loads(void **state)
{
	size_t len;
	unsigned char *img = real_image(&len);
	char err[256];
	assert_int_equal(img[8], PLANFILE_VERSION);
	put_le(img + 8, 1, 4);
	fix_checksum(img, len);
	struct plan *p = plan_load_mem(img, len, "plan.bin", err, sizeof err);
	if (!p)
		fail_msg("%s", err);
	assert_int_equal(p->n_allocs, 4);
	assert_int_equal(p->n_host, 0);
	char *json = plan_json_text(p); /* umplan --dump */
	assert_non_null(strstr(json, "\"format_version\":\t1,"));
	free(json);
	plan_destroy(p);
	free(img);
}

/* Section 8 came with version 2: a version 1 file holding one is refused,
 * naming the file, where its host placement was read and acted on; a
 * version 2 file holding one loads. */
static void host_section_needs_version_2(void **state)
{
	struct plan *p = sample_host_plan();
	size_t len;
	unsigned char *img = sample_image(p, &len);
	plan_destroy(p);
	char err[256];
	put_le(img + 8, 2, 4);
	fix_checksum(img, len);
	struct plan *q = plan_load_mem(img, len, "plan.bin", err, sizeof err);
	if (!q)
		fail_msg("%s", err);
	assert_int_equal(q->n_host, 2);
	plan_destroy(q);

	put_le(img + 8, 1, 4);
	fix_checksum(img, len);
	assert_null(plan_load_mem(img, len, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: it keeps allocations on the host (section 8), which format "
				 "version 1 cannot hold");
	free(img);
}

/* Version 3 added origin 3, a previous iteration's instance: it round-trips
 * and is named in the dump; a file of an older version holding one is
 * refused, naming the allocation; with a size other than its ordinal's in
 * the signature, as an iteration allocation would be. */
static void previous_origin_needs_version_3(void **state)
{
	struct plan *p = sample_plan();
	p->allocs[3].origin = PLAN_ALLOC_PREVIOUS; /* ordinal 2, its size */
	size_t len;
	unsigned char *img = sample_image(p, &len);
	char err[256];
	struct plan *q = plan_load_mem(img, len, "plan.bin", err, sizeof err);
	if (!q)
		fail_msg("%s", err);
	assert_int_equal(q->allocs[3].origin, PLAN_ALLOC_PREVIOUS);
	assert_int_equal(q->allocs[3].ordinal, 2);
	char *json = plan_json_text(q);
	assert_non_null(strstr(json, "\"origin\":\t\"previous\""));
	free(json);
	plan_destroy(q);

	put_le(img + 8, 2, 4);
	fix_checksum(img, len);
	assert_null(plan_load_mem(img, len, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: allocation 3 is a previous iteration's instance, which format "
				 "version 2 cannot hold");
	free(img);

	p->allocs[3].size = MIB;
	img = sample_image(p, &len);
	assert_null(plan_load_mem(img, len, "plan.bin", err, sizeof err));
	assert_string_equal(err, "plan.bin: allocation 3 has size 1048576 but the signature says the "
				 "iteration's allocation #2 has 1049088");
	free(img);
	plan_destroy(p);
}

/* Hand-forged section tables (checksum fixed) get specific messages. */
static void forged_tables(void **state)
{
	planfile_writer *w = planfile_writer_create();
	planfile_writer_add(w, 1, "first", 5);
	planfile_writer_add(w, 2, "second", 6);
	size_t len;
	unsigned char *img = writer_image(w, &len);
	planfile_writer_destroy(w);
	unsigned char *d = malloc(len);
	char err[256];
	const size_t e0 = HEADER_LEN, e1 = HEADER_LEN + 40;
	struct {
		size_t at;
		uint64_t v;
		int n;
		const char *msg;
	} cases[] = {
		{ e1, 1, 4, "section 1 appears twice" },
		{ e0 + 4, 7, 4, "unknown compression 7" },
		{ e0 + 8, (uint64_t)1 << 40, 8, "section 1 is too large" },
		{ e0 + 8, ((uint64_t)1 << 30) + 1, 8, "section 1 is too large" },
		/* 1 GiB, at the cap, and section 2's bytes: too much in all. */
		{ e0 + 8, (uint64_t)1 << 30, 8, "sections add up to more than 1073741824 bytes" },
		/* A byte past the cap in all (section 2 holds 6), then right at
		 * it: that passes to the frame's size, 5. */
		{ e0 + 8, ((uint64_t)1 << 30) - 5, 8, "sections add up to more than 1073741824 bytes" },
		{ e0 + 8, ((uint64_t)1 << 30) - 6, 8, "section 1: compressed data does not match its size" },
		{ e0 + 8, 4, 8, "compressed data does not match its size" },
		{ e0 + 8, 6, 8, "section 1: compressed data does not match its size" },
		{ e0 + 16, 1000, 8, "is misplaced or outside the file" },
		{ e0 + 24, 7, 8, "is misplaced or outside the file" },
		{ e0 + 32, 12345, 8, "section 1 is corrupt" },
		{ 12, 1000, 4, "section table (1000 entries) runs past" },
		{ 12, 5000, 4, "5000 sections (at most" },
		{ 12, 1025, 4, "plan.bin: 1025 sections (at most 1024)" },
		{ 12, 1, 4, "section 1 is misplaced or outside the file (offset 112" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memcpy(d, img, len);
		put_le(d + cases[i].at, cases[i].v, cases[i].n);
		fix_checksum(d, len);
		err[0] = 0;
		assert_null(planfile_open_mem(d, len, "plan.bin", err, sizeof err));
		if (!strstr(err, cases[i].msg))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, err, cases[i].msg);
	}
	free(d);
	free(img);
}

static void file_errors(void **state)
{
	char path[512], err[1024], want[1100];
	test_path(path, sizeof path, "missing.bin");
	assert_null(planfile_open(path, err, sizeof err));
	snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
	assert_string_equal(err, want);

	/* A truncated file on disk is named by its path. */
	size_t len;
	unsigned char *img = real_image(&len);
	test_path(path, sizeof path, "cut.bin");
	FILE *f = fopen(path, "wb");
	fwrite(img, 1, 100, f);
	fclose(f);
	assert_null(plan_load(path, err, sizeof err));
	snprintf(want, sizeof want, "%s: truncated (100 of %zu bytes)", path, len);
	assert_string_equal(err, want);
	free(img);

	/* Saving into a missing directory fails cleanly, leaving nothing. */
	test_path(path, sizeof path, "no/such/dir/plan.bin");
	planfile_writer *w = planfile_writer_create();
	planfile_writer_add(w, 1, "x", 1);
	assert_int_equal(planfile_writer_save(w, path, err, sizeof err), -1);
	assert_true(strncmp(err, path, strlen(path)) == 0);
	planfile_writer_destroy(w);

	/* Saving replaces an existing file atomically and leaves no temporary. */
	test_path(path, sizeof path, "replace.bin");
	f = fopen(path, "wb");
	fputs("old", f);
	fclose(f);
	w = planfile_writer_create();
	planfile_writer_add(w, 1, "x", 1);
	assert_int_equal(planfile_writer_save(w, path, err, sizeof err), 0);
	planfile_writer_destroy(w);
	planfile *p = planfile_open(path, err, sizeof err);
	assert_non_null(p);
	planfile_close(p);
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "ls '%s'.tmp.* >/dev/null 2>&1", path);
	assert_true(system(cmd) != 0);
}

/* A file larger than any plan can be (the header, a full section table
 * and 1 GiB of sections at zstd's worst) is refused from its size, before
 * it is read: a checkpoint passed as the plan by mistake must not be read
 * whole into memory first. Sparse, so it costs no disk. */
static void oversized_file_refused_unread(void **state)
{
	char path[512], err[1024], want[1100];
	const off_t size = ((off_t)1 << 30) + ((off_t)5 << 20);
	test_path(path, sizeof path, "huge.bin");
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite("UMKPLAN", 1, 8, f), 8);
	assert_int_equal(ftruncate(fileno(f), size), 0);
	fclose(f);
	assert_null(planfile_open(path, err, sizeof err));
	unlink(path);
	snprintf(want, sizeof want, "%s: not a umkit plan (%lld bytes is too large)", path,
		 (long long)size);
	assert_string_equal(err, want);
}

/* What a reader refuses as too large is not written: the reader's message
 * would come at the replay, after umplan said nothing. */
static void writer_keeps_reader_limits(void **state)
{
	char path[512], err[1024], want[1100];
	void *d;
	size_t len;
	test_path(path, sizeof path, "refused.bin");
	planfile_writer *w = planfile_writer_create();
	for (uint32_t id = 0; id < 1025; id++)
		assert_int_equal(planfile_writer_add(w, id, "x", 1), 0);
	assert_int_equal(planfile_writer_save(w, path, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: 1025 sections are more than a reader takes (1024)", path);
	assert_string_equal(err, want);
	assert_int_equal(planfile_writer_encode(w, &d, &len), -1);
	assert_int_equal(access(path, F_OK), -1);
	planfile_writer_destroy(w);
	/* 1024 sections, the most a reader takes, are written and read. */
	w = planfile_writer_create();
	for (uint32_t id = 0; id < 1024; id++)
		assert_int_equal(planfile_writer_add(w, id, "x", 1), 0);
	assert_int_equal(planfile_writer_save(w, path, err, sizeof err), 0);
	planfile_writer_destroy(w);
	planfile *pf = planfile_open(path, err, sizeof err);
	if (!pf)
		fail_msg("%s", err);
	assert_int_equal(planfile_section_count(pf), 1024);
	planfile_close(pf);
	unlink(path);

	/* 1 GiB and a byte in two sections (calloc's zero pages: only the
	 * writer's copies take memory). */
	size_t half = (size_t)1 << 29;
	unsigned char *zeros = calloc(half + 1, 1);
	assert_non_null(zeros);
	w = planfile_writer_create();
	assert_int_equal(planfile_writer_add(w, 1, zeros, half), 0);
	assert_int_equal(planfile_writer_add(w, 2, zeros, half + 1), 0);
	free(zeros);
	assert_int_equal(planfile_writer_save(w, path, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: the plan's 1073741825 bytes are more than a reader takes (1073741824)",
		 path);
	assert_string_equal(err, want);
	assert_int_equal(access(path, F_OK), -1);
	planfile_writer_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bytes_round_trip),
		cmocka_unit_test(round_trip),
		cmocka_unit_test(identical_output),
		cmocka_unit_test(every_truncation_fails),
		cmocka_unit_test(every_flip_fails),
		cmocka_unit_test(forged_flips_never_misread),
		cmocka_unit_test(header_messages),
		cmocka_unit_test(bytes_after_the_last_section),
		cmocka_unit_test(is_plan_reads_the_whole_magic),
		cmocka_unit_test(version_1_loads),
		cmocka_unit_test(host_section_needs_version_2),
		cmocka_unit_test(previous_origin_needs_version_3),
		cmocka_unit_test(forged_tables),
		cmocka_unit_test(file_errors),
		cmocka_unit_test(oversized_file_refused_unread),
		cmocka_unit_test(writer_keeps_reader_limits),
	};
	return cmocka_run_group_tests_name("planfile", tests, NULL, NULL);
}
