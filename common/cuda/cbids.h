/*
 * cbids.h: lists of CUPTI callback ids (the calls a library subscribes to,
 * sorted into kinds by such lists): where an id stands in one, and
 * subscribing to one.
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

/* Enables subscriber's driver-API callbacks for list[0 .. n), stopping
 * at the first refusal, which it returns. */
static inline CUptiResult cbids_enable(CUpti_SubscriberHandle subscriber, const CUpti_CallbackId *list, size_t n)
{
	CUptiResult r = CUPTI_SUCCESS;
	for (size_t i = 0; i < n && r == CUPTI_SUCCESS; i++)
		r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, list[i]);
	return r;
}

#endif
