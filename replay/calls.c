/* calls.c: cutting ranges into driver calls (see calls.h). */
#include "calls.h"

#include "blocktab.h"

uint64_t calls_split(const struct engine_range *ranges, size_t n, uint64_t max_bytes,
		     const struct calls_target *t)
{
	struct engine_range *piece = t->piece;
	uint64_t bytes = 0, skipped = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t address = ranges[i].address, left = ranges[i].bytes;
		while (left) {
			uint64_t len = t->extent ? t->extent(t->ctx, address, left) : left;
			if (!len) {
				/* Unmapped: mappings are whole 2 MB blocks. */
				len = left < BLOCK_BYTES ? left : BLOCK_BYTES;
				skipped += len;
			} else {
				if (len > max_bytes - bytes)
					len = max_bytes - bytes;
				piece[k++] = (struct engine_range){ address, len };
				bytes += len;
			}
			address += len;
			left -= len;
			if (k == CALLS_MAX_RANGES || bytes == max_bytes) {
				t->emit(t->ctx, piece, k);
				k = 0;
				bytes = 0;
			}
		}
	}
	if (k)
		t->emit(t->ctx, piece, k);
	return skipped;
}
