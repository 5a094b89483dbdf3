/*
 * capture.c: CUDA graphs seen from the launch callbacks (capture.h).
 */
#include <stdatomic.h>

#include "capture.h"
#include "common/cuda/cbids.h"

#define CAPTURE_BEGIN(name) CUPTI_DRIVER_TRACE_CBID_##name, CUPTI_DRIVER_TRACE_CBID_##name##_ptsz
const CUpti_CallbackId graph_cbids[] = {
	CAPTURE_BEGIN(cuStreamBeginCapture),
	CAPTURE_BEGIN(cuStreamBeginCapture_v2),
	CAPTURE_BEGIN(cuStreamBeginCaptureToGraph),
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};
#undef CAPTURE_BEGIN
const int graph_ncbids = sizeof graph_cbids / sizeof graph_cbids[0];

/* The first graph_ncbids - 2 calls begin a capture. */
#define CAPTURE_BEGIN_CBIDS (sizeof graph_cbids / sizeof graph_cbids[0] - 2)

static atomic_bool captures_begun;

bool graph_cbid(CUpti_CallbackId cbid)
{
	return cbid_index(graph_cbids, (size_t)graph_ncbids, cbid) >= 0;
}

void capture_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	if (cb->callbackSite == CUPTI_API_ENTER && cbid_index(graph_cbids, CAPTURE_BEGIN_CBIDS, cbid) >= 0)
		atomic_store_explicit(&captures_begun, true, memory_order_relaxed);
}

bool capture_mode_global(void)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
	if (cuThreadExchangeStreamCaptureMode(&mode) != CUDA_SUCCESS)
		return true;
	CUstreamCaptureMode back = mode;
	cuThreadExchangeStreamCaptureMode(&back);
	return mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
}

void capture_watch(void)
{
	atomic_store_explicit(&captures_begun, true, memory_order_relaxed);
}

bool capture_launch_captured(CUstream stream)
{
	CUstreamCaptureStatus status;
	return atomic_load_explicit(&captures_begun, memory_order_relaxed) &&
	       cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
}
