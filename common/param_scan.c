/* param_scan.c: pointer words of a kernel's parameters (see param_scan.h). */
#include "param_scan.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Two bitmaps of one bit per word start (words start at 4-byte-aligned
 * offsets): the word has held something other than an arena address
 * (unsteady), and, of a small parameter, something other than an address
 * at all (padding: ruled out). */
struct param_slots {
	uint32_t bits, words;   /* words: of each bitmap */
	_Atomic uint64_t map[]; /* unsteady, then padding */
};

param_slots *param_slots_create(uint32_t buffer_bytes)
{
	uint32_t bits = buffer_bytes / 4 + 1, words = bits / 64 + 1;
	param_slots *s = calloc(1, sizeof *s + 2 * words * sizeof s->map[0]);
	if (s)
		s->bits = bits, s->words = words;
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

static bool test(_Atomic uint64_t *word, uint64_t flag)
{
	return word && (atomic_load_explicit(word, memory_order_relaxed) & flag);
}

static void set(_Atomic uint64_t *word, uint64_t flag)
{
	atomic_fetch_or_explicit(word, flag, memory_order_relaxed);
}

void param_scan(param_slots *slots, arena *a, struct addr_set *foreign, uint32_t base,
		const unsigned char *p, size_t len, struct param_args *out)
{
	bool small = len <= PARAM_SMALL_BYTES;
	for (size_t o = 0; o + 8 <= len; o += 8) {
		uint32_t at = base + (uint32_t)o, bit = at / 4;
		bool known = slots && bit < slots->bits;
		_Atomic uint64_t *unsteady = known ? &slots->map[bit / 64] : NULL,
				 *padding = known ? &slots->map[slots->words + bit / 64] : NULL;
		uint64_t flag = UINT64_C(1) << (bit % 64);
		if (small && test(padding, flag))
			continue; /* ruled out */
		bool steady = !test(unsteady, flag);
		uint64_t word;
		struct arena_alloc alloc;
		memcpy(&word, p + o, 8);
		/* Cheap rejections first: most words are small integers or floats. */
		if (word >= 4096 && arena_lookup(a, word, &alloc)) {
			add(out, at, word, &alloc, steady);
			continue;
		}
		if (!known || (!word && small))
			continue;
		if (steady)
			set(unsteady, flag);
		if (small && !(foreign && addr_set_covers(foreign, word)))
			set(padding, flag);
	}
}
