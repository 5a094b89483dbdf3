// wake_discard_probe: does an idle replay that wakes discard memory that
// work it never saw still reads? An idle umreplay follows no launch, so a
// kernel the program queues then on a non-blocking stream sets no flag;
// the program frees what that kernel reads (the arena hands the range back
// at once, its reuse deferred to a synchronize), and an allocation past the
// budget wakes the replay. The first launch that needs room takes the
// freed blocks first, by discard, ordered only after a marker on the
// legacy stream: the discard could land before the queued kernel read the
// bytes (session 61's review).
//
// Usage: wake_discard_probe eager | wake
//   eager: the buffers and kernels without the extra allocation (what the
//          plan is made from);
//   wake:  A (64 MiB of 0x11) is copied to C on a non-blocking stream held
//          up for 1 s by host functions; A is freed, 128 MiB more is
//          allocated (past a budget just above the eager peak) and filled
//          by kernels on the legacy stream; then C is checked.
// Prints "wake: ok" or "wake: BAD ..." (eager: "eager: ok") and exits 0 or
// 1. Plain CUDA gets it right: its free waits for the copy.
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "probe_check.h"

typedef unsigned char u8;
static const size_t N = 64 << 20, EXTRA = 128 << 20;

__global__ void nothing() {}

__global__ void copy(const u8 *from, u8 *to, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		to[i] = from[i];
}

__global__ void fill(u8 *p, size_t n, u8 v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = v;
}

int main(int argc, char **argv)
{
	bool wake = argc == 2 && strcmp(argv[1], "wake") == 0;
	if (argc != 2 || (!wake && strcmp(argv[1], "eager") != 0)) {
		fprintf(stderr, "usage: wake_discard_probe eager | wake\n");
		return 64;
	}
	u8 *a, *c, *guard;
	CHECK(cudaMalloc(&a, N));
	CHECK(cudaMalloc(&c, N));
	// After A and C: the extra allocation cannot take A's range.
	CHECK(cudaMalloc(&guard, N));
	fill<<<264, 256>>>(a, N, 0x11);
	fill<<<264, 256>>>(c, N, 0);
	fill<<<264, 256>>>(guard, N, 0x33);
	CHECK(cudaDeviceSynchronize());

	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	if (wake)
		for (int i = 0; i < 5; i++)
			CHECK(cudaLaunchHostFunc(s, sleep_200ms, NULL));
	copy<<<264, 256, 0, s>>>(a, c, N);
	CHECK(cudaFree(a));
	if (wake) {
		u8 *extra;
		CHECK(cudaMalloc(&extra, EXTRA));
		fill<<<264, 256>>>(extra, EXTRA, 0x22);
		for (int i = 0; i < 8; i++)
			nothing<<<1, 1>>>();
	}
	CHECK(cudaDeviceSynchronize());

	static u8 h[N];
	CHECK(cudaMemcpy(h, c, N, cudaMemcpyDeviceToHost));
	size_t good = 0;
	for (size_t i = 0; i < N; i++)
		good += h[i] == 0x11;
	printf("%s: %s (%zu of %zu bytes copied from the freed buffer read 0x11)\n", argv[1], good == N ? "ok" : "BAD",
	       good, N);
	return good == N ? 0 : 1;
}
