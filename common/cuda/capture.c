/*
 * capture.c: CUDA graphs seen from the launch callbacks (capture.h).
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "launch_env.h"
#include "pytorch_conf.h"
#include "um_backend.h"
#include "common/cuda/cbids.h"

#define BOTH(name) CUPTI_DRIVER_TRACE_CBID_##name, CUPTI_DRIVER_TRACE_CBID_##name##_ptsz
const CUpti_CallbackId graph_cbids[] = {
	BOTH(cuStreamBeginCapture),
	BOTH(cuStreamBeginCapture_v2),
	BOTH(cuStreamBeginCaptureToGraph),
	BOTH(cuStreamEndCapture),
	BOTH(cuGraphLaunch),
};
#undef BOTH
const int graph_ncbids = sizeof graph_cbids / sizeof graph_cbids[0];

static atomic_bool captures_begun;

bool graph_cbid(CUpti_CallbackId cbid)
{
	return cbid_index(graph_cbids, (size_t)graph_ncbids, cbid) >= 0;
}

/* Whether cbid begins (1) or ends (-1) a capture, or neither (0); each of
 * those calls names its stream first (hStream), and its _ptsz form means
 * the thread's per-thread default stream by 0. */
static int capture_edge(CUpti_CallbackId cbid, bool *ptsz)
{
	*ptsz = false;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz:
		*ptsz = true;
		/* fall through */
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph:
		return 1;
	case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz:
		*ptsz = true;
		/* fall through */
	case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture:
		return -1;
	default:
		return 0;
	}
}

_Static_assert(offsetof(cuStreamBeginCapture_params, hStream) == 0 &&
		       offsetof(cuStreamBeginCapture_ptsz_params, hStream) == 0 &&
		       offsetof(cuStreamBeginCapture_v2_params, hStream) == 0 &&
		       offsetof(cuStreamBeginCapture_v2_ptsz_params, hStream) == 0 &&
		       offsetof(cuStreamBeginCaptureToGraph_params, hStream) == 0 &&
		       offsetof(cuStreamBeginCaptureToGraph_ptsz_params, hStream) == 0 &&
		       offsetof(cuStreamEndCapture_params, hStream) == 0 &&
		       offsetof(cuStreamEndCapture_ptsz_params, hStream) == 0,
	       "a capture's stream is its call's first parameter");

void capture_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	bool ptsz;
	int edge = capture_edge(cbid, &ptsz);
	/* A beginning is met before the capture begins, and its exit says
	 * whether it did; an end after the capture has ended. */
	bool enter = cb->callbackSite == CUPTI_API_ENTER;
	bool accepted = !enter && *(const CUresult *)cb->functionReturnValue == CUDA_SUCCESS;
	if (!edge || (edge < 0 && enter) || (edge > 0 && accepted))
		return;
	CUstream s = *(const CUstream *)cb->functionParams;
	if (!s && ptsz)
		s = CU_STREAM_PER_THREAD;
	if (edge < 0) {
		/* An end the driver refused (made on another thread than a
		 * thread-local capture's) leaves the capture under way; one it
		 * refused because the capture was invalidated ended it all the
		 * same. The calling thread may ask of its per-thread stream. */
		if (accepted || !capture_stream_capturing(s))
			um_backend_capture_ends(s);
	} else if (enter) {
		capture_watch();
		um_backend_capture_begins(s);
	} else {
		um_backend_capture_refused(s);
	}
}

bool capture_pytorch_cache_off(void)
{
	return launch_pytorch_cache_off(getenv("PYTORCH_NO_CUDA_MEMORY_CACHING"));
}

bool capture_pytorch_cannot_capture(void)
{
	/* PyTorch's allocator on cudaMallocAsync has no cache to turn off, and
	 * captures with the variable set (GPU check "PyTorch on
	 * cudaMallocAsync"). */
	if (!capture_pytorch_cache_off() || pytorch_conf_env_setting("backend", "cudaMallocAsync"))
		return false;
	void *c10 = dlopen("libc10_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
	if (c10)
		dlclose(c10); /* only the reference just taken */
	return c10 != NULL;
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

bool capture_relaxed_begin(CUstreamCaptureMode *saved)
{
	*saved = CU_STREAM_CAPTURE_MODE_RELAXED;
	return cuThreadExchangeStreamCaptureMode(saved) == CUDA_SUCCESS;
}

void capture_relaxed_end(bool begun, CUstreamCaptureMode saved)
{
	if (begun)
		cuThreadExchangeStreamCaptureMode(&saved);
}

void capture_watch(void)
{
	atomic_store_explicit(&captures_begun, true, memory_order_relaxed);
}

bool capture_watching(void)
{
	return atomic_load_explicit(&captures_begun, memory_order_relaxed);
}

bool capture_stream_capturing(CUstream stream)
{
	CUstreamCaptureStatus status;
	return cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
}

bool capture_work_captured(CUstream stream)
{
	return capture_watching() && capture_stream_capturing(stream);
}
