/* stream_calls.c: the stream-ordered driver calls besides launches (see
 * stream_calls.h), each with where its parameter struct keeps the stream. */
#include "stream_calls.h"

#include <stddef.h>

#include "capture.h"
#include "cbids.h"
#include "launch_info.h"
#include "um_backend.h"

/* Each call, in its plain and per-thread-default-stream (_ptsz) forms,
 * with the field that names its stream: hStream, but stream in the
 * stream memory operations. */
#define STREAM_CALLS(X)                                                                      \
	X(cuMemcpyAsync, hStream) X(cuMemcpyHtoDAsync_v2, hStream)                           \
	X(cuMemcpyDtoHAsync_v2, hStream) X(cuMemcpyDtoDAsync_v2, hStream)                   \
	X(cuMemcpy2DAsync_v2, hStream) X(cuMemcpy3DAsync_v2, hStream)                       \
	X(cuMemcpyPeerAsync, hStream) X(cuMemcpy3DPeerAsync, hStream)                        \
	X(cuMemcpyHtoAAsync_v2, hStream) X(cuMemcpyAtoHAsync_v2, hStream)                   \
	X(cuMemsetD8Async, hStream) X(cuMemsetD16Async, hStream)                             \
	X(cuMemsetD32Async, hStream) X(cuMemsetD2D8Async, hStream)                           \
	X(cuMemsetD2D16Async, hStream) X(cuMemsetD2D32Async, hStream)                        \
	X(cuMemcpyBatchAsync, hStream) X(cuMemcpyBatchAsync_v2, hStream)                     \
	X(cuMemcpy3DBatchAsync, hStream) X(cuMemcpy3DBatchAsync_v2, hStream)                 \
	X(cuLaunchHostFunc, hStream) X(cuStreamAddCallback, hStream)                         \
	X(cuGraphLaunch, hStream) X(cuMemPrefetchAsync, hStream)                             \
	X(cuMemPrefetchAsync_v2, hStream) X(cuMemPrefetchBatchAsync, hStream)                \
	X(cuMemDiscardBatchAsync, hStream) X(cuMemDiscardAndPrefetchBatchAsync, hStream)     \
	X(cuStreamWriteValue32, stream) X(cuStreamWriteValue32_v2, stream)                   \
	X(cuStreamWriteValue64, stream) X(cuStreamWriteValue64_v2, stream)                   \
	X(cuStreamWaitValue32, stream) X(cuStreamWaitValue32_v2, stream)                     \
	X(cuStreamWaitValue64, stream) X(cuStreamWaitValue64_v2, stream)                     \
	X(cuStreamBatchMemOp, stream) X(cuStreamBatchMemOp_v2, stream)                       \
	X(cuMemBatchDecompressAsync, stream)

/* The synchronous calls that write device memory (write_calls.c), in their
 * plain and per-thread-default-stream (_ptds) forms: work on a default
 * stream they do not name. */
#define SYNC_WRITES(X)                                                                          \
	X(cuMemcpy) X(cuMemcpyHtoD_v2) X(cuMemcpyDtoD_v2) X(cuMemcpyPeer) X(cuMemcpyAtoD_v2)      \
	X(cuMemcpy2D_v2) X(cuMemcpy2DUnaligned_v2) X(cuMemcpy3D_v2) X(cuMemcpy3DPeer)            \
	X(cuMemsetD8_v2) X(cuMemsetD16_v2) X(cuMemsetD32_v2) X(cuMemsetD2D8_v2)                  \
	X(cuMemsetD2D16_v2) X(cuMemsetD2D32_v2)

#define SYNC_CBIDS(name) CUPTI_DRIVER_TRACE_CBID_##name, CUPTI_DRIVER_TRACE_CBID_##name##_ptds,

static const CUpti_CallbackId sync_write_cbids[] = { SYNC_WRITES(SYNC_CBIDS) };

#define CBIDS(name, field) CUPTI_DRIVER_TRACE_CBID_##name, CUPTI_DRIVER_TRACE_CBID_##name##_ptsz,
#define OFFSETS(name, field) offsetof(name##_params, field), offsetof(name##_ptsz_params, field),

const CUpti_CallbackId stream_call_cbids[] = { STREAM_CALLS(CBIDS) };
static const size_t stream_at[] = { STREAM_CALLS(OFFSETS) };
const int stream_call_ncbids = (int)(sizeof stream_call_cbids / sizeof stream_call_cbids[0]);

/* The stream the call cbid with parameters params names (named_stream;
 * the _ptsz forms are the odd entries); false when cbid is not one of
 * stream_call_cbids. */
static bool stream_call_stream(CUpti_CallbackId cbid, const void *params, CUstream *out)
{
	int i = cbid_index(stream_call_cbids, (size_t)stream_call_ncbids, cbid);
	if (i < 0)
		return false;
	*out = named_stream(*(const CUstream *)((const char *)params + stream_at[i]), i % 2);
	return true;
}

/* The default stream a call of sync_write_cbids queues its work on (the
 * _ptds forms are the odd entries); false for any other call. */
static bool sync_write_stream(CUpti_CallbackId cbid, CUstream *out)
{
	int i = cbid_index(sync_write_cbids, sizeof sync_write_cbids / sizeof sync_write_cbids[0], cbid);
	if (i < 0)
		return false;
	*out = i % 2 ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
	return true;
}

bool stream_call_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	CUstream s;
	if (!launch_stream(cbid, cb, &s) && !stream_call_stream(cbid, cb->functionParams, &s)) {
		if (cb->callbackSite == CUPTI_API_ENTER && sync_write_stream(cbid, &s))
			um_backend_default_stream_begin(s);
		return false;
	}
	/* Work captured into a graph runs only when the graph is launched, and
	 * the fences follow that launch's stream (cuGraphLaunch). */
	if (capture_work_captured(s))
		return true;
	if (cb->callbackSite == CUPTI_API_ENTER)
		um_backend_stream_begin(s, cb->functionName);
	else
		um_backend_stream_queued(s);
	return false;
}
