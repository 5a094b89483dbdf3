/* bytes.c: little-endian put/get with bounds checks (see bytes.h). */
#include "bytes.h"

#include <stdlib.h>
#include <string.h>

/* Makes room for n more bytes; false (and oom set) if that fails. Once a
 * put has failed the buffer stays failed, so a caller checks oom once. */
static bool reserve(struct bytes_buf *b, size_t n)
{
	if (b->oom)
		return false;
	if (n <= b->cap - b->len)
		return true;
	if (n > SIZE_MAX - b->len) {
		b->oom = true;
		return false;
	}
	size_t need = b->len + n;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	unsigned char *p = realloc(b->data, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

static void put_le(struct bytes_buf *b, uint64_t v, size_t n)
{
	if (!reserve(b, n))
		return;
	for (size_t i = 0; i < n; i++)
		b->data[b->len + i] = (unsigned char)(v >> (8 * i));
	b->len += n;
}

void bytes_put_u8(struct bytes_buf *b, uint8_t v)
{
	put_le(b, v, 1);
}

void bytes_put_u32(struct bytes_buf *b, uint32_t v)
{
	put_le(b, v, 4);
}

void bytes_put_u64(struct bytes_buf *b, uint64_t v)
{
	put_le(b, v, 8);
}

void bytes_put_raw(struct bytes_buf *b, const void *data, size_t len)
{
	if (len == 0 || !reserve(b, len))
		return;
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

void bytes_buf_free(struct bytes_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

static uint64_t get_le(struct bytes_reader *r, size_t n)
{
	if (r->bad || n > r->len - r->pos) {
		r->bad = true;
		return 0;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->data[r->pos + i] << (8 * i);
	r->pos += n;
	return v;
}

uint8_t bytes_get_u8(struct bytes_reader *r)
{
	return (uint8_t)get_le(r, 1);
}

uint32_t bytes_get_u32(struct bytes_reader *r)
{
	return (uint32_t)get_le(r, 4);
}

uint64_t bytes_get_u64(struct bytes_reader *r)
{
	return get_le(r, 8);
}

const void *bytes_get_raw(struct bytes_reader *r, size_t len)
{
	static const unsigned char empty[1];
	if (r->bad || len > r->len - r->pos) {
		r->bad = true;
		return NULL;
	}
	/* An empty reader may have no buffer at all; NULL means failure. */
	if (!r->data)
		return empty;
	const void *p = r->data + r->pos;
	r->pos += len;
	return p;
}

bool bytes_can_hold(const struct bytes_reader *r, uint64_t count, size_t elem_size)
{
	if (r->bad)
		return false;
	size_t left = r->len - r->pos;
	return count <= left / (elem_size ? elem_size : 1);
}
