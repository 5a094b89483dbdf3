// nvtx_probe: does umrec record NVTX ranges named by wide strings, and
// pair every pop with its own push? A push whose form the recorder did not
// take as one (nvtxRangePushW, session 61's review) made the next pop
// close the range around it, early.
//
// Ranges, one thread, nested as:
//   outer (PushA) {
//     wide é (PushW) { kernel }
//     ex wide (PushEx, a wide message) { kernel }
//     started (StartW .. End) { kernel }
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

int main()
{
	CHECK(cudaFree(0)); // the context, so that the recorder is attached
	nvtxRangePushA("outer");
	nvtxRangePushW(L"wide \u00e9");
	run_kernel();
	nvtxRangePop();

	nvtxEventAttributes_t a = {};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	a.message.unicode = L"ex wide";
	nvtxRangePushEx(&a);
	run_kernel();
	nvtxRangePop();

	nvtxRangeId_t id = nvtxRangeStartW(L"started");
	run_kernel();
	nvtxRangeEnd(id);
	nvtxRangePop();
	printf("nvtx: ok\n");
	return 0;
}
