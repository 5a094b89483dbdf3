/*
 * cudart.h: the real CUDA runtime functions behind the shim.
 *
 * The injected libraries define some runtime entry points themselves
 * (cudaMalloc, cudaFree, ...), so they reach the real ones by dlsym: first
 * the next definition after ours in the global scope (RTLD_NEXT), else a
 * libcudart the process already loaded privately. Going through the runtime
 * rather than the driver lets it create and bind the primary context on
 * whatever thread calls us first.
 */
#ifndef UMKIT_CUDART_H
#define UMKIT_CUDART_H

#include <stdbool.h>

#include <cuda_runtime_api.h>

struct cudart {
	cudaError_t (*Malloc)(void **, size_t);
	cudaError_t (*MallocManaged)(void **, size_t, unsigned int);
	cudaError_t (*MallocPitch)(void **, size_t *, size_t, size_t);
	cudaError_t (*Malloc3D)(struct cudaPitchedPtr *, struct cudaExtent);
	cudaError_t (*Free)(void *);
	cudaError_t (*MallocAsync)(void **, size_t, cudaStream_t);
	cudaError_t (*FreeAsync)(void *, cudaStream_t);
	cudaError_t (*MallocFromPoolAsync)(void **, size_t, cudaMemPool_t, cudaStream_t);
	cudaError_t (*MemPoolCreate)(cudaMemPool_t *, const struct cudaMemPoolProps *);
	cudaError_t (*MemPoolDestroy)(cudaMemPool_t);
	cudaError_t (*MemPoolSetAccess)(cudaMemPool_t, const struct cudaMemAccessDesc *, size_t);
	cudaError_t (*DeviceGetMemPool)(cudaMemPool_t *, int);
	cudaError_t (*DeviceGetDefaultMemPool)(cudaMemPool_t *, int);
	cudaError_t (*GetDevice)(int *);
	cudaError_t (*StreamAttachMemAsync)(cudaStream_t, void *, size_t, unsigned int);
	cudaError_t (*DeviceReset)(void);
	cudaError_t (*EventCreateWithFlags)(cudaEvent_t *, unsigned int);
	cudaError_t (*EventRecord)(cudaEvent_t, cudaStream_t);
	cudaError_t (*EventQuery)(cudaEvent_t);
	cudaError_t (*EventSynchronize)(cudaEvent_t);
	cudaError_t (*GetLastError)(void);
	cudaError_t (*PeekAtLastError)(void);
};

/* The resolved table, or NULL when no CUDA runtime is loaded in the process
 * under a file name starting libcudart (then nothing can have called the
 * shim through it either). Thread-safe. */
const struct cudart *cudart_get(void);

/* Whether the calling thread is inside one of the table's allocating
 * calls (Malloc, MallocManaged, MallocPitch, Malloc3D, MallocAsync,
 * MallocFromPoolAsync): the driver calls the runtime makes there are the
 * tools', not the program's (common/cuda/driver_allocs.h). */
bool cudart_own_allocation(void);

/* The tools' own runtime calls must not leave the program an error it did
 * not make, nor take one it made: the runtime keeps a thread's latest
 * error, so a failure replaces the program's. Asked before such a call:
 * whether the calling thread's last error is clean (cudaSuccess); it is
 * noted for cudart_quiet. */
bool cudart_clean(void);

/* Returns err, the answer to such a call. A failure's error is taken back
 * off the thread when it was clean before (clean, cudart_clean's answer);
 * where the program's error was there, it is made again (cudart_leave)
 * when the failure replaced it, which is possible for the errors
 * cudart_leave makes: another stays replaced by the failure's, still an
 * error. */
cudaError_t cudart_quiet(bool clean, cudaError_t err);

/* Leaves err as the calling thread's last runtime error, as the runtime's
 * own refusal would: no runtime call sets that error, so the runtime is
 * made to refuse alike, in relaxed capture mode so that a graph capture
 * under way allows the call (capture_relaxed_begin): more memory than any
 * device has (2^50 bytes) for cudaErrorMemoryAllocation, an allocation
 * with no pointer to fill for cudaErrorInvalidValue. Returns false, and
 * calls nothing, for any other error. */
bool cudart_leave(cudaError_t err);

#endif
