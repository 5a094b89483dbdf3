// packed_probe: kernel launches through the driver with the parameters
// packed in one buffer (cuLaunchKernel's extra: CU_LAUNCH_PARAM_BUFFER_
// POINTER and _SIZE), which the tools decode apart from kernelParams
// (common/cuda/launch_info.c), at the launch's entry, before the driver
// checks anything:
//  - a launch that fills a buffer from cudaMalloc (the arena's, under the
//    tools), its sum printed: the tools must see its pointer;
//  - the same launch with a NULL buffer: the driver's answer is printed,
//    and the tools must leave it to the driver. (One with its size given
//    through a NULL pointer crashed the tools' decoding; the driver
//    crashes on it too, plain, on the H200 in session 79, so it cannot
//    be compared here: tests/unit/test_launch_info.c has it.)
// Under either tool every line must read as plain.
//
// Usage: packed_probe
// Exits 0, or 2 when a call of its own set-up failed.
#include <cstdio>
#include <cstring>

#include "probe_check.h"

static const size_t WORDS = 1 << 20;

__global__ void fill(float *a, size_t n, float scale)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		a[i] = scale * (i % 1000);
}

// Launches fill with extra, and says what the driver answered.
static void launch(const char *what, CUfunction f, void **extra)
{
	CUresult r = cuLaunchKernel(f, (unsigned)((WORDS + 255) / 256), 1, 1, 256, 1, 1, 0, NULL, NULL, extra);
	const char *name = "?";
	cuGetErrorName(r, &name);
	printf("%s: %s\n", what, name);
}

int main()
{
	setvbuf(stdout, NULL, _IONBF, 0);
	float *a, scale = 3;
	size_t n = WORDS;
	CHECK(cudaMalloc(&a, WORDS * sizeof *a));
	CHECK(cudaMemset(a, 0, WORDS * sizeof *a));
	CUfunction f;
	CHECK(cudaGetFuncBySymbol(&f, (const void *)fill));
	// The buffer's layout is the kernel's: each parameter at its offset,
	// the size where the last one ends.
	size_t off[3], size[3];
	for (int i = 0; i < 3; i++)
		CHECK_CU(cuFuncGetParamInfo(f, i, &off[i], &size[i]));
	unsigned char buf[64] = { 0 };
	memcpy(buf + off[0], &a, sizeof a);
	memcpy(buf + off[1], &n, sizeof n);
	memcpy(buf + off[2], &scale, sizeof scale);
	size_t len = off[2] + size[2];

	void *packed[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &len,
			   CU_LAUNCH_PARAM_END };
	launch("packed", f, packed);
	CHECK(cudaDeviceSynchronize());
	float *host = (float *)malloc(WORDS * sizeof *host);
	CHECK(cudaMemcpy(host, a, WORDS * sizeof *host, cudaMemcpyDeviceToHost));
	double sum = 0;
	for (size_t i = 0; i < WORDS; i++)
		sum += host[i];
	printf("packed sum: %.0f\n", sum);

	void *no_buffer[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, NULL, CU_LAUNCH_PARAM_BUFFER_SIZE, &len,
			      CU_LAUNCH_PARAM_END };
	launch("packed, no buffer", f, no_buffer);
	CHECK(cudaDeviceSynchronize());
	free(host);
	return 0;
}
