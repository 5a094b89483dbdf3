/*
 * managed_alloc.c: a PyTorch allocator on Unified Memory, as programs that
 * oversubscribe the GPU with it are written: every tensor from
 * cudaMallocManaged, loaded through torch.cuda.memory.CUDAPluggableAllocator
 * (examples/pytorch/common.py --managed-allocator). The functions have the
 * signatures PyTorch calls them with.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include <cuda_runtime_api.h>

void *umkit_managed_malloc(ssize_t size, int device, cudaStream_t stream);
void umkit_managed_free(void *ptr, ssize_t size, int device, cudaStream_t stream);

/* PyTorch asks for empty tensors too, and takes NULL for them, as its own
 * allocator answers. It does not check for NULL otherwise: a refused
 * allocation would become a tensor at address 0, so this allocator ends
 * the program as the examples end on running out of memory (common.py). */
void *umkit_managed_malloc(ssize_t size, int device, cudaStream_t stream)
{
	void *p = NULL;
	(void)device;
	(void)stream;
	if (size <= 0)
		return NULL;
	cudaError_t err = cudaMallocManaged(&p, (size_t)size, cudaMemAttachGlobal);
	if (err != cudaSuccess) {
		fprintf(stderr, "out of memory: cudaMallocManaged of %zd bytes: %s\n", size, cudaGetErrorString(err));
		exit(2);
	}
	return p;
}

/* cudaFree waits for the device, so no stream can still use the memory.
 * It fails when the context has failed (an earlier kernel's illegal
 * address, say): the program's results are already lost then, so it ends
 * here with the reason, as PyTorch's own allocator raises, where a quiet
 * return let it run on. At the interpreter's exit the runtime may be
 * unloading first: the memory goes with the process, and that is no
 * failure. Once ending, the frees exit() itself makes (destructors that
 * hold tensors) fail alike, and return: exit() is not to be called again
 * from inside it. */
void umkit_managed_free(void *ptr, ssize_t size, int device, cudaStream_t stream)
{
	static atomic_flag ending = ATOMIC_FLAG_INIT;
	(void)device;
	(void)stream;
	if (!ptr)
		return;
	cudaError_t err = cudaFree(ptr);
	if (err == cudaSuccess || err == cudaErrorCudartUnloading || atomic_flag_test_and_set(&ending))
		return;
	fprintf(stderr, "cudaFree of %zd bytes at %p: %s\n", size, ptr, cudaGetErrorString(err));
	exit(2);
}
