// managed_probe: a program written for Unified Memory. Each step it
// allocates its input with cudaMallocManaged and fills it from the host,
// runs four kernels over it and four weight buffers (cudaMalloc) through
// two temporaries, and sums its output, also managed memory, on the host.
// Under umkit that memory is the arena's. Its sums must be plain's, though
// a discard of the input after the host wrote it need not change them (on
// the H200 it did not: bench/results/2026-11-29/s54/README.md). First it
// attaches a managed allocation to streams in the ways the runtime takes
// and refuses, each answer with the thread's last error after it, read
// twice; under umkit the arena answers for its memory, as plain CUDA.
//
// Usage: managed_probe
// Prints "attach ...: <answer> then <last error>, <last error>" lines,
// "step N sum X" per step, then "managed: ok"; exits 0, or 2 when a CUDA
// call failed.
#include <cstdio>

#include "probe_check.h"

static const size_t N = (size_t)16 << 20; // floats: 64 MiB a buffer
static const int STEPS = 8, WEIGHTS = 4;

__global__ void fill(float *p, size_t n, float v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = v;
}

// out = a * w, or a + w when add
__global__ void combine(const float *a, const float *w, float *out, size_t n, bool add)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		out[i] = add ? a[i] + w[i] : a[i] * w[i];
}

static void report(const char *what, cudaError_t answer)
{
	cudaError_t last = cudaGetLastError();
	printf("attach %s: %s then %s, %s\n", what, cudaGetErrorName(answer), cudaGetErrorName(last),
	       cudaGetErrorName(cudaGetLastError()));
}

// The stream associations the runtime takes for a managed allocation (the
// whole of it, by a length of 0 or its size) and some it refuses, device
// memory's among them.
static void attach_cases(void)
{
	const size_t bytes = 3 << 20;
	float *m, *d;
	cudaStream_t s;
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaMallocManaged(&m, bytes));
	CHECK(cudaMalloc(&d, bytes));
	report("single, length 0", cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle));
	report("host, its size", cudaStreamAttachMemAsync(s, m, bytes, cudaMemAttachHost));
	report("global, length 0", cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachGlobal));
	report("single to the NULL stream", cudaStreamAttachMemAsync(0, m, 0, cudaMemAttachSingle));
	report("half of it", cudaStreamAttachMemAsync(s, m, bytes / 2, cudaMemAttachGlobal));
	report("inside it", cudaStreamAttachMemAsync(s, m + 1, 0, cudaMemAttachGlobal));
	report("device memory", cudaStreamAttachMemAsync(s, d, 0, cudaMemAttachGlobal));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaFree(d));
	CHECK(cudaFree(m));
	CHECK(cudaStreamDestroy(s));
}

int main()
{
	const unsigned blocks = 1024, threads = 256;
	float *w[WEIGHTS];
	setvbuf(stdout, NULL, _IOLBF, 0);
	attach_cases();
	for (int k = 0; k < WEIGHTS; k++) {
		CHECK(cudaMalloc(&w[k], N * sizeof(float)));
		fill<<<blocks, threads>>>(w[k], N, 0.5f + 0.25f * k);
	}
	for (int step = 0; step < STEPS; step++) {
		float *in, *out, *t1, *t2;
		CHECK(cudaMallocManaged(&in, N * sizeof(float)));
		for (size_t i = 0; i < N; i++)
			in[i] = (float)((i * 7 + step) % 1000) * 1e-3f;
		CHECK(cudaMalloc(&t1, N * sizeof(float)));
		CHECK(cudaMalloc(&t2, N * sizeof(float)));
		CHECK(cudaMallocManaged(&out, N * sizeof(float)));
		combine<<<blocks, threads>>>(in, w[0], t1, N, false);
		combine<<<blocks, threads>>>(t1, w[1], t2, N, true);
		combine<<<blocks, threads>>>(t2, w[2], t1, N, false);
		combine<<<blocks, threads>>>(t1, w[3], out, N, true);
		CHECK(cudaDeviceSynchronize());
		double sum = 0;
		for (size_t i = 0; i < N; i++)
			sum += out[i];
		printf("step %d sum %.6e\n", step, sum);
		CHECK(cudaFree(in));
		CHECK(cudaFree(t1));
		CHECK(cudaFree(t2));
		CHECK(cudaFree(out));
	}
	for (int k = 0; k < WEIGHTS; k++)
		CHECK(cudaFree(w[k]));
	printf("managed: ok\n");
	return 0;
}
