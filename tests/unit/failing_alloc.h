/*
 * failing_alloc.h: malloc, calloc and realloc made to fail on demand,
 * for the paths taken when memory runs out. A test linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (Makefile: its
 * TEST_LDFLAGS) includes this once; every malloc (calloc, realloc) of the
 * program, the libraries it links statically included, returns NULL while
 * malloc_fails (calloc_fails, realloc_fails) is set; and the
 * calloc_fail_in-th calloc from the time it is set fails, once (0: none).
 */
#ifndef UMKIT_FAILING_ALLOC_H
#define UMKIT_FAILING_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);

static bool malloc_fails, calloc_fails, realloc_fails;
static unsigned calloc_fail_in;

void *__wrap_malloc(size_t size)
{
	return malloc_fails ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	if (calloc_fail_in && --calloc_fail_in == 0)
		return NULL;
	return calloc_fails ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return realloc_fails ? NULL : __real_realloc(p, size);
}

#endif
