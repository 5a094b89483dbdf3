/*
 * Unit tests for common/cuda/stream_calls.c: the stream a stream-ordered
 * driver call names is the one the fences are told of, at the call's
 * entry and exit; stream 0 of a _ptsz form is the thread's own default
 * stream. The arena's side (um_backend) and the capture query are stood
 * in for here, and record what they are told.
 */
#include "testutil.h"

#include <cupti.h>

#include "common/cuda/capture.h"
#include "common/cuda/stream_calls.h"
#include "common/cuda/um_backend.h"

/* What noted() answers for a call that noted no stream. */
#define NOT_NOTED ((CUstream)(uintptr_t)0xdead)

static CUstream begun, queued, defaulted;
static const char *begun_call;
static int n_begun, n_queued, n_defaulted;

void um_backend_stream_begin(CUstream s, const char *call)
{
	begun = s;
	begun_call = call;
	n_begun++;
}

void um_backend_stream_queued(CUstream s)
{
	queued = s;
	n_queued++;
}

void um_backend_default_stream_begin(CUstream s)
{
	defaulted = s;
	n_defaulted++;
}

bool capture_work_captured(CUstream s)
{
	(void)s;
	return false;
}

/* launch_info.c's, which stream_calls.c links for launch_stream. */
CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size)
{
	(void)f, (void)index, (void)offset, (void)size;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuKernelGetParamInfo(CUkernel k, size_t index, size_t *offset, size_t *size)
{
	(void)k, (void)index, (void)offset, (void)size;
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* Notes cbid with params at its entry and exit; returns the stream noted
 * at both, NOT_NOTED when none was. The call's name goes with the stream
 * (for the debug log of where one stream order ends). */
static CUstream noted(CUpti_CallbackId cbid, void *params)
{
	n_begun = n_queued = n_defaulted = 0;
	begun = queued = NOT_NOTED;
	CUpti_CallbackData cb = { .callbackSite = CUPTI_API_ENTER, .functionName = "theCall",
				  .functionParams = params };
	stream_call_note(cbid, &cb);
	cb.callbackSite = CUPTI_API_EXIT;
	stream_call_note(cbid, &cb);
	assert_int_equal(n_defaulted, 0);
	if (!n_begun && !n_queued)
		return NOT_NOTED;
	assert_int_equal(n_begun, 1);
	assert_int_equal(n_queued, 1);
	assert_ptr_equal(begun, queued);
	assert_string_equal(begun_call, "theCall");
	return begun;
}

static void the_stream_each_call_names(void **state)
{
	(void)state;
	CUstream s = (CUstream)(uintptr_t)0x5000;
	cuMemcpyAsync_params copy = { .hStream = s };
	assert_ptr_equal(noted(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, &copy), s);
	cuMemBatchDecompressAsync_params decompress = { .stream = s };
	assert_ptr_equal(noted(CUPTI_DRIVER_TRACE_CBID_cuMemBatchDecompressAsync, &decompress), s);
	cuStreamWaitValue32_v2_params wait = { .stream = s };
	assert_ptr_equal(noted(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2, &wait), s);
	/* A copy between a CUDA array and host memory, which may be managed:
	 * the arena's memory, read or written on the stream. */
	cuMemcpyAtoHAsync_v2_params to_host = { .hStream = s };
	assert_ptr_equal(noted(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoHAsync_v2, &to_host), s);
	cuMemcpyHtoAAsync_v2_ptsz_params to_array = { .hStream = s };
	assert_ptr_equal(noted(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoAAsync_v2_ptsz, &to_array), s);
	/* Not a stream-ordered call: nothing noted. */
	cuMemAlloc_v2_params alloc = { 0 };
	assert_ptr_equal(noted(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &alloc), NOT_NOTED);
}

/* Stream 0: the legacy default stream in the plain form, the thread's own
 * in the _ptsz form, for copies as for launches. */
static void stream_zero_of_a_ptsz_call_is_the_threads_own(void **state)
{
	(void)state;
	cuMemcpyAsync_params copy = { .hStream = NULL };
	assert_ptr_equal(noted(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, &copy), NULL);
	cuMemcpyAsync_ptsz_params copy_ptsz = { .hStream = NULL };
	assert_ptr_equal(noted(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz, &copy_ptsz), CU_STREAM_PER_THREAD);
	cuLaunchHostFunc_ptsz_params host_ptsz = { .hStream = NULL };
	assert_ptr_equal(noted(CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz, &host_ptsz), CU_STREAM_PER_THREAD);
	cuLaunchKernel_params launch = { .hStream = NULL };
	assert_ptr_equal(noted(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &launch), CU_STREAM_PER_THREAD);
}

/* The default stream a synchronous copy or memset writes device memory
 * on, told at its entry alone (um_backend_default_stream_begin): the
 * legacy stream, or the thread's own for a _ptds form. A read into host
 * memory is not told. */
static CUstream defaulted_at(CUpti_CallbackId cbid)
{
	n_begun = n_queued = n_defaulted = 0;
	defaulted = NOT_NOTED;
	char params[64] = { 0 };
	CUpti_CallbackData cb = { .callbackSite = CUPTI_API_ENTER, .functionName = "theCall",
				  .functionParams = params };
	assert_false(stream_call_note(cbid, &cb));
	cb.callbackSite = CUPTI_API_EXIT;
	assert_false(stream_call_note(cbid, &cb));
	assert_int_equal(n_begun + n_queued, 0);
	assert_true(n_defaulted <= 1);
	return defaulted;
}

static void synchronous_writes_tell_their_default_stream(void **state)
{
	(void)state;
	assert_ptr_equal(defaulted_at(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2), CU_STREAM_LEGACY);
	assert_ptr_equal(defaulted_at(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2), CU_STREAM_LEGACY);
	assert_ptr_equal(defaulted_at(CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeer), CU_STREAM_LEGACY);
	assert_ptr_equal(defaulted_at(CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds), CU_STREAM_PER_THREAD);
	assert_ptr_equal(defaulted_at(CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32_v2_ptds), CU_STREAM_PER_THREAD);
	assert_ptr_equal(defaulted_at(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2), NOT_NOTED);
	assert_ptr_equal(defaulted_at(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2), NOT_NOTED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_stream_each_call_names),
		cmocka_unit_test(stream_zero_of_a_ptsz_call_is_the_threads_own),
		cmocka_unit_test(synchronous_writes_tell_their_default_stream),
	};
	return cmocka_run_group_tests_name("stream_calls", tests, NULL, NULL);
}
