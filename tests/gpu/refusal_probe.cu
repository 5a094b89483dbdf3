// refusal_probe: what a program sees when CUDA refuses an allocation or a
// free: the call's answer, then the thread's last error (cudaGetLastError)
// read twice, the second time reset. Under umrec or umreplay the arena's
// own refusals must read as the runtime's do: an allocation past
// --max-managed as one past the device's memory, a second free of the
// arena's memory as one of the runtime's.
//
// Usage: refusal_probe
// Prints one line per case: "<case>: <answer> then <last error>, <last
// error>"; exits 0, or 2 when the probe's own set-up failed.
#include <cstdio>

#include "probe_check.h"

// More memory than any GPU has, and than any --max-managed the checks set.
static const size_t TOO_MUCH = (size_t)1 << 40;

static void report(const char *what, cudaError_t answer)
{
	cudaError_t last = cudaGetLastError();
	printf("%s: %s then %s, %s\n", what, cudaGetErrorName(answer), cudaGetErrorName(last),
	       cudaGetErrorName(cudaGetLastError()));
}

int main()
{
	void *p = NULL;
	cudaStream_t s;
	setvbuf(stdout, NULL, _IOLBF, 0); // each case's line kept, should a later one crash
	CHECK(cudaFree(NULL));
	CHECK(cudaStreamCreate(&s));
	report("cudaMalloc 1 TiB", cudaMalloc(&p, TOO_MUCH));
	report("cudaMallocAsync 1 TiB", cudaMallocAsync(&p, TOO_MUCH, s));
	CHECK(cudaStreamSynchronize(s));
	report("cudaMalloc without a pointer", cudaMalloc(NULL, 1 << 20));
	CHECK(cudaMalloc(&p, 1 << 20));
	CHECK(cudaFree(p));
	report("cudaFree twice", cudaFree(p));
	CHECK(cudaMallocAsync(&p, 1 << 20, s));
	CHECK(cudaFreeAsync(p, s));
	CHECK(cudaStreamSynchronize(s));
	report("cudaFreeAsync twice", cudaFreeAsync(p, s));
	cudaStreamSynchronize(s);
	cudaGetLastError();
	CHECK(cudaStreamDestroy(s));
	return 0;
}
