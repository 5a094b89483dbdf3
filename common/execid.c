/* execid.c: execution-ID hashing (see execid.h). */
#include "execid.h"

#include <string.h>

uint64_t execid_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t mix_u64(uint64_t h, uint64_t v)
{
	/* Fixed little-endian byte order, so IDs agree across builds. */
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	return execid_fnv1a(h, b, sizeof b);
}

uint64_t execid_name_state(const char *name)
{
	return execid_fnv1a(EXECID_FNV_SEED, name, strlen(name) + 1);
}

/* The hash of everything but the arguments. */
static uint64_t shape_state(const struct execid_launch *l)
{
	uint64_t h = l->name_state ? l->name_state : execid_name_state(l->name);
	for (int i = 0; i < 3; i++) {
		h = mix_u64(h, l->grid[i]);
		h = mix_u64(h, l->block[i]);
	}
	return mix_u64(h, l->shared_mem);
}

/* Finalizer (splitmix64): spreads the low bits for hash-table use. */
static uint64_t finish(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h ? h : 1;
}

uint64_t execid_begin(const struct execid_launch *l, uint64_t *shape_id)
{
	uint64_t h = shape_state(l);
	if (shape_id)
		*shape_id = finish(h);
	return h;
}

uint64_t execid_add_arg(uint64_t h, const struct execid_arg *arg)
{
	h = mix_u64(h, arg->param_offset);
	h = mix_u64(h, arg->alloc_size);
	return mix_u64(h, arg->offset);
}

uint64_t execid_end(uint64_t h)
{
	return finish(h);
}

uint64_t execid_of(const struct execid_launch *l, uint64_t *shape_id)
{
	uint64_t h = execid_begin(l, shape_id);
	for (size_t i = 0; i < l->nargs; i++)
		h = execid_add_arg(h, &l->args[i]);
	return execid_end(h);
}

uint64_t execid_shape_of(const struct execid_launch *l)
{
	return finish(shape_state(l));
}
