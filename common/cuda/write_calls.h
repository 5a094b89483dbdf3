/*
 * write_calls.h: the driver calls that write device memory other than
 * through a kernel (copies, memsets, stream memory operations, and the
 * calls that run host code), and where each writes.
 *
 * Both tools follow them: the replayer tells its engine which allocation
 * a call writes, or that it may have written any (an allocation written
 * is no longer fresh, and a discard-and-prefetch of it would destroy what
 * the call put there: docs/replay.md, "What discard may touch"); the
 * recorder writes the destination into the trace (table write_dst), from
 * which umplan tells the same apart (docs/trace-schema.md).
 */
#ifndef UMKIT_WRITE_CALLS_H
#define UMKIT_WRITE_CALLS_H

#include <stdint.h>

#include <cuda.h>
#include <cupti.h>

/* What a driver call tells of where it writes. */
enum write_dst {
	WRITE_NONE,    /* not one of these calls: it writes no device memory */
	WRITE_AT,      /* writes from the destination its parameters name */
	WRITE_UNKNOWN, /* may write where its parameters do not say */
};

/* Where the driver call cbid, with the parameter struct params
 * (CUpti_CallbackData's functionParams), writes; *dst is set for
 * WRITE_AT only. */
enum write_dst write_call_dst(CUpti_CallbackId cbid, const void *params, CUdeviceptr *dst);

/* The id of the arena's allocation that holds dst, or 0 where none does
 * (memory the program got past the arena, host memory, or no arena yet). */
uint64_t write_dst_alloc(CUdeviceptr dst);

/* Enables subscriber's callbacks at every call write_call_dst knows,
 * stopping at the first refusal, which it returns. */
CUptiResult write_calls_enable(CUpti_SubscriberHandle subscriber);

#endif
