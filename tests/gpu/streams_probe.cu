// streams_probe: two GPUs' streams, as the arena's fences must see them.
// The arena is device 0's (current at the first allocation); device 1's
// streams can neither take the fences' events nor hold its memory's work
// back, and must change nothing of how device 0's memory is handed on.
// Three cases, each printing one line that must read as plain:
//  - "order": device 0's legacy stream is held 200 ms by a kernel that
//    spins (a host function there did not hold it on two H200s: the
//    fill behind it ran at once) and then fills a buffer, which is freed; device 1's non-blocking
//    stream gets the program's first work outside a legacy stream; then
//    device 0 allocates the same size again and zeroes it on its own
//    non-blocking stream. Under the tools the free handed the range on
//    at once (one stream order so far), so the zeroing must be queued
//    behind the legacy stream's fill: the line counts the words not zero,
//    and stderr says whether the range was the freed one and how long
//    after the free the zeroing was done (at least the 200 ms the legacy
//    stream is held, plain or not, on two H200s even when it was not
//    ordered behind the fill: whether the words show that is a race).
//  - "wait": device 0's non-blocking stream is held 200 ms, device 1's
//    non-blocking stream has work, and a buffer no pending work uses is
//    freed with device 0 current. The line says whether the sum of a
//    buffer the held stream fills reads right afterwards; the time the
//    free took goes to stderr ("free waited N ms"), since plain CUDA's
//    free waits for the device and the tools' need not.
//  - "driver launch": the kernel, as a context-independent CUkernel, is
//    launched through the driver API on device 0's stream with device 1
//    current; it runs in the stream's context, device 0's. umplan plans
//    it, umreplay does not follow it (docs/design.md, "Known limits");
//    the line counts the words of its buffer that it did not write.
//  - "peer free": device 1's non-blocking stream is held 200 ms by a
//    spin, then fills a buffer of device 0's through peer access, and the
//    buffer is freed on that stream (cudaFreeAsync, device 1 current:
//    the runtime frees a cudaMalloc allocation so at the stream's next
//    synchronization). Device 0 then allocates the same size and zeroes
//    it on its own stream: the line counts the words not zero once
//    device 1's stream is done, and stderr says whether the range was
//    the freed one and how long the free took.
//
// Usage: streams_probe
// Exits 0, 2 when the probe's own set-up failed, 3 with fewer than two
// GPUs.
#include <chrono>
#include <cstdio>

#include <cuda.h>

#include "probe_check.h"

static const size_t N = 1 << 20; // floats per buffer

// Holds its stream for ns nanoseconds of the GPU's clock.
__global__ void spin(unsigned long long ns)
{
	unsigned long long start, now;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	while (now - start < ns);
}

__global__ void fill(float *a, size_t n, float value)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		a[i] = value;
}

static float host[N];

// Words of a (on the current device) that are not value.
static size_t count_not(const float *a, float value)
{
	CHECK(cudaMemcpy(host, a, N * sizeof(float), cudaMemcpyDeviceToHost));
	size_t n = 0;
	for (size_t i = 0; i < N; i++)
		n += host[i] != value;
	return n;
}

int main()
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int count = 0;
	CHECK(cudaGetDeviceCount(&count));
	if (count < 2) {
		printf("streams_probe: %d GPU, two needed\n", count);
		return 3;
	}
	cudaStream_t own[2];
	float *other;
	size_t bytes = N * sizeof(float);
	unsigned blocks = (N + 255) / 256;
	for (int d = 0; d < 2; d++) {
		CHECK(cudaSetDevice(d));
		CHECK(cudaStreamCreateWithFlags(&own[d], cudaStreamNonBlocking));
	}
	CHECK(cudaSetDevice(0));
	float *first;
	CHECK(cudaMalloc((void **)&first, bytes)); // the arena's first: device 0's
	CHECK(cudaSetDevice(1));
	CHECK(cudaMalloc((void **)&other, bytes));

	CHECK(cudaSetDevice(0));
	spin<<<1, 1>>>(200000000ull);
	fill<<<blocks, 256>>>(first, N, 8);
	CHECK(cudaGetLastError());
	auto freed = std::chrono::steady_clock::now();
	CHECK(cudaFree(first));
	CHECK(cudaSetDevice(1));
	fill<<<blocks, 256, 0, own[1]>>>(other, N, 1);
	CHECK(cudaGetLastError());
	CHECK(cudaSetDevice(0));
	float *again;
	CHECK(cudaMalloc((void **)&again, bytes));
	CHECK(cudaMemsetAsync(again, 0, bytes, own[0]));
	CHECK(cudaStreamSynchronize(own[0]));
	double zeroed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - freed).count();
	CHECK(cudaDeviceSynchronize());
	printf("order: %zu words not zero\n", count_not(again, 0));
	fprintf(stderr, "order: the range %s, zeroed %.1f ms after the free\n",
		again == first ? "handed on" : "not handed on", zeroed);

	float *held, *idle;
	CHECK(cudaMalloc((void **)&held, bytes));
	CHECK(cudaMalloc((void **)&idle, bytes));
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaLaunchHostFunc(own[0], sleep_200ms, NULL));
	fill<<<blocks, 256, 0, own[0]>>>(held, N, 3);
	CHECK(cudaGetLastError());
	CHECK(cudaSetDevice(1));
	fill<<<blocks, 256, 0, own[1]>>>(other, N, 2);
	CHECK(cudaGetLastError());
	CHECK(cudaSetDevice(0));
	auto t0 = std::chrono::steady_clock::now();
	CHECK(cudaFree(idle));
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	CHECK(cudaStreamSynchronize(own[0]));
	printf("wait: %zu words of the held stream's buffer wrong\n", count_not(held, 3));
	fprintf(stderr, "free waited %.1f ms\n", ms);

	cudaKernel_t kernel;
	CHECK(cudaGetKernel(&kernel, (const void *)fill));
	size_t n = N;
	float value = 5;
	void *args[] = { &held, &n, &value };
	CHECK(cudaSetDevice(1));
	CUresult r = cuLaunchKernel((CUfunction)kernel, blocks, 1, 1, 256, 1, 1, 0, (CUstream)own[0], args, NULL);
	if (r != CUDA_SUCCESS) {
		printf("cuLaunchKernel on device 0's stream, device 1 current, failed: %d\n", (int)r);
		return 2;
	}
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamSynchronize(own[0]));
	printf("driver launch: %zu words not written\n", count_not(held, 5));

	int peer = 0;
	CHECK(cudaDeviceCanAccessPeer(&peer, 1, 0));
	float *shared, *reused;
	CHECK(cudaMalloc((void **)&shared, bytes));
	CHECK(cudaSetDevice(1));
	if (peer) {
		cudaError_t err = cudaDeviceEnablePeerAccess(0, 0);
		if (err != cudaSuccess && err != cudaErrorPeerAccessAlreadyEnabled)
			CHECK(err);
		(void)cudaGetLastError(); /* already enabled is no error here */
		spin<<<1, 1, 0, own[1]>>>(200000000ull);
		fill<<<blocks, 256, 0, own[1]>>>(shared, N, 6);
		CHECK(cudaGetLastError());
	}
	t0 = std::chrono::steady_clock::now();
	CHECK(cudaFreeAsync(shared, own[1]));
	ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	CHECK(cudaSetDevice(0));
	CHECK(cudaMalloc((void **)&reused, bytes));
	CHECK(cudaMemsetAsync(reused, 0, bytes, own[0]));
	CHECK(cudaStreamSynchronize(own[0]));
	CHECK(cudaSetDevice(1));
	CHECK(cudaStreamSynchronize(own[1]));
	CHECK(cudaSetDevice(0));
	if (peer)
		printf("peer free: %zu words not zero\n", count_not(reused, 0));
	else
		printf("peer free: device 1 cannot reach device 0's memory\n");
	fprintf(stderr, "peer free: the range %s, the free took %.1f ms\n",
		reused == shared ? "handed on" : "not handed on", ms);

	CHECK(cudaFree(again));
	CHECK(cudaFree(held));
	CHECK(cudaFree(reused));
	CHECK(cudaSetDevice(1));
	CHECK(cudaStreamSynchronize(own[1]));
	CHECK(cudaFree(other));
	for (int d = 0; d < 2; d++) {
		CHECK(cudaSetDevice(d));
		CHECK(cudaStreamDestroy(own[d]));
	}
	return 0;
}
