/* thread_scratch.c: a buffer per thread (see thread_scratch.h). */
#include "thread_scratch.h"

#include <stdbool.h>
#include <stdlib.h>

static bool make_key(struct thread_scratch *s)
{
	static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&making);
	if (!atomic_load(&s->made) && pthread_key_create(&s->key, free) == 0)
		atomic_store(&s->made, true);
	pthread_mutex_unlock(&making);
	return atomic_load(&s->made);
}

void *thread_scratch_get(struct thread_scratch *s)
{
	if (!atomic_load_explicit(&s->made, memory_order_acquire) && !make_key(s))
		return NULL;
	void *buf = pthread_getspecific(s->key);
	if (buf)
		return buf;
	/* Also in a thread's exit, after the key's destructor freed the
	 * first: glibc runs the destructors again for what they left. */
	buf = malloc(s->size);
	if (buf && pthread_setspecific(s->key, buf) != 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}
