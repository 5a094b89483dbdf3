// nvtx_probe: does umrec record NVTX ranges whose Ex attributes name them
// by a wide string (NVTX_MESSAGE_TYPE_UNICODE), nested as pushed? Until
// session 61 such a range was recorded with an empty name. (CUDA's NVTX
// implements the A and Ex forms only: nvtxRangePushW and the other W forms
// have no effect, so they are not probed.)
//
// Ranges, one thread, nested as:
//   outer (PushA) {
//     ex wide é (PushEx, a wide message) { kernel }
//     started é (StartEx, a wide message .. End) { kernel }
//   }
// Prints "nvtx: ok" once the GPU has run the kernels; the check reads the
// trace.
#include <cstdio>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "probe_check.h"

__global__ void nothing() {}

static void run_kernel()
{
	nothing<<<1, 1>>>();
	CHECK(cudaDeviceSynchronize());
}

static nvtxEventAttributes_t wide(const wchar_t *message)
{
	nvtxEventAttributes_t a = {};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	a.message.unicode = message;
	return a;
}

int main()
{
	CHECK(cudaFree(0)); // the context, so that the recorder is attached
	nvtxRangePushA("outer");
	nvtxEventAttributes_t a = wide(L"ex wide \u00e9");
	nvtxRangePushEx(&a);
	run_kernel();
	nvtxRangePop();

	nvtxEventAttributes_t b = wide(L"started \u00e9");
	nvtxRangeId_t id = nvtxRangeStartEx(&b);
	run_kernel();
	nvtxRangeEnd(id);
	nvtxRangePop();
	printf("nvtx: ok\n");
	return 0;
}
