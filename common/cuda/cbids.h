/*
 * cbids.h: where a CUPTI callback id stands in a list of them (the calls a
 * library subscribes to, sorted into kinds by such lists).
 */
#ifndef UMKIT_CBIDS_H
#define UMKIT_CBIDS_H

#include <stddef.h>

#include <cupti.h>

/* The index of cbid in list[0 .. n), or -1. */
static inline int cbid_index(const CUpti_CallbackId *list, size_t n, CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == cbid)
			return (int)i;
	return -1;
}

#endif
