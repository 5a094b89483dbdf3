/*
 * planfile.c: the plan.bin container (see planfile.h; the byte layout is in
 * docs/plan-format.md).
 *
 * Reading trusts nothing: every length and offset is checked against the
 * bytes actually present before it is used, the file checksum is verified
 * before the section table is believed, and a section is decompressed only
 * into a buffer of its declared (capped) size.
 */
#include "planfile.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "bytes.h"
#include "errmsg.h"
#include "execid.h"
#include "grow.h"
#include "read_file.h"
#include "replace_file.h"

#define MAGIC "UMKPLAN\0"
#define MAGIC_LEN 8
#define HEADER_LEN 32 /* magic, version, count, payload length, checksum */
#define CHECKSUM_AT 24
#define ENTRY_LEN 40  /* id, codec, raw length, stored length, offset, checksum */
#define CODEC_ZSTD 1
/* Fixed so that equal sections give byte-identical files (with one zstd
 * version); 3 is zstd's default: plans compress well and quickly at it. */
#define ZSTD_LEVEL 3
/* Caps on what a file can make the reader allocate. */
#define MAX_SECTIONS 1024u
/* Decompressed bytes, per section and in all: what a plan's own lengths
 * may make the reader allocate. The plan of bench/plan_1m.sh's
 * million-kernel trace is 0.57 MB decompressed. */
#define MAX_RAW_BYTES ((uint64_t)1 << 30)
/* The largest file a plan can be: the header, a full section table, and
 * MAX_RAW_BYTES of sections at zstd's worst (ZSTD_COMPRESSBOUND of the
 * total, plus a margin of at most ZSTD_COMPRESSBOUND(0) per section). A
 * larger file is refused from its size, before it is read into memory (a
 * checkpoint passed as the plan by mistake). */
#define MAX_FILE_BYTES \
	(HEADER_LEN + (uint64_t)MAX_SECTIONS * (ENTRY_LEN + ZSTD_COMPRESSBOUND(0)) + \
	 ZSTD_COMPRESSBOUND(MAX_RAW_BYTES))

struct section {
	uint32_t id;
	unsigned char *data;
	size_t len;
};

struct planfile_writer {
	struct section *s;
	size_t n, cap;
};

struct planfile {
	struct section *s;
	size_t n;
	uint32_t version; /* the header's format version */
};

/* The file checksum: FNV-1a 64 over every byte of the file except the
 * checksum field itself, so a change anywhere (header included) is caught.
 * FNV-1a maps each step bijectively, so any single changed byte always
 * changes the result. */
static uint64_t file_checksum(const unsigned char *file, size_t len)
{
	uint64_t h = execid_fnv1a(EXECID_FNV_SEED, file, CHECKSUM_AT);
	return execid_fnv1a(h, file + HEADER_LEN, len - HEADER_LEN);
}

/* A section's checksum covers its id too, so a damaged id can not pass a
 * section off as another one. */
static uint64_t section_checksum(uint32_t id, const void *data, size_t len)
{
	unsigned char b[4];
	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(id >> (8 * i));
	return execid_fnv1a(execid_fnv1a(EXECID_FNV_SEED, b, sizeof b), data, len);
}

planfile_writer *planfile_writer_create(void)
{
	return calloc(1, sizeof(planfile_writer));
}

static void free_sections(struct section *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].data);
	free(s);
}

void planfile_writer_destroy(planfile_writer *w)
{
	if (!w)
		return;
	free_sections(w->s, w->n);
	free(w);
}

int planfile_writer_add(planfile_writer *w, uint32_t id, const void *data, size_t len)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->s[i].id == id)
			return -1;
	struct section *s = room_for_one(w->s, w->n, &w->cap, sizeof *s, 8);
	if (!s)
		return -1;
	w->s = s;
	unsigned char *copy = malloc(len ? len : 1);
	if (!copy)
		return -1;
	if (len)
		memcpy(copy, data, len);
	w->s[w->n++] = (struct section){ id, copy, len };
	return 0;
}

static int by_id(const void *a, const void *b)
{
	uint32_t x = ((const struct section *)a)->id, y = ((const struct section *)b)->id;
	return (x > y) - (x < y);
}

/* Whether a reader would take w's sections (check_header,
 * check_raw_total): a plan written beyond its limits would be refused by
 * every umreplay as "too large" after umplan said nothing. Sets err if
 * not. */
static bool readable(const planfile_writer *w, const char *path, char *err, size_t errlen)
{
	uint64_t total = 0;
	for (size_t i = 0; i < w->n; i++)
		total += w->s[i].len;
	if (w->n > MAX_SECTIONS)
		um_errmsg(err, errlen, "%s: %zu sections are more than a reader takes (%u)", path, w->n,
			  MAX_SECTIONS);
	else if (total > MAX_RAW_BYTES)
		um_errmsg(err, errlen, "%s: the plan's %llu bytes are more than a reader takes (%llu)", path,
			  (unsigned long long)total, (unsigned long long)MAX_RAW_BYTES);
	return w->n <= MAX_SECTIONS && total <= MAX_RAW_BYTES;
}

/* Builds the whole file image in out. Sections go in id order, so the order
 * in which they were added does not change the bytes. */
static int build_image(planfile_writer *w, struct bytes_buf *out, char *err, size_t errlen,
		       const char *path)
{
	if (!readable(w, path, err, errlen))
		return -1;
	if (w->n > 1)
		qsort(w->s, w->n, sizeof *w->s, by_id);
	size_t n = w->n;
	void **z = calloc(n ? n : 1, sizeof *z);
	size_t *zlen = calloc(n ? n : 1, sizeof *zlen);
	int rc = -1;
	if (!z || !zlen) {
		um_errmsg(err, errlen, "%s: out of memory", path);
		goto out;
	}
	uint64_t offset = HEADER_LEN + (uint64_t)n * ENTRY_LEN;
	for (size_t i = 0; i < n; i++) {
		size_t bound = ZSTD_compressBound(w->s[i].len);
		z[i] = malloc(bound);
		if (!z[i]) {
			um_errmsg(err, errlen, "%s: out of memory", path);
			goto out;
		}
		zlen[i] = ZSTD_compress(z[i], bound, w->s[i].data, w->s[i].len, ZSTD_LEVEL);
		if (ZSTD_isError(zlen[i])) {
			um_errmsg(err, errlen, "%s: compressing section %u: %s", path,
			       (unsigned)w->s[i].id, ZSTD_getErrorName(zlen[i]));
			goto out;
		}
	}
	bytes_put_raw(out, MAGIC, MAGIC_LEN);
	bytes_put_u32(out, PLANFILE_VERSION);
	bytes_put_u32(out, (uint32_t)n);
	bytes_put_u64(out, 0); /* payload length, patched below */
	bytes_put_u64(out, 0); /* checksum, patched below */
	for (size_t i = 0; i < n; i++) {
		bytes_put_u32(out, w->s[i].id);
		bytes_put_u32(out, CODEC_ZSTD);
		bytes_put_u64(out, w->s[i].len);
		bytes_put_u64(out, zlen[i]);
		bytes_put_u64(out, offset);
		bytes_put_u64(out, section_checksum(w->s[i].id, w->s[i].data, w->s[i].len));
		offset += zlen[i];
	}
	for (size_t i = 0; i < n; i++)
		bytes_put_raw(out, z[i], zlen[i]);
	if (out->oom) {
		um_errmsg(err, errlen, "%s: out of memory", path);
		goto out;
	}
	uint64_t payload = out->len - HEADER_LEN;
	uint64_t sum;
	for (int i = 0; i < 8; i++)
		out->data[16 + i] = (unsigned char)(payload >> (8 * i));
	sum = file_checksum(out->data, out->len);
	for (int i = 0; i < 8; i++)
		out->data[CHECKSUM_AT + i] = (unsigned char)(sum >> (8 * i));
	rc = 0;
out:
	for (size_t i = 0; z && i < n; i++)
		free(z[i]);
	free(z);
	free(zlen);
	return rc;
}

int planfile_writer_encode(planfile_writer *w, void **data, size_t *len)
{
	struct bytes_buf img = { 0 };
	if (build_image(w, &img, NULL, 0, "") != 0) {
		bytes_buf_free(&img);
		return -1;
	}
	*data = img.data;
	*len = img.len;
	return 0;
}

bool planfile_is_plan(FILE *f)
{
	char magic[MAGIC_LEN];
	return fread(magic, 1, MAGIC_LEN, f) == MAGIC_LEN && memcmp(magic, MAGIC, MAGIC_LEN) == 0;
}

int planfile_writer_save(planfile_writer *w, const char *path, char *err, size_t errlen)
{
	struct bytes_buf img = { 0 };
	if (build_image(w, &img, err, errlen, path) != 0) {
		bytes_buf_free(&img);
		return -1;
	}
	struct replace_file out;
	int rc = -1;
	if (replace_file_begin(&out, path, err, errlen) == 0) {
		fwrite(img.data, 1, img.len, out.f); /* a failure shows at the commit */
		rc = replace_file_commit(&out, err, errlen);
	}
	bytes_buf_free(&img);
	return rc;
}

void planfile_close(planfile *p)
{
	if (!p)
		return;
	free_sections(p->s, p->n);
	free(p);
}

/* Checks the header against the bytes present. Returns the section count, or
 * -1 with err set. */
static long check_header(const unsigned char *d, size_t len, const char *name, char *err,
			 size_t errlen)
{
	if (len == 0) {
		um_errmsg(err, errlen, "%s: not a umkit plan (empty file)", name);
		return -1;
	}
	size_t m = len < MAGIC_LEN ? len : MAGIC_LEN;
	if (memcmp(d, MAGIC, m) != 0) {
		um_errmsg(err, errlen, "%s: not a umkit plan (bad magic)", name);
		return -1;
	}
	if (len < HEADER_LEN) {
		um_errmsg(err, errlen, "%s: truncated (%zu of at least %d bytes)", name, len, HEADER_LEN);
		return -1;
	}
	struct bytes_reader r = bytes_reader_init(d + MAGIC_LEN, HEADER_LEN - MAGIC_LEN);
	uint32_t version = bytes_get_u32(&r);
	uint32_t count = bytes_get_u32(&r);
	uint64_t payload = bytes_get_u64(&r);
	uint64_t sum = bytes_get_u64(&r);
	/* The version is checked before anything else a newer format might
	 * have changed, so the user hears "upgrade umkit" and not "corrupt". */
	if (version > PLANFILE_VERSION) {
		um_errmsg(err, errlen, "%s: format version %u is newer than this umkit (%d)", name,
		       (unsigned)version, PLANFILE_VERSION);
		return -1;
	}
	if (version < 1) {
		um_errmsg(err, errlen, "%s: format version %u is not supported (this umkit reads 1 "
		       "to %d)", name, (unsigned)version, PLANFILE_VERSION);
		return -1;
	}
	if (payload > len - HEADER_LEN) {
		um_errmsg(err, errlen, "%s: truncated (%zu of %llu bytes)", name, len,
		       (unsigned long long)(payload > UINT64_MAX - HEADER_LEN ? UINT64_MAX
								    : HEADER_LEN + payload));
		return -1;
	}
	if (payload < len - HEADER_LEN) {
		um_errmsg(err, errlen, "%s: %llu unexpected bytes after the end of the plan", name,
		       (unsigned long long)(len - HEADER_LEN - payload));
		return -1;
	}
	if (file_checksum(d, len) != sum) {
		um_errmsg(err, errlen, "%s: checksum mismatch (file corrupt)", name);
		return -1;
	}
	if (count > MAX_SECTIONS) {
		um_errmsg(err, errlen, "%s: %u sections (at most %u)", name, (unsigned)count,
		       MAX_SECTIONS);
		return -1;
	}
	return (long)count;
}

/* Checks the decompressed lengths the count entries of the section table
 * at table declare, before anything is decompressed: each, and their sum,
 * at most MAX_RAW_BYTES (a few bytes of zstd can declare gigabytes).
 * Returns 0, or -1 with err set. */
static int check_raw_total(const unsigned char *table, long count, const char *name, char *err,
			   size_t errlen)
{
	uint64_t total = 0;
	for (long i = 0; i < count; i++) {
		struct bytes_reader e = bytes_reader_init(table + (size_t)i * ENTRY_LEN, ENTRY_LEN);
		uint32_t id = bytes_get_u32(&e);
		bytes_get_u32(&e); /* codec */
		uint64_t raw = bytes_get_u64(&e);
		if (raw > MAX_RAW_BYTES) {
			um_errmsg(err, errlen, "%s: section %u is too large (%llu bytes)", name,
			       (unsigned)id, (unsigned long long)raw);
			return -1;
		}
		total += raw;
		if (total > MAX_RAW_BYTES) {
			um_errmsg(err, errlen, "%s: its sections add up to more than %llu bytes decompressed",
			       name, (unsigned long long)MAX_RAW_BYTES);
			return -1;
		}
	}
	return 0;
}

planfile *planfile_open_mem(const void *data, size_t len, const char *name, char *err,
			    size_t errlen)
{
	const unsigned char *d = data;
	long count = check_header(d, len, name, err, errlen);
	if (count < 0)
		return NULL;
	planfile *p = calloc(1, sizeof *p);
	if (p)
		p->s = calloc(count ? (size_t)count : 1, sizeof *p->s);
	if (!p || !p->s) {
		planfile_close(p);
		um_errmsg(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	struct bytes_reader version = bytes_reader_init(d + MAGIC_LEN, 4);
	p->version = bytes_get_u32(&version);
	struct bytes_reader r = bytes_reader_init(d + HEADER_LEN, len - HEADER_LEN);
	if (!bytes_can_hold(&r, (uint64_t)count, ENTRY_LEN)) {
		um_errmsg(err, errlen, "%s: section table (%ld entries) runs past the end of the file",
		       name, count);
		goto fail;
	}
	if (check_raw_total(d + HEADER_LEN, count, name, err, errlen) != 0)
		goto fail;
	/* Sections follow the table back to back, in table order: any gap or
	 * overlap means the table is wrong. */
	uint64_t expect = HEADER_LEN + (uint64_t)count * ENTRY_LEN;
	for (long i = 0; i < count; i++) {
		uint32_t id = bytes_get_u32(&r);
		uint32_t codec = bytes_get_u32(&r);
		uint64_t raw = bytes_get_u64(&r);
		uint64_t stored = bytes_get_u64(&r);
		uint64_t offset = bytes_get_u64(&r);
		uint64_t sum = bytes_get_u64(&r);
		for (size_t j = 0; j < p->n; j++) {
			if (p->s[j].id == id) {
				um_errmsg(err, errlen, "%s: section %u appears twice", name, (unsigned)id);
				goto fail;
			}
		}
		if (codec != CODEC_ZSTD) {
			um_errmsg(err, errlen, "%s: section %u has unknown compression %u", name,
			       (unsigned)id, (unsigned)codec);
			goto fail;
		}
		if (offset != expect || stored > len - expect) {
			um_errmsg(err, errlen,
			       "%s: section %u is misplaced or outside the file (offset %llu, "
			       "%llu bytes)", name, (unsigned)id, (unsigned long long)offset,
			       (unsigned long long)stored);
			goto fail;
		}
		const unsigned char *src = d + offset;
		unsigned long long fcs = ZSTD_getFrameContentSize(src, (size_t)stored);
		if (fcs != raw) {
			um_errmsg(err, errlen, "%s: section %u: compressed data does not match its size",
			       name, (unsigned)id);
			goto fail;
		}
		unsigned char *buf = malloc(raw ? (size_t)raw : 1);
		if (!buf) {
			um_errmsg(err, errlen, "%s: out of memory", name);
			goto fail;
		}
		size_t got = ZSTD_decompress(buf, (size_t)raw, src, (size_t)stored);
		if (ZSTD_isError(got) || got != raw || section_checksum(id, buf, (size_t)raw) != sum) {
			free(buf);
			um_errmsg(err, errlen, "%s: section %u is corrupt", name, (unsigned)id);
			goto fail;
		}
		p->s[p->n++] = (struct section){ id, buf, (size_t)raw };
		expect += stored;
	}
	if (expect != len) {
		um_errmsg(err, errlen, "%s: %llu bytes after the last section", name,
		       (unsigned long long)(len - expect));
		goto fail;
	}
	return p;
fail:
	planfile_close(p);
	return NULL;
}

planfile *planfile_open(const char *path, char *err, size_t errlen)
{
	struct read_file f;
	switch (read_regular_file(path, MAX_FILE_BYTES, &f)) {
	case READ_OK:
		break;
	case READ_CANNOT_OPEN:
		um_errmsg(err, errlen, "%s: cannot open: %s", path, strerror(f.error));
		return NULL;
	case READ_NOT_REGULAR:
		um_errmsg(err, errlen, "%s: not a regular file", path);
		return NULL;
	case READ_TOO_LARGE:
		um_errmsg(err, errlen, "%s: not a umkit plan (%lld bytes is too large)", path, (long long)f.st.st_size);
		return NULL;
	case READ_NO_MEMORY:
		um_errmsg(err, errlen, "%s: out of memory", path);
		return NULL;
	case READ_FAILED:
		um_errmsg(err, errlen, "%s: cannot read: %s", path, strerror(f.error));
		return NULL;
	}
	planfile *p = planfile_open_mem(f.data, f.len, path, err, errlen);
	free(f.data);
	return p;
}

const void *planfile_section(const planfile *p, uint32_t id, size_t *len)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->s[i].id == id) {
			if (len)
				*len = p->s[i].len;
			return p->s[i].data;
		}
	}
	if (len)
		*len = 0;
	return NULL;
}

uint32_t planfile_version(const planfile *p)
{
	return p->version;
}

size_t planfile_section_count(const planfile *p)
{
	return p->n;
}

uint32_t planfile_section_id(const planfile *p, size_t index)
{
	return index < p->n ? p->s[index].id : 0;
}
