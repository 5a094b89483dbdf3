/* cudart.c: resolve the real CUDA runtime entry points (see cudart.h). */
#include "cudart.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static struct cudart table;
static int table_ok;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void *find(void *lib, const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);
	if (!fn && lib)
		fn = dlsym(lib, name);
	return fn;
}

static void resolve(void)
{
	/* A runtime loaded with RTLD_LOCAL (e.g. by a Python extension) is not
	 * in the global scope RTLD_NEXT searches; RTLD_NOLOAD finds it without
	 * loading anything new. */
	static const char *names[] = { "libcudart.so.13", "libcudart.so.12", "libcudart.so" };
	void *lib = NULL;
	for (size_t i = 0; !lib && i < sizeof names / sizeof names[0]; i++)
		lib = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);

#define RESOLVE(field, name) \
	*(void **)&table.field = find(lib, name); \
	if (!table.field) \
		return;
	RESOLVE(Malloc, "cudaMalloc")
	RESOLVE(MallocManaged, "cudaMallocManaged")
	RESOLVE(MallocPitch, "cudaMallocPitch")
	RESOLVE(Malloc3D, "cudaMalloc3D")
	RESOLVE(Free, "cudaFree")
	RESOLVE(MallocAsync, "cudaMallocAsync")
	RESOLVE(FreeAsync, "cudaFreeAsync")
	RESOLVE(MallocFromPoolAsync, "cudaMallocFromPoolAsync")
	RESOLVE(MemPoolCreate, "cudaMemPoolCreate")
	RESOLVE(MemPoolDestroy, "cudaMemPoolDestroy")
	RESOLVE(MemPoolSetAccess, "cudaMemPoolSetAccess")
	RESOLVE(DeviceGetMemPool, "cudaDeviceGetMemPool")
	RESOLVE(DeviceGetDefaultMemPool, "cudaDeviceGetDefaultMemPool")
	RESOLVE(GetDevice, "cudaGetDevice")
	RESOLVE(StreamAttachMemAsync, "cudaStreamAttachMemAsync")
	RESOLVE(DeviceReset, "cudaDeviceReset")
	RESOLVE(EventCreateWithFlags, "cudaEventCreateWithFlags")
	RESOLVE(EventRecord, "cudaEventRecord")
	RESOLVE(EventQuery, "cudaEventQuery")
	RESOLVE(EventSynchronize, "cudaEventSynchronize")
	RESOLVE(GetLastError, "cudaGetLastError")
	RESOLVE(PeekAtLastError, "cudaPeekAtLastError")
#undef RESOLVE
	table_ok = 1;
}

const struct cudart *cudart_get(void)
{
	pthread_once(&table_once, resolve);
	return table_ok ? &table : NULL;
}

bool cudart_clean(void)
{
	return cudart_get()->PeekAtLastError() == cudaSuccess;
}

cudaError_t cudart_quiet(bool clean, cudaError_t err)
{
	if (err != cudaSuccess && clean)
		cudart_get()->GetLastError();
	return err;
}
