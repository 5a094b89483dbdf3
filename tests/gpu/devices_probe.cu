// devices_probe: a program that uses two GPUs, as it sees its memory. The
// arena is one device's (the one current at the first allocation: device
// 0 here), so under umrec or umreplay its allocations there are managed
// memory and every other is the runtime's, as plain CUDA makes it. Each
// case allocates a buffer, a kernel on the buffer's device fills it, and
// the probe prints "case: <memory type> on <device> <sum>":
//  - cudaMalloc with device 0 current, then with device 1;
//  - cudaMallocAsync on a stream of device 1, with device 1 current, and
//    with device 0 current (the allocation is the stream's device's);
//  - cudaMallocAsync on a stream of device 0 with device 1 current;
//  - cudaMallocManaged with device 1 current;
//  - then device 1's kernel writes device 0's first buffer through peer
//    access, and device 0 sums it;
//  - a buffer of device 0's freed with device 1 current while a kernel
//    of device 0 is still to write it, then an allocation of its size
//    zeroed: it must read zero (the arena's fence orders device 0's
//    streams whatever device the freeing thread has current);
//  - last, memory got from the driver, past the tools' shim: 8 MiB
//    with cuMemAlloc on device 0, 2 MiB with cuMemAlloc and 1 MiB with
//    cuMemAllocAsync on device 1; then device 1 is reset, and device 0
//    gets 4 MiB more. The reset frees device 1's cuMemAlloc memory
//    alone (no context owns stream-ordered memory, and device 0's is
//    another context's), so the tools, which count such memory, must
//    see 13 MiB held at once; the probe prints "device 1 reset: ok".
// Plain CUDA gives device memory in the first five cases; under the tools
// only the first is managed, and every line else, the sums included, must
// read as plain. (The device a managed allocation names is the runtime's
// to say: plain CUDA's answer is the one to match.)
//
// Usage: devices_probe
// Exits 0, 2 when the probe's own set-up failed, 3 with fewer than two
// GPUs or without peer access between them.
#include <cstdio>

#include "probe_check.h"

static const size_t N = 1 << 20; // floats per buffer

__global__ void fill(float *a, size_t n, float scale)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		a[i] = scale * (i % 1000);
}

static cudaStream_t streams[2];

// Fills the buffer on its device's stream, prints its memory type, device
// and sum, and keeps it; the current device is left as it was.
static void use(const char *name, float *a, float scale)
{
	static float host[N];
	cudaPointerAttributes attr;
	int current, device;
	CHECK(cudaGetDevice(&current));
	CHECK(cudaPointerGetAttributes(&attr, a));
	device = attr.device;
	CHECK(cudaSetDevice(device));
	fill<<<(N + 255) / 256, 256, 0, streams[device]>>>(a, N, scale);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpyAsync(host, a, N * sizeof(float), cudaMemcpyDeviceToHost, streams[device]));
	CHECK(cudaStreamSynchronize(streams[device]));
	double s = 0;
	for (size_t i = 0; i < N; i++)
		s += host[i];
	printf("%s: %s on %d %.6e\n", name, attr.type == cudaMemoryTypeManaged ? "managed" : "device", device, s);
	CHECK(cudaSetDevice(current));
}

int main()
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int count = 0, peer = 0;
	CHECK(cudaGetDeviceCount(&count));
	if (count < 2) {
		printf("devices_probe: %d GPU, two needed\n", count);
		return 3;
	}
	CHECK(cudaDeviceCanAccessPeer(&peer, 1, 0));
	if (!peer) {
		printf("devices_probe: device 1 cannot access device 0's memory\n");
		return 3;
	}
	for (int d = 0; d < 2; d++) {
		CHECK(cudaSetDevice(d));
		CHECK(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
	}
	float *a[6];
	size_t bytes = N * sizeof(float);

	CHECK(cudaSetDevice(0));
	CHECK(cudaMalloc((void **)&a[0], bytes));
	use("cudaMalloc, device 0 current", a[0], 1);
	CHECK(cudaSetDevice(1));
	CHECK(cudaMalloc((void **)&a[1], bytes));
	use("cudaMalloc, device 1 current", a[1], 2);
	CHECK(cudaMallocAsync((void **)&a[2], bytes, streams[1]));
	use("cudaMallocAsync on device 1's stream, device 1 current", a[2], 3);
	CHECK(cudaSetDevice(0));
	CHECK(cudaMallocAsync((void **)&a[3], bytes, streams[1]));
	use("cudaMallocAsync on device 1's stream, device 0 current", a[3], 4);
	CHECK(cudaSetDevice(1));
	CHECK(cudaMallocAsync((void **)&a[4], bytes, streams[0]));
	use("cudaMallocAsync on device 0's stream, device 1 current", a[4], 5);
	CHECK(cudaMallocManaged((void **)&a[5], bytes));
	use("cudaMallocManaged, device 1 current", a[5], 6);

	CHECK(cudaSetDevice(1));
	CHECK(cudaDeviceEnablePeerAccess(0, 0));
	fill<<<(N + 255) / 256, 256, 0, streams[1]>>>(a[0], N, 7);
	CHECK(cudaGetLastError());
	CHECK(cudaStreamSynchronize(streams[1]));
	CHECK(cudaSetDevice(0));
	static float host[N];
	CHECK(cudaMemcpy(host, a[0], bytes, cudaMemcpyDeviceToHost));
	double s = 0;
	for (size_t i = 0; i < N; i++)
		s += host[i];
	printf("device 0's buffer written by device 1: %.6e\n", s);

	// A free with the other device current, while device 0's stream will
	// still write the buffer (behind a host function that sleeps): the
	// next allocation of that size, zeroed on the legacy stream (which
	// does not wait for a non-blocking stream), must not see those writes.
	float *late;
	CHECK(cudaMalloc((void **)&late, bytes));
	CHECK(cudaLaunchHostFunc(streams[0], sleep_200ms, NULL));
	fill<<<(N + 255) / 256, 256, 0, streams[0]>>>(late, N, 8);
	CHECK(cudaGetLastError());
	CHECK(cudaSetDevice(1));
	CHECK(cudaFree(late));
	CHECK(cudaSetDevice(0));
	float *fresh;
	CHECK(cudaMalloc((void **)&fresh, bytes));
	CHECK(cudaMemset(fresh, 0, bytes));
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMemcpy(host, fresh, bytes, cudaMemcpyDeviceToHost));
	size_t stale = 0;
	for (size_t i = 0; i < N; i++)
		stale += host[i] != 0;
	printf("freed with device 1 current, then allocated again: %zu words not zero\n", stale);
	CHECK(cudaFree(fresh));

	CHECK(cudaFree(a[0]));
	CHECK(cudaFree(a[1]));
	CHECK(cudaFreeAsync(a[2], streams[1]));
	CHECK(cudaFreeAsync(a[3], streams[1]));
	CHECK(cudaFreeAsync(a[4], streams[0]));
	CHECK(cudaFree(a[5]));
	for (int d = 0; d < 2; d++) {
		CHECK(cudaSetDevice(d));
		CHECK(cudaStreamSynchronize(streams[d]));
		CHECK(cudaStreamDestroy(streams[d]));
	}

	CUdeviceptr on0, on1, pooled, more;
	CHECK(cudaSetDevice(0));
	CHECK_CU(cuMemAlloc(&on0, 8 << 20));
	CHECK(cudaSetDevice(1));
	CHECK_CU(cuMemAlloc(&on1, 2 << 20));
	CHECK_CU(cuMemAllocAsync(&pooled, 1 << 20, CU_STREAM_LEGACY));
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaDeviceReset());
	CHECK(cudaSetDevice(0));
	CHECK_CU(cuMemAlloc(&more, 4 << 20));
	printf("device 1 reset: ok\n");
	CHECK_CU(cuMemFree(more));
	CHECK_CU(cuMemFree(on0));
	return 0; // the pooled MiB is left to the exit: device 1's pool outlived its reset
}
