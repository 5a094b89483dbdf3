/*
 * managed_alloc.c: a PyTorch allocator on Unified Memory, as programs that
 * oversubscribe the GPU with it are written: every tensor from
 * cudaMallocManaged, loaded through torch.cuda.memory.CUDAPluggableAllocator
 * (examples/pytorch/common.py --managed-allocator). The functions have the
 * signatures PyTorch calls them with.
 */
#include <stddef.h>
#include <sys/types.h>

#include <cuda_runtime_api.h>

void *umkit_managed_malloc(ssize_t size, int device, cudaStream_t stream);
void umkit_managed_free(void *ptr, ssize_t size, int device, cudaStream_t stream);

/* NULL when refused: PyTorch raises its out-of-memory error. */
void *umkit_managed_malloc(ssize_t size, int device, cudaStream_t stream)
{
	void *p = NULL;
	(void)device;
	(void)stream;
	if (cudaMallocManaged(&p, (size_t)size, cudaMemAttachGlobal) != cudaSuccess)
		return NULL;
	return p;
}

/* cudaFree waits for the device, so no stream can still use the memory. */
void umkit_managed_free(void *ptr, ssize_t size, int device, cudaStream_t stream)
{
	(void)size;
	(void)device;
	(void)stream;
	cudaFree(ptr);
}
