/*
 * launch_info.h: what a kernel launch is, decoded from a CUPTI driver-API
 * callback: the kernel, its shape, its stream, the parameter words that point
 * into arena allocations, and its execution ID (common/execid.h).
 *
 * Shared by the recorder (which writes it to the trace) and the replayer
 * (which matches it against the plan).
 */
#ifndef UMKIT_LAUNCH_INFO_H
#define UMKIT_LAUNCH_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include <cupti.h>

#include "arena.h"
#include "param_scan.h"

struct launch_info {
	const char *name;
	CUfunction function; /* stable while its module is loaded */
	uint32_t grid[3], block[3];
	uint32_t shared_mem;
	CUstream stream;
	struct param_arg args[PARAM_MAX_POINTERS]; /* more are dropped (the recorder warns) */
	uint32_t nargs;
	bool args_truncated;
	uint64_t exec_id;
	uint64_t shape_id; /* execid_shape_of: the launch without its arguments */
};

/* True for the driver-API callback ids that launch a kernel. */
bool launch_is_kernel_cbid(CUpti_CallbackId cbid);

/* The launch callback ids, for cuptiEnableCallback. */
extern const CUpti_CallbackId launch_cbids[];
extern const int launch_ncbids;

/* The stream that a call's stream argument s names. A call's _ptsz form
 * is what a program built for per-thread default streams calls, and its
 * stream 0 is the calling thread's own default stream, not the legacy
 * one: the two order work differently. */
static inline CUstream named_stream(CUstream s, bool ptsz)
{
	return !s && ptsz ? CU_STREAM_PER_THREAD : s;
}

/* The stream a launch goes to (named_stream), at its entry or its exit.
 * Returns false when cbid is not a kernel launch, or is a cuLaunchKernelEx
 * without its config (which the driver refuses). */
bool launch_stream(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, CUstream *out);

/* Decodes a launch at API_ENTER. a may be NULL (no arena: no args);
 * foreign, the memory the runtime served (param_scan.h). Returns false
 * when cbid is not a kernel launch, or launch_stream finds none. */
bool launch_decode(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, arena *a,
		   struct addr_set *foreign, struct launch_info *out);

#endif
