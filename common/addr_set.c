/* addr_set.c: a set of address ranges that threads share (see addr_set.h). */
#include "addr_set.h"

#include <stddef.h>
#include <string.h>

#include "grow.h"
#include "search.h"

/* Where the first range starting at or after address is or would go; the
 * lock held. */
static size_t bound(const struct addr_set *s, uint64_t address)
{
	return lower_bound_u64(s->a, s->n, sizeof *s->a, offsetof(struct addr_range, address), address);
}

static bool starts_at(const struct addr_set *s, size_t i, uint64_t address)
{
	return i < s->n && s->a[i].address == address;
}

/* Whether range r ends after address. */
static bool ends_after(const struct addr_range *r, uint64_t address)
{
	return r->address + r->size > address || r->address + r->size < r->address; /* or wraps */
}

int addr_set_add(struct addr_set *s, uint64_t address, uint64_t size)
{
	int rc = 0;
	pthread_mutex_lock(&s->lock);
	size_t i = bound(s, address), j = i;
	if (i > 0 && ends_after(&s->a[i - 1], address))
		i--;
	while (j < s->n && (s->a[j].address == address || s->a[j].address - address < size))
		j++; /* s->a[i..j) overlap the new range */
	if (j > i) {
		memmove(s->a + i, s->a + j, (s->n - j) * sizeof *s->a);
		s->n -= j - i;
	}
	struct addr_range *a = room_for_one(s->a, s->n, &s->cap, sizeof *a, 16);
	if (a) {
		s->a = a;
		memmove(a + i + 1, a + i, (s->n - i) * sizeof *a);
		a[i] = (struct addr_range){ address, size };
		s->n++;
	} else {
		rc = -1;
	}
	atomic_store(&s->size, s->n);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

bool addr_set_remove(struct addr_set *s, uint64_t address, uint64_t *size)
{
	if (!atomic_load(&s->size))
		return false;
	pthread_mutex_lock(&s->lock);
	size_t i = bound(s, address);
	bool there = starts_at(s, i, address);
	if (there) {
		if (size)
			*size = s->a[i].size;
		memmove(s->a + i, s->a + i + 1, (s->n - i - 1) * sizeof *s->a);
		atomic_store(&s->size, --s->n);
	}
	pthread_mutex_unlock(&s->lock);
	return there;
}

bool addr_set_has(struct addr_set *s, uint64_t address)
{
	if (!atomic_load(&s->size))
		return false;
	pthread_mutex_lock(&s->lock);
	bool there = starts_at(s, bound(s, address), address);
	pthread_mutex_unlock(&s->lock);
	return there;
}

bool addr_set_covers(struct addr_set *s, uint64_t address)
{
	if (!atomic_load(&s->size))
		return false;
	pthread_mutex_lock(&s->lock);
	/* The last range starting at or before address. */
	size_t i = upper_bound_u64(s->a, s->n, sizeof *s->a, offsetof(struct addr_range, address), address);
	bool inside = i > 0 && address - s->a[i - 1].address < s->a[i - 1].size;
	pthread_mutex_unlock(&s->lock);
	return inside;
}
