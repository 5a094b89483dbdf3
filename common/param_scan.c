/* param_scan.c: pointer words of a kernel's parameters (see param_scan.h). */
#include "param_scan.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* One bit per word start (words start at 4-byte-aligned offsets): set once
 * the word has held something other than an arena address. */
struct param_slots {
	uint32_t bits;
	_Atomic uint64_t unsteady[];
};

param_slots *param_slots_create(uint32_t buffer_bytes)
{
	uint32_t bits = buffer_bytes / 4 + 1;
	param_slots *s = calloc(1, sizeof *s + (bits / 64 + 1) * sizeof s->unsteady[0]);
	if (s)
		s->bits = bits;
	return s;
}

void param_slots_destroy(param_slots *s)
{
	free(s);
}

static void add(struct param_args *out, uint32_t at, uint64_t word, const struct arena_alloc *alloc,
		bool steady)
{
	if (out->n == out->cap) {
		out->truncated = true;
		return;
	}
	out->args[out->n++] = (struct param_arg){ at, *alloc, word - alloc->address, steady };
}

void param_scan(param_slots *slots, arena *a, uint32_t base, const unsigned char *p,
		size_t len, struct param_args *out)
{
	bool small = len <= PARAM_SMALL_BYTES;
	for (size_t o = 0; o + 8 <= len; o += 8) {
		uint32_t at = base + (uint32_t)o, bit = at / 4;
		_Atomic uint64_t *mask = slots && bit < slots->bits ? &slots->unsteady[bit / 64] : NULL;
		uint64_t flag = UINT64_C(1) << (bit % 64);
		bool unsteady = mask && (atomic_load_explicit(mask, memory_order_relaxed) & flag);
		if (small && unsteady)
			continue; /* ruled out: padding */
		uint64_t word;
		struct arena_alloc alloc;
		memcpy(&word, p + o, 8);
		/* Cheap rejections first: most words are small integers or floats. */
		if (word >= 4096 && arena_lookup(a, word, &alloc))
			add(out, at, word, &alloc, !unsteady);
		else if (mask && !unsteady && (word || !small))
			atomic_fetch_or_explicit(mask, flag, memory_order_relaxed);
	}
}
