/*
 * bytes.h: little-endian encoding into growable buffers, and decoding with
 * bounds checks, for the plan sections.
 *
 * A reader never reads past its end: once a get fails, the reader is marked
 * bad, every later get returns 0, and the caller checks bytes_reader_ok()
 * once at the end, so decoding code stays linear and can not crash on
 * hostile input.
 */
#ifndef UMKIT_BYTES_H
#define UMKIT_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bytes_buf {
	unsigned char *data;
	size_t len, cap;
	bool oom; /* an append failed: the buffer is incomplete */
};

void bytes_put_u8(struct bytes_buf *b, uint8_t v);
void bytes_put_u32(struct bytes_buf *b, uint32_t v);
void bytes_put_u64(struct bytes_buf *b, uint64_t v);
void bytes_put_raw(struct bytes_buf *b, const void *data, size_t len);
void bytes_buf_free(struct bytes_buf *b);

struct bytes_reader {
	const unsigned char *data;
	size_t len, pos;
	bool bad;
};

static inline struct bytes_reader bytes_reader_init(const void *data, size_t len)
{
	struct bytes_reader r = { data, len, 0, false };
	return r;
}
uint8_t bytes_get_u8(struct bytes_reader *r);
uint32_t bytes_get_u32(struct bytes_reader *r);
uint64_t bytes_get_u64(struct bytes_reader *r);
/* Returns a pointer to len bytes inside the buffer, or NULL (and bad). */
const void *bytes_get_raw(struct bytes_reader *r, size_t len);
/* For counts read from the input: true if count elements of elem_size bytes
 * could still follow (so a hostile count can not cause a huge allocation). */
bool bytes_can_hold(const struct bytes_reader *r, uint64_t count, size_t elem_size);
static inline bool bytes_reader_ok(const struct bytes_reader *r)
{
	return !r->bad;
}

#endif
