/*
 * failing_realloc.h: realloc made to fail on demand, for the paths taken
 * when memory runs out. A test linked with -Wl,--wrap=realloc (Makefile:
 * its TEST_LDFLAGS) includes this once; every realloc of the program, the
 * libraries it links statically included, returns NULL while
 * realloc_fails is set.
 */
#ifndef UMKIT_FAILING_REALLOC_H
#define UMKIT_FAILING_REALLOC_H

#include <stdbool.h>
#include <stddef.h>

void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);

static bool realloc_fails;

void *__wrap_realloc(void *p, size_t size)
{
	return realloc_fails ? NULL : __real_realloc(p, size);
}

#endif
