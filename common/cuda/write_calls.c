/* write_calls.c: the driver calls that write device memory other than
 * through a kernel (see write_calls.h), by where their parameters keep
 * the destination. */
#include "write_calls.h"

#include <stddef.h>

#include "arena.h"
#include "cbids.h"
#include "um_alloc.h"

/* Each one's parameter struct starts with the destination pointer (a
 * CUdeviceptr named dstDevice or dst); the calls of unknown_write_cbids
 * do not. */
static const CUpti_CallbackId write_cbids[] = {
#define W(name) CUPTI_DRIVER_TRACE_CBID_##name
	W(cuMemsetD8_v2), W(cuMemsetD16_v2), W(cuMemsetD32_v2),
	W(cuMemsetD8_v2_ptds), W(cuMemsetD16_v2_ptds), W(cuMemsetD32_v2_ptds),
	W(cuMemsetD8Async), W(cuMemsetD16Async), W(cuMemsetD32Async),
	W(cuMemsetD8Async_ptsz), W(cuMemsetD16Async_ptsz), W(cuMemsetD32Async_ptsz),
	W(cuMemsetD2D8_v2), W(cuMemsetD2D16_v2), W(cuMemsetD2D32_v2),
	W(cuMemsetD2D8_v2_ptds), W(cuMemsetD2D16_v2_ptds), W(cuMemsetD2D32_v2_ptds),
	W(cuMemsetD2D8Async), W(cuMemsetD2D16Async), W(cuMemsetD2D32Async),
	W(cuMemsetD2D8Async_ptsz), W(cuMemsetD2D16Async_ptsz), W(cuMemsetD2D32Async_ptsz),
	W(cuMemcpyHtoD_v2), W(cuMemcpyHtoD_v2_ptds), W(cuMemcpyHtoDAsync_v2), W(cuMemcpyHtoDAsync_v2_ptsz),
	W(cuMemcpyDtoD_v2), W(cuMemcpyDtoD_v2_ptds), W(cuMemcpyDtoDAsync_v2), W(cuMemcpyDtoDAsync_v2_ptsz),
	W(cuMemcpy), W(cuMemcpy_ptds), W(cuMemcpyAsync), W(cuMemcpyAsync_ptsz),
	W(cuMemcpyPeer), W(cuMemcpyPeer_ptds), W(cuMemcpyPeerAsync), W(cuMemcpyPeerAsync_ptsz),
	W(cuMemcpyAtoD_v2), W(cuMemcpyAtoD_v2_ptds),
#undef W
};

/* The stream memory operations that write one word: their parameters name
 * the stream, then the address (the same layout in all eight). */
static const CUpti_CallbackId word_write_cbids[] = {
#define W(name) CUPTI_DRIVER_TRACE_CBID_##name
	W(cuStreamWriteValue32), W(cuStreamWriteValue32_ptsz), W(cuStreamWriteValue32_v2),
	W(cuStreamWriteValue32_v2_ptsz), W(cuStreamWriteValue64), W(cuStreamWriteValue64_ptsz),
	W(cuStreamWriteValue64_v2), W(cuStreamWriteValue64_v2_ptsz),
#undef W
};
_Static_assert(offsetof(cuStreamWriteValue64_v2_ptsz_params, addr) ==
		       offsetof(cuStreamWriteValue32_params, addr),
	       "the word writes keep their address in one place");

/* Calls that may write device memory where their parameters do not say:
 * 2-D, 3-D and batched copies, batched decompressions and batched stream
 * memory operations (their destinations sit in descriptors), host
 * functions and stream callbacks (host code may write managed memory). */
static const CUpti_CallbackId unknown_write_cbids[] = {
#define W(name) CUPTI_DRIVER_TRACE_CBID_##name
	W(cuMemcpy2D_v2), W(cuMemcpy2D_v2_ptds), W(cuMemcpy2DUnaligned_v2), W(cuMemcpy2DUnaligned_v2_ptds),
	W(cuMemcpy2DAsync_v2), W(cuMemcpy2DAsync_v2_ptsz), W(cuMemcpy3D_v2), W(cuMemcpy3D_v2_ptds),
	W(cuMemcpy3DAsync_v2), W(cuMemcpy3DAsync_v2_ptsz), W(cuMemcpy3DPeer), W(cuMemcpy3DPeer_ptds),
	W(cuMemcpy3DPeerAsync), W(cuMemcpy3DPeerAsync_ptsz), W(cuMemcpyBatchAsync), W(cuMemcpyBatchAsync_ptsz),
	W(cuMemcpyBatchAsync_v2), W(cuMemcpyBatchAsync_v2_ptsz), W(cuMemcpy3DBatchAsync),
	W(cuMemcpy3DBatchAsync_ptsz), W(cuMemcpy3DBatchAsync_v2), W(cuMemcpy3DBatchAsync_v2_ptsz),
	W(cuLaunchHostFunc), W(cuLaunchHostFunc_ptsz),
	W(cuStreamAddCallback), W(cuStreamAddCallback_ptsz),
	W(cuStreamBatchMemOp), W(cuStreamBatchMemOp_ptsz), W(cuStreamBatchMemOp_v2), W(cuStreamBatchMemOp_v2_ptsz),
	W(cuMemBatchDecompressAsync), W(cuMemBatchDecompressAsync_ptsz),
#undef W
};

#define COUNT(list) (sizeof list / sizeof list[0])
#define LISTED(list, cbid) (cbid_index(list, COUNT(list), cbid) >= 0)

enum write_dst write_call_dst(CUpti_CallbackId cbid, const void *params, CUdeviceptr *dst)
{
	if (LISTED(unknown_write_cbids, cbid))
		return WRITE_UNKNOWN;
	if (LISTED(write_cbids, cbid))
		*dst = *(const CUdeviceptr *)params;
	else if (LISTED(word_write_cbids, cbid))
		*dst = ((const cuStreamWriteValue32_params *)params)->addr;
	else
		return WRITE_NONE;
	return WRITE_AT;
}

uint64_t write_dst_alloc(CUdeviceptr dst)
{
	struct arena_alloc a;
	arena *ar = um_alloc_arena();
	return ar && arena_lookup(ar, (uint64_t)dst, &a) ? a.id : 0;
}

CUptiResult write_calls_enable(CUpti_SubscriberHandle subscriber)
{
	CUptiResult r = cbids_enable(subscriber, write_cbids, COUNT(write_cbids));
	if (r == CUPTI_SUCCESS)
		r = cbids_enable(subscriber, unknown_write_cbids, COUNT(unknown_write_cbids));
	if (r == CUPTI_SUCCESS)
		r = cbids_enable(subscriber, word_write_cbids, COUNT(word_write_cbids));
	return r;
}
