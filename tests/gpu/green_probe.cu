// green_probe: is a green context's work the arena's, as its device's?
// A green context (cuGreenCtxCreate) runs on a share of a device's SMs
// with the device's primary context's memory; PyTorch's green contexts
// make one current and create their streams in it. The program's first
// allocation claims the primary context for the arena; then, with the
// green context current, the probe allocates, fills that memory on a
// stream of the green context, and frees the primary's allocation on that
// stream behind a host function that holds it 200 ms.
//
// Prints the type of the allocation made in the green context (device
// plain; the arena's managed memory under umkit), whether the free
// returned while the stream was still held (as it does plain: a free that
// waits for the stream on the host stalls the program), and the sum of
// the filled memory. Exits 0, or 2 when a call fails.
#include <cstdio>

#include "probe_check.h"

__global__ void fill(unsigned *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = (unsigned)(i * 7);
}

static CUcontext green_context(CUgreenCtx *green)
{
	CUdevice dev;
	CUdevResource sms;
	CUdevResourceDesc desc;
	CUcontext context;
	CHECK_CU(cuDeviceGet(&dev, 0));
	CHECK_CU(cuDeviceGetDevResource(dev, &sms, CU_DEV_RESOURCE_TYPE_SM));
	CHECK_CU(cuDevResourceGenerateDesc(&desc, &sms, 1));
	CHECK_CU(cuGreenCtxCreate(green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
	CHECK_CU(cuCtxFromGreenCtx(&context, *green));
	return context;
}

int main()
{
	const size_t n = 1 << 20;
	unsigned *arenas, *greens, *h;
	CHECK(cudaMalloc(&arenas, n * sizeof *arenas)); // in the primary context
	fill<<<64, 256>>>(arenas, n);
	CHECK(cudaDeviceSynchronize());

	CUgreenCtx green;
	CHECK_CU(cuCtxPushCurrent(green_context(&green)));
	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&greens, n * sizeof *greens));
	cudaPointerAttributes attr;
	CHECK(cudaPointerGetAttributes(&attr, greens));
	printf("green cudaMalloc: %s\n", attr.type == cudaMemoryTypeManaged ? "managed" : "device");
	fill<<<64, 256, 0, s>>>(greens, n);

	// Whether an event of the primary context orders the green stream's
	// work, as the tools' fences would have it do (a fact printed, not
	// checked: it reads the same under the tools).
	CUcontext primary;
	cudaEvent_t primarys;
	CHECK_CU(cuDevicePrimaryCtxRetain(&primary, 0));
	CHECK_CU(cuCtxPushCurrent(primary));
	CHECK(cudaEventCreateWithFlags(&primarys, cudaEventDisableTiming));
	CHECK_CU(cuCtxPopCurrent(&primary));
	printf("primary event recorded on the green stream: %s\n", cudaGetErrorName(cudaEventRecord(primarys, s)));
	CHECK(cudaEventDestroy(primarys));
	CHECK_CU(cuDevicePrimaryCtxRelease(0));

	CHECK(cudaLaunchHostFunc(s, sleep_200ms, NULL));
	CHECK(cudaFreeAsync(arenas, s));
	printf("free on the green stream returned while it was held: %s\n",
	       cudaStreamQuery(s) == cudaErrorNotReady ? "yes" : "no");

	CHECK(cudaMallocHost(&h, n * sizeof *h));
	CHECK(cudaMemcpyAsync(h, greens, n * sizeof *h, cudaMemcpyDeviceToHost, s));
	CHECK(cudaStreamSynchronize(s));
	unsigned long long sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += h[i];
	printf("green sum %llu\n", sum);
	CHECK(cudaFree(greens));
	CHECK(cudaFreeHost(h));
	CHECK(cudaStreamDestroy(s));
	CUcontext popped;
	CHECK_CU(cuCtxPopCurrent(&popped));
	CHECK_CU(cuGreenCtxDestroy(green));
	return 0;
}
