/* addr_set.c: a set of addresses that threads share (see addr_set.h). */
#include "addr_set.h"

#include <string.h>

#include "grow.h"
#include "search.h"

/* Whether address is in the set, with where it is or would go in *at;
 * the lock held. */
static bool find(const struct addr_set *s, uint64_t address, size_t *at)
{
	*at = lower_bound_u64(s->a, s->n, sizeof *s->a, 0, address);
	return *at < s->n && s->a[*at] == address;
}

int addr_set_add(struct addr_set *s, uint64_t address)
{
	int rc = 0;
	size_t i;
	pthread_mutex_lock(&s->lock);
	if (!find(s, address, &i)) {
		uint64_t *a = room_for_one(s->a, s->n, &s->cap, sizeof *a, 16);
		if (a) {
			s->a = a;
			memmove(a + i + 1, a + i, (s->n - i) * sizeof *a);
			a[i] = address;
			atomic_store(&s->size, ++s->n);
		} else {
			rc = -1;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

bool addr_set_remove(struct addr_set *s, uint64_t address)
{
	size_t i;
	if (!atomic_load(&s->size))
		return false;
	pthread_mutex_lock(&s->lock);
	bool there = find(s, address, &i);
	if (there) {
		memmove(s->a + i, s->a + i + 1, (s->n - i - 1) * sizeof *s->a);
		atomic_store(&s->size, --s->n);
	}
	pthread_mutex_unlock(&s->lock);
	return there;
}

bool addr_set_has(struct addr_set *s, uint64_t address)
{
	size_t i;
	if (!atomic_load(&s->size))
		return false;
	pthread_mutex_lock(&s->lock);
	bool there = find(s, address, &i);
	pthread_mutex_unlock(&s->lock);
	return there;
}
