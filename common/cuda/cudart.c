/* cudart.c: resolve the real CUDA runtime entry points, marking the tools' own
 * allocations made through them, and keep the program's last error past
 * the tools' own calls (see cudart.h). */
#include "cudart.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"

static struct cudart table, real;
static int table_ok;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* The allocating calls the tools make, marked on the calling thread while
 * they run (cudart_own_allocation): the table hands out these in the real
 * functions' place. */
static __thread unsigned own_depth;

#define OWN(call)                          \
	do {                               \
		own_depth++;               \
		cudaError_t err_ = (call); \
		own_depth--;               \
		return err_;               \
	} while (0)

static cudaError_t own_malloc(void **p, size_t size)
{
	OWN(real.Malloc(p, size));
}

static cudaError_t own_malloc_managed(void **p, size_t size, unsigned int flags)
{
	OWN(real.MallocManaged(p, size, flags));
}

static cudaError_t own_malloc_pitch(void **p, size_t *pitch, size_t width, size_t height)
{
	OWN(real.MallocPitch(p, pitch, width, height));
}

static cudaError_t own_malloc_3d(struct cudaPitchedPtr *p, struct cudaExtent extent)
{
	OWN(real.Malloc3D(p, extent));
}

static cudaError_t own_malloc_async(void **p, size_t size, cudaStream_t stream)
{
	OWN(real.MallocAsync(p, size, stream));
}

static cudaError_t own_malloc_from_pool_async(void **p, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
	OWN(real.MallocFromPoolAsync(p, size, pool, stream));
}
#undef OWN

bool cudart_own_allocation(void)
{
	return own_depth > 0;
}

static void *find(void *lib, const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);
	if (!fn && lib)
		fn = dlsym(lib, name);
	return fn;
}

/* dl_iterate_phdr's callback: the path of the first object loaded whose
 * file name starts libcudart, into data (PATH_MAX bytes). */
static int runtime_path(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *slash = strrchr(info->dlpi_name, '/');
	const char *base = slash ? slash + 1 : info->dlpi_name;
	if (strncmp(base, "libcudart", strlen("libcudart")) != 0)
		return 0;
	return snprintf(data, PATH_MAX, "%s", info->dlpi_name) < PATH_MAX;
}

static void resolve(void)
{
	/* A runtime loaded with RTLD_LOCAL (e.g. by a Python extension) is not
	 * in the global scope RTLD_NEXT searches; RTLD_NOLOAD finds it without
	 * loading anything new. By its usual names first, then under any
	 * name it was loaded with (a wheel's libcudart-1a2b3c4d.so.12, an older
	 * libcudart.so.11.0), whose calls of the shim would otherwise find
	 * no runtime to pass on to. Opened once the loader's list is walked:
	 * dlopen is not to be called from inside that walk. */
	static const char *names[] = { "libcudart.so.13", "libcudart.so.12", "libcudart.so" };
	void *lib = NULL;
	for (size_t i = 0; !lib && i < sizeof names / sizeof names[0]; i++)
		lib = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
	char path[PATH_MAX];
	if (!lib && dl_iterate_phdr(runtime_path, path))
		lib = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);

#define RESOLVE(field, name) \
	*(void **)&real.field = find(lib, name); \
	if (!real.field) \
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
	table = real;
	table.Malloc = own_malloc;
	table.MallocManaged = own_malloc_managed;
	table.MallocPitch = own_malloc_pitch;
	table.Malloc3D = own_malloc_3d;
	table.MallocAsync = own_malloc_async;
	table.MallocFromPoolAsync = own_malloc_from_pool_async;
	table_ok = 1;
}

const struct cudart *cudart_get(void)
{
	pthread_once(&table_once, resolve);
	return table_ok ? &table : NULL;
}

/* The calling thread's last error as cudart_clean found it. */
static __thread cudaError_t found;

bool cudart_clean(void)
{
	found = cudart_get()->PeekAtLastError();
	return found == cudaSuccess;
}

bool cudart_leave(cudaError_t err)
{
	if (err != cudaErrorMemoryAllocation && err != cudaErrorInvalidValue)
		return false;
	const struct cudart *rt = cudart_get();
	CUstreamCaptureMode mode;
	bool relaxed = capture_relaxed_begin(&mode);
	void *p;
	if (err == cudaErrorMemoryAllocation)
		(void)rt->Malloc(&p, (size_t)1 << 50);
	else
		(void)rt->Malloc(NULL, 1);
	capture_relaxed_end(relaxed, mode);
	return true;
}

cudaError_t cudart_quiet(bool clean, cudaError_t err)
{
	if (err == cudaSuccess)
		return err;
	if (clean)
		cudart_get()->GetLastError();
	else if (cudart_get()->PeekAtLastError() != found)
		cudart_leave(found);
	return err;
}
