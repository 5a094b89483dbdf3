// pool_probe: stream-ordered allocations from memory pools as a program
// sees them. Each case allocates a buffer, a kernel fills it, and the
// probe prints "case: <memory type> <sum>", the type as
// cudaPointerGetAttributes names it: plain CUDA gives device memory
// everywhere; under umrec or umreplay the pools the arena stands in for
// (common/cuda/um_pools.h) give managed memory, and every other line, the
// sums and the answers included, must read as plain:
//  - from the default pool, and from a pool created plain, before and
//    after its own device is given access to it (the one device there is);
//  - from a pool that can be exported to another process, whose pointer
//    is then exported, and from a pool capped at 32 MiB, asked for 64;
//  - through cudaMallocAsync with each of those pools, then the default
//    one, made the device's current pool;
//  - from no pool at all, with the thread's last error after it.
//
// Usage: pool_probe
// Exits 0, or 2 when the probe's own set-up failed.
#include <cstdio>

#include "probe_check.h"

static const size_t N = 1 << 20; // floats per buffer

__global__ void fill(float *a, size_t n, float scale)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		a[i] = scale * (i % 1000);
}

static cudaStream_t stream;

// Fills the buffer, prints its memory type and sum, and frees it.
static void use(const char *name, float *a, float scale)
{
	static float host[N];
	cudaPointerAttributes attr;
	CHECK(cudaPointerGetAttributes(&attr, a));
	fill<<<(N + 255) / 256, 256, 0, stream>>>(a, N, scale);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpyAsync(host, a, N * sizeof(float), cudaMemcpyDeviceToHost, stream));
	CHECK(cudaStreamSynchronize(stream));
	double s = 0;
	for (size_t i = 0; i < N; i++)
		s += host[i];
	printf("%s: %s %.6e\n", name, attr.type == cudaMemoryTypeManaged ? "managed" : "device", s);
	CHECK(cudaFreeAsync(a, stream));
}

static void report(const char *what, cudaError_t answer)
{
	cudaError_t last = cudaGetLastError();
	printf("%s: %s then %s, %s\n", what, cudaGetErrorName(answer), cudaGetErrorName(last),
	       cudaGetErrorName(cudaGetLastError()));
}

static cudaMemPool_t create(cudaMemAllocationHandleType handles, size_t cap)
{
	cudaMemPoolProps props = {};
	props.allocType = cudaMemAllocationTypePinned;
	props.handleTypes = handles;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	props.maxSize = cap;
	cudaMemPool_t pool;
	CHECK(cudaMemPoolCreate(&pool, &props));
	return pool;
}

int main()
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	cudaMemPool_t def, plain = create(cudaMemHandleTypeNone, 0),
			   exportable = create(cudaMemHandleTypePosixFileDescriptor, 0),
			   capped = create(cudaMemHandleTypeNone, 32 << 20);
	CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
	float *a;

	CHECK(cudaMallocFromPoolAsync((void **)&a, N * sizeof(float), def, stream));
	use("default pool", a, 1);
	CHECK(cudaMallocFromPoolAsync((void **)&a, N * sizeof(float), plain, stream));
	use("created pool", a, 2);
	cudaMemAccessDesc own = { { cudaMemLocationTypeDevice, 0 }, cudaMemAccessFlagsProtReadWrite };
	report("created pool, access for its own device", cudaMemPoolSetAccess(plain, &own, 1));
	CHECK(cudaMallocFromPoolAsync((void **)&a, N * sizeof(float), plain, stream));
	use("created pool after", a, 2.5f);

	CHECK(cudaMallocFromPoolAsync((void **)&a, N * sizeof(float), exportable, stream));
	cudaMemPoolPtrExportData data;
	report("exported pointer", cudaMemPoolExportPointer(&data, a));
	use("exportable pool", a, 3);
	report("capped pool, 64 MiB", cudaMallocFromPoolAsync((void **)&a, 64 << 20, capped, stream));
	CHECK(cudaMallocFromPoolAsync((void **)&a, N * sizeof(float), capped, stream));
	use("capped pool", a, 4);

	const cudaMemPool_t current[] = { exportable, plain, def };
	const char *names[] = { "current exportable pool", "current created pool", "current default pool" };
	for (int i = 0; i < 3; i++) {
		CHECK(cudaDeviceSetMemPool(0, current[i]));
		CHECK(cudaMallocAsync((void **)&a, N * sizeof(float), stream));
		use(names[i], a, 5 + i);
	}

	report("no pool", cudaMallocFromPoolAsync((void **)&a, 4096, NULL, stream));
	CHECK(cudaStreamSynchronize(stream));
	CHECK(cudaMemPoolDestroy(plain));
	CHECK(cudaMemPoolDestroy(exportable));
	CHECK(cudaMemPoolDestroy(capped));
	return 0;
}
