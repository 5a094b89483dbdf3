/*
 * Unit tests for what the launch callbacks tell the fences of a stream
 * capture's beginning and end (common/cuda/capture.c, capture_note),
 * linked with fakes of the driver's capture queries and of the fences'
 * notes: no GPU, no CUPTI. Callbacks are made up as CUPTI hands them
 * over.
 *
 * A capture the fences take for ended lets them synchronize, or record an
 * event on its stream, either of which breaks the capture: so an end the
 * driver refused (made on another thread than the one that began a
 * capture in the thread-local mode) must leave it under way.
 */
#include "testutil.h"

#include <cuda.h>
#include <cupti.h>

#include "common/cuda/capture.h"
#include "common/cuda/um_backend.h"

#define STREAM ((CUstream)(uintptr_t)0x5100)

/* ---- the fake driver: which stream captures ---- */

static CUstream capturing;

CUresult CUDAAPI cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status)
{
	*status = s == capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	return CUDA_SUCCESS;
}

/* ---- the fences: the ends they were told of ---- */

static CUstream ended;
static int ends;

void um_backend_capture_begins(CUstream s)
{
}

void um_backend_capture_refused(CUstream s)
{
}

void um_backend_capture_ends(CUstream s)
{
	ended = s;
	ends++;
}

/* The exit of cuStreamEndCapture (cbid) on s, which returned r. */
static void end_exit(CUpti_CallbackId cbid, CUstream s, CUresult r)
{
	CUgraph graph = NULL;
	cuStreamEndCapture_params params = { s, &graph };
	CUpti_CallbackData cb = { .callbackSite = CUPTI_API_EXIT, .functionParams = &params,
				  .functionReturnValue = &r };
	capture_note(cbid, &cb);
}

static void reset(CUstream still_capturing)
{
	capturing = still_capturing;
	ended = NULL;
	ends = 0;
}

static void an_accepted_end_is_an_end(void **state)
{
	reset(NULL);
	end_exit(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, STREAM, CUDA_SUCCESS);
	assert_int_equal(ends, 1);
	assert_ptr_equal(ended, STREAM);
}

/* Made from another thread than the capture's, in the thread-local mode:
 * the driver refuses it, and the capture goes on. It was noted as an end. */
static void an_end_made_on_the_wrong_thread_is_no_end(void **state)
{
	reset(STREAM);
	end_exit(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, STREAM, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
	assert_int_equal(ends, 0);
}

/* The per-thread default stream's: the same, asked of the calling
 * thread's own stream. */
static void a_refused_per_thread_end_is_no_end(void **state)
{
	reset(CU_STREAM_PER_THREAD);
	end_exit(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz, NULL, CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
	assert_int_equal(ends, 0);
}

/* An invalidated capture's end fails too, but the capture is over: the
 * stream captures no more, and the fences must know it, or they would
 * never synchronize again. */
static void an_invalidated_capture_ends(void **state)
{
	reset(NULL);
	end_exit(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, STREAM, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	assert_int_equal(ends, 1);
	assert_ptr_equal(ended, STREAM);
	reset(NULL);
	end_exit(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz, NULL, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	assert_int_equal(ends, 1);
	assert_ptr_equal(ended, CU_STREAM_PER_THREAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(an_accepted_end_is_an_end),
		cmocka_unit_test(an_end_made_on_the_wrong_thread_is_no_end),
		cmocka_unit_test(a_refused_per_thread_end_is_no_end),
		cmocka_unit_test(an_invalidated_capture_ends),
	};
	return cmocka_run_group_tests_name("capture", tests, NULL, NULL);
}
