// fork_probe: does a forked child's CUDA answer as it does without umkit?
// The parent has the runtime initialised and memory allocated; the child
// (no exec) calls cudaMalloc and cudaFree, which CUDA refuses in a child of
// a process that used it. Under umrec and umreplay the child inherited the
// parent's arena: it handed out the parent's managed memory (session 61's
// review), or could hang on a lock a parent thread held at the fork.
//
// Prints the parent's sum and the child's answers; exits 0, or 2 when the
// parent's own set-up fails.
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "probe_check.h"

__global__ void fill(unsigned *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = (unsigned)i;
}

int main()
{
	const size_t n = 1 << 20;
	unsigned *d, *h;
	CHECK(cudaMalloc(&d, n * sizeof *d));
	fill<<<64, 256>>>(d, n);
	CHECK(cudaMallocHost(&h, n * sizeof *h));
	CHECK(cudaMemcpy(h, d, n * sizeof *d, cudaMemcpyDeviceToHost));
	unsigned long long sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += h[i];
	printf("parent sum %llu\n", sum);
	fflush(stdout);

	pid_t pid = fork();
	if (pid == 0) {
		void *p = NULL;
		cudaError_t m = cudaMalloc(&p, 1 << 20);
		cudaError_t f = cudaFree(m == cudaSuccess ? p : d);
		printf("child cudaMalloc %s, cudaFree %s\n", cudaGetErrorName(m), cudaGetErrorName(f));
		fflush(stdout);
		_exit(0);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		printf("child: did not exit\n");
		return 1;
	}
	CHECK(cudaFree(d));
	printf("parent freed\n");
	return 0;
}
