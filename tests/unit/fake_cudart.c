/*
 * fake_cudart.c: a CUDA runtime's entry points that umkit resolves, built
 * as a library named as a wheel names its own copy of the runtime
 * (libcudart-0a1b2c3d.so.12, the soname alike): what
 * tests/unit/test_cudart.c loads with RTLD_LOCAL. Most are stubs nothing
 * calls. The runtime's last error is kept as the runtime keeps it, per
 * thread, overwritten by each call that fails (cudaGetLastError returns
 * and clears it, cudaPeekAtLastError returns it); cudaMalloc refuses as
 * the runtime does (no pointer: cudaErrorInvalidValue, 1; 2^50 bytes or
 * more: cudaErrorMemoryAllocation, 2), cudaFree fails for the address 1
 * (cudaErrorInvalidDevicePointer, 17), and fake_cudart_fail makes any
 * error the thread's last, as a program's own failed call would.
 */
#include <stddef.h>

#define STUB(name) \
	int name(void); \
	int name(void) { return 0; }

static __thread int last_error;

static int fail(int err)
{
	last_error = err;
	return err;
}

void fake_cudart_fail(int err);
void fake_cudart_fail(int err)
{
	fail(err);
}

int cudaMalloc(void **p, size_t size);
int cudaMalloc(void **p, size_t size)
{
	static char memory[64];
	if (!p)
		return fail(1);
	if (size >= (size_t)1 << 50)
		return fail(2);
	*p = memory;
	return 0;
}

int cudaFree(void *p);
int cudaFree(void *p)
{
	return p == (void *)1 ? fail(17) : 0;
}

int cudaGetLastError(void);
int cudaGetLastError(void)
{
	int err = last_error;
	last_error = 0;
	return err;
}

int cudaPeekAtLastError(void);
int cudaPeekAtLastError(void)
{
	return last_error;
}

STUB(cudaMallocManaged)
STUB(cudaMallocPitch)
STUB(cudaMalloc3D)
STUB(cudaMallocAsync)
STUB(cudaFreeAsync)
STUB(cudaMallocFromPoolAsync)
STUB(cudaMemPoolCreate)
STUB(cudaMemPoolDestroy)
STUB(cudaMemPoolSetAccess)
STUB(cudaDeviceGetMemPool)
STUB(cudaDeviceGetDefaultMemPool)
STUB(cudaGetDevice)
STUB(cudaStreamAttachMemAsync)
STUB(cudaDeviceReset)
STUB(cudaEventCreateWithFlags)
STUB(cudaEventRecord)
STUB(cudaEventQuery)
STUB(cudaEventSynchronize)
