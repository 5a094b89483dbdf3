/*
 * fake_cudart.c: a CUDA runtime's entry points that umkit resolves, each a
 * stub, built as a library named as a wheel names its own copy of the
 * runtime (libcudart-0a1b2c3d.so.12, the soname alike): what
 * tests/unit/test_cudart.c loads with RTLD_LOCAL. Nothing calls them.
 */
#define STUB(name) \
	int name(void); \
	int name(void) { return 0; }

STUB(cudaMalloc)
STUB(cudaMallocManaged)
STUB(cudaMallocPitch)
STUB(cudaMalloc3D)
STUB(cudaFree)
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
STUB(cudaGetLastError)
STUB(cudaPeekAtLastError)
