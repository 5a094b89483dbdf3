// driver_probe: GPU memory a program gets through the driver, past the
// runtime calls umkit's shim serves (common/cuda/driver_allocs.h), each
// given back before the next is made:
//  - 8 MiB from cuMemAlloc, freed with cuMemFree;
//  - 4 MiB from cuMemAllocAsync on a stream, freed on it;
//  - one granule of physical memory from cuMemCreate, mapped, used,
//    unmapped and released;
//  - 16 MiB of managed memory from cuMemAllocManaged, freed with cuMemFree.
// A kernel fills each; the probe prints "<call>: <sum>" for each, and
// the granule's size before the mapping's. Under either tool every line must read as plain, and
// the tools count 3 allocations of device memory, 12 MiB and a granule, at
// most 8 MiB held at once, and apart from them 1 of managed memory, 16 MiB.
// One buffer from cudaMalloc, where the sums are made, is the arena's.
//
// Usage: driver_probe
// Exits 0, or 2 when a call failed.
#include <cstdio>

#include "probe_check.h"

__global__ void fill(float *a, size_t n, float scale)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		a[i] = scale * (i % 1000);
}

__global__ void sum(const float *a, size_t n, double *out)
{
	double s = 0;
	for (size_t i = threadIdx.x; i < n; i += blockDim.x)
		s += a[i];
	atomicAdd(out, s);
}

static double *total; // the arena's

// Fills the n floats at a on stream s and prints their sum.
static void use(const char *call, CUdeviceptr a, size_t bytes, cudaStream_t s, float scale)
{
	size_t n = bytes / sizeof(float);
	CHECK(cudaMemsetAsync(total, 0, sizeof *total, s));
	fill<<<(unsigned)((n + 255) / 256), 256, 0, s>>>((float *)a, n, scale);
	sum<<<1, 256, 0, s>>>((const float *)a, n, total);
	CHECK(cudaGetLastError());
	double host;
	CHECK(cudaMemcpyAsync(&host, total, sizeof host, cudaMemcpyDeviceToHost, s));
	CHECK(cudaStreamSynchronize(s));
	printf("%s: %.0f\n", call, host);
}

int main()
{
	CHECK(cudaMalloc(&total, sizeof *total));
	cudaStream_t stream;
	CHECK(cudaStreamCreate(&stream));
	CUdevice dev;
	CHECK_CU(cuCtxGetDevice(&dev));

	CUdeviceptr a;
	CHECK_CU(cuMemAlloc(&a, 8 << 20));
	use("cuMemAlloc", a, 8 << 20, stream, 1);
	CHECK_CU(cuMemFree(a));

	CHECK_CU(cuMemAllocAsync(&a, 4 << 20, (CUstream)stream));
	use("cuMemAllocAsync", a, 4 << 20, stream, 2);
	CHECK_CU(cuMemFreeAsync(a, (CUstream)stream));
	CHECK(cudaStreamSynchronize(stream));

	CUmemAllocationProp prop = {};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	size_t granule;
	CHECK_CU(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	printf("granule: %zu\n", granule);
	CUmemGenericAllocationHandle h;
	CHECK_CU(cuMemCreate(&h, granule, &prop, 0));
	CHECK_CU(cuMemAddressReserve(&a, granule, 0, 0, 0));
	CHECK_CU(cuMemMap(a, granule, 0, h, 0));
	CUmemAccessDesc access = {};
	access.location = prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CHECK_CU(cuMemSetAccess(a, granule, &access, 1));
	use("cuMemCreate", a, granule, stream, 3);
	CHECK_CU(cuMemUnmap(a, granule));
	CHECK_CU(cuMemRelease(h));
	CHECK_CU(cuMemAddressFree(a, granule));

	CHECK_CU(cuMemAllocManaged(&a, 16 << 20, CU_MEM_ATTACH_GLOBAL));
	use("cuMemAllocManaged", a, 16 << 20, stream, 4);
	CHECK_CU(cuMemFree(a));

	CHECK(cudaStreamDestroy(stream));
	CHECK(cudaFree(total));
	return 0;
}
