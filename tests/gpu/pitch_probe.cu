// pitch_probe: pitched allocations (cudaMallocPitch, cudaMalloc3D) as a
// program sees them. Under umrec or umreplay every line must read as it
// does under plain CUDA:
//  - the pitch the runtime gives rows of several widths;
//  - a 3D allocation's pitched pointer (pitch, xsize, ysize);
//  - the answers to requests the arena leaves to the runtime or refuses,
//    each with the thread's last error after it, read twice;
//  - the sums of a 2D array a kernel fills and of a 3D array another
//    kernel fills from it, read back with cudaMemcpy2D and cudaMemcpy3D.
//
// Usage: pitch_probe
// Prints "name: value" lines and, last, "sizes: <2D bytes> <3D bytes>"
// (pitch × rows, the allocations a trace must record); exits 0, or 2 when
// the probe's own set-up failed.
#include <cstdio>

#include "probe_check.h"

static const int W = 1000, H = 300, D = 5; // floats per row, rows, slices

__global__ void fill2d(float *a, size_t pitch, int w, int h)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x < w && y < h)
		((float *)((char *)a + y * pitch))[x] = 0.5f * x + y;
}

__global__ void spread3d(const float *a, size_t apitch, cudaPitchedPtr p, int w, int h, int d)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x >= w || y >= h)
		return;
	float v = ((const float *)((const char *)a + y * apitch))[x];
	for (int z = 0; z < d; z++)
		((float *)((char *)p.ptr + (z * h + y) * p.pitch))[x] = v * (z + 1);
}

static void report(const char *what, cudaError_t answer)
{
	cudaError_t last = cudaGetLastError();
	printf("%s: %s then %s, %s\n", what, cudaGetErrorName(answer), cudaGetErrorName(last),
	       cudaGetErrorName(cudaGetLastError()));
}

static double sum(const float *v, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

int main()
{
	static const size_t widths[] = { 1, 100, 511, 512, 513, 4000, 65543, (1 << 20) + 3 };
	void *p;
	size_t pitch;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t width : widths) {
		CHECK(cudaMallocPitch(&p, &pitch, width, 3));
		printf("pitch %zu: %zu\n", width, pitch);
		CHECK(cudaFree(p));
	}

	report("cudaMallocPitch 1 TiB", cudaMallocPitch(&p, &pitch, (size_t)1 << 20, (size_t)1 << 20));
	report("cudaMallocPitch without a pitch", cudaMallocPitch(&p, NULL, 64, 64));
	report("cudaMalloc3D without a pointer", cudaMalloc3D(NULL, make_cudaExtent(64, 4, 2)));
	cudaPitchedPtr empty = {};
	cudaError_t answer = cudaMalloc3D(&empty, make_cudaExtent(64, 4, 0));
	report("cudaMalloc3D of no slices", answer);
	if (answer == cudaSuccess && empty.ptr)
		CHECK(cudaFree(empty.ptr));

	float *a;
	size_t apitch;
	cudaPitchedPtr vol;
	CHECK(cudaMallocPitch((void **)&a, &apitch, W * sizeof(float), H));
	CHECK(cudaMalloc3D(&vol, make_cudaExtent(W * sizeof(float), H, D)));
	printf("3d: pitch %zu xsize %zu ysize %zu\n", vol.pitch, vol.xsize, vol.ysize);
	dim3 grid((W + 255) / 256, H);
	fill2d<<<grid, 256>>>(a, apitch, W, H);
	spread3d<<<grid, 256>>>(a, apitch, vol, W, H, D);
	CHECK(cudaGetLastError());

	static float plane[W * H], cube[W * H * D];
	CHECK(cudaMemcpy2D(plane, W * sizeof(float), a, apitch, W * sizeof(float), H, cudaMemcpyDeviceToHost));
	cudaMemcpy3DParms copy = {};
	copy.srcPtr = vol;
	copy.dstPtr = make_cudaPitchedPtr(cube, W * sizeof(float), W * sizeof(float), H);
	copy.extent = make_cudaExtent(W * sizeof(float), H, D);
	copy.kind = cudaMemcpyDeviceToHost;
	CHECK(cudaMemcpy3D(&copy));
	printf("sum2d: %.6e\nsum3d: %.6e\n", sum(plane, W * H), sum(cube, (size_t)W * H * D));
	CHECK(cudaFree(a));
	CHECK(cudaFree(vol.ptr));
	printf("sizes: %zu %zu\n", apitch * H, vol.pitch * H * D);
	return 0;
}
