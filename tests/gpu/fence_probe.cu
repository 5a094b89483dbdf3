// fence_probe: does memory freed while GPU work still reads it stay intact
// until that work is done? Under umrec and umreplay a free hands the range
// back to the arena at once, which reuses it only behind a fence that must
// cover every stream the freed memory may still be used on
// (common/cuda/um_backend.c). Each case queues work that reads a 64 MiB
// buffer A behind a 200 ms host function on a non-blocking stream, frees A,
// allocates B (the arena hands out A's range again) and fills B with 0x22
// on the default stream; the reader must still see A's 0x11.
//
// Usage: fence_probe CASE, CASE one of copy-only, many-streams,
// reused-handle, two-threads, double-free, stream-churn, relaxed-churn,
// value-write, ptsz-async, managed-host-write, sync-memset, kernel-writer.
// Prints "CASE: ok" or "CASE: BAD ..." and exits 0 or 1. Plain CUDA gets
// every case right.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include "probe_check.h"

typedef unsigned char u8;
static const size_t N = 64 << 20;

__global__ void nothing() {}

__global__ void copy(const u8 *from, u8 *to, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		to[i] = from[i];
}

static size_t count(const u8 *h, size_t n, u8 v)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += h[i] == v;
	return c;
}

// A filled with 0x11, and stream s held up for 200 ms.
static u8 *pending_buffer(cudaStream_t s)
{
	u8 *a;
	CHECK(cudaMalloc(&a, N));
	CHECK(cudaMemset(a, 0x11, N));
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaLaunchHostFunc(s, sleep_200ms, NULL));
	return a;
}

// Frees a, lets the next allocation overwrite its range on the default
// stream, waits for everything and reports whether `read` (n bytes, on the
// host or the GPU) still holds a's 0x11.
static int finish(const char *name, u8 *a, const u8 *read, size_t n)
{
	u8 *b, *h;
	CHECK(cudaFree(a));
	CHECK(cudaMalloc(&b, N));
	CHECK(cudaMemsetAsync(b, 0x22, N, 0));
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMallocHost(&h, n));
	CHECK(cudaMemcpy(h, read, n, cudaMemcpyDefault));
	size_t good = count(h, n, 0x11);
	printf("%s: %s (a %p, b %p: %zu of %zu bytes read 0x11)\n", name, good == n ? "ok" : "BAD", (void *)a,
	       (void *)b, good, n);
	return good == n ? 0 : 1;
}

// The stream gets only a copy: no kernel ever names it.
static int copy_only()
{
	cudaStream_t s;
	u8 *h;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMallocHost(&h, N));
	u8 *a = pending_buffer(s);
	CHECK(cudaMemcpyAsync(h, a, N, cudaMemcpyDefault, s));
	return finish("copy-only", a, h, N);
}

// The reading kernel on stream s, after whatever made s.
static int kernel_reader(const char *name, cudaStream_t s)
{
	u8 *to;
	CHECK(cudaMalloc(&to, N));
	u8 *a = pending_buffer(s);
	copy<<<264, 256, 0, s>>>(a, to, N);
	return finish(name, a, to, N);
}

// More streams with work than the fences track one by one.
static int many_streams()
{
	cudaStream_t s = NULL;
	for (int i = 0; i < 70; i++) {
		CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		nothing<<<1, 1, 0, s>>>();
	}
	return kernel_reader("many-streams", s);
}

// A blocking stream with work, destroyed; then a non-blocking one, which
// may get the same handle.
static int reused_handle()
{
	cudaStream_t t, s;
	CHECK(cudaStreamCreate(&t));
	nothing<<<1, 1, 0, t>>>();
	CHECK(cudaStreamDestroy(t));
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	printf("reused-handle: destroyed %p, created %p\n", (void *)t, (void *)s);
	return kernel_reader("reused-handle", s);
}

// A second thread allocates and frees all along, so its fences fall
// between a launch's entry and its exit. It pauses 5 us between rounds: a
// thread that takes the driver's lock again at once starves the main
// thread under plain CUDA, where every free waits for the GPU (0.36 s a
// round on an H100), yet with the pause the build before the exit marks
// still failed 20 and 35 rounds of 200.
static volatile int churning = 1;

static double seconds()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *churn(void *)
{
	while (churning) {
		void *p;
		if (cudaMalloc(&p, 4096) == cudaSuccess)
			cudaFree(p);
		for (double t = seconds(); seconds() - t < 5e-6;)
			;
	}
	return NULL;
}

__global__ void slow_copy(const u8 *from, u8 *to, size_t n, long long cycles)
{
	long long t = clock64();
	while (clock64() - t < cycles)
		;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		to[i] = from[i];
}

static int two_threads()
{
	const size_t m = 4 << 20;
	const int rounds = 200;
	cudaStream_t s;
	u8 *to, *h;
	pthread_t t;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&to, m));
	CHECK(cudaMallocHost(&h, m));
	pthread_create(&t, NULL, churn, NULL);
	int bad = 0, reused = 0;
	for (int i = 0; i < rounds; i++) {
		u8 *x, *y;
		CHECK(cudaMalloc(&x, m));
		CHECK(cudaMemsetAsync(x, 0x11, m, s));
		slow_copy<<<132, 256, 0, s>>>(x, to, m, 2000000);
		CHECK(cudaFree(x));
		CHECK(cudaMalloc(&y, m));
		reused += y == x;
		CHECK(cudaMemsetAsync(y, 0x22, m, 0));
		CHECK(cudaDeviceSynchronize());
		CHECK(cudaMemcpy(h, to, m, cudaMemcpyDefault));
		bad += count(h, m, 0x11) != m;
		CHECK(cudaFree(y));
	}
	churning = 0;
	pthread_join(t, NULL);
	printf("two-threads: %s (%d of %d rounds read the next owner's bytes, %d reused the freed range)\n",
	       bad ? "BAD" : "ok", bad, rounds, reused);
	return bad != 0;
}

// Threads that create, use and destroy streams while others allocate,
// launch and free: the fences and the stream registry must not deadlock
// with the driver's stream destruction. Runs 3 s; the caller's timeout
// catches a hang.
static volatile int churn_streams = 1;

static void *stream_user(void *destroying)
{
	cudaStream_t s = NULL;
	if (!destroying)
		CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	while (churn_streams) {
		if (destroying)
			CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		void *p;
		CHECK(cudaMalloc(&p, 1 << 20));
		nothing<<<1, 1, 0, s>>>();
		CHECK(cudaFree(p));
		if (destroying)
			CHECK(cudaStreamDestroy(s));
	}
	return NULL;
}

static int stream_churn()
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, stream_user, i < 2 ? (void *)1 : NULL);
	sleep(3);
	churn_streams = 0;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(cudaDeviceSynchronize());
	printf("stream-churn: ok (3 s of streams made and destroyed beside frees)\n");
	return 0;
}

// A thread that leaves the global capture mode for good and never
// captures, as a program may: its mode is also the one sign of a capture
// that an idle replay has, where a synchronize would break the capture,
// so its frees' fences wait for a synchronize the tools will not make
// from it. Each round allocates 64 MiB, fills them on the default stream,
// has a slow kernel on a non-blocking stream copy their first 4 KiB out,
// and frees them: 10 GiB in all, more than the GPU checks' 8G cap, so the
// arena must reuse freed memory, and only once each copy is done.
static int relaxed_churn()
{
	const int rounds = 160;
	const size_t slice = 4096;
	cudaStreamCaptureMode relaxed = cudaStreamCaptureModeRelaxed;
	CHECK(cudaThreadExchangeStreamCaptureMode(&relaxed));
	cudaStream_t s;
	cudaEvent_t filled;
	u8 *to, *h;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
	CHECK(cudaMalloc(&to, rounds * slice));
	CHECK(cudaMallocHost(&h, rounds * slice));
	for (int i = 0; i < rounds; i++) {
		u8 *x;
		cudaError_t e = cudaMalloc(&x, N);
		if (e != cudaSuccess) {
			printf("relaxed-churn: BAD (round %d of %d: cudaMalloc %s)\n", i + 1, rounds, cudaGetErrorName(e));
			return 1;
		}
		CHECK(cudaMemsetAsync(x, i + 1, N, cudaStreamLegacy));
		CHECK(cudaEventRecord(filled, cudaStreamLegacy));
		CHECK(cudaStreamWaitEvent(s, filled, 0));
		slow_copy<<<1, 256, 0, s>>>(x, to + i * slice, slice, 2000000);
		CHECK(cudaFree(x));
	}
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMemcpy(h, to, rounds * slice, cudaMemcpyDefault));
	int bad = 0;
	for (int i = 0; i < rounds; i++)
		bad += count(h + i * slice, slice, (u8)(i + 1)) != slice;
	printf("relaxed-churn: %s (%d rounds of 64 MiB in relaxed capture mode, %d read the next owner's bytes)\n",
	       bad ? "BAD" : "ok", rounds, bad);
	return bad != 0;
}

// Stream memory operations (which the driver refuses on managed memory,
// so this case runs on plain device memory: umrec --no-managed). Stream s
// gets only those: a wait on a host word that a second thread sets after
// 300 ms, then a write of A's first word. A is freed and B allocated: B
// must not get A's range before the write landed, or it loses its first
// word.
static volatile unsigned *release_word;

static void *release_later(void *)
{
	usleep(300000);
	*release_word = 1;
	return NULL;
}

static int value_write()
{
	typedef CUresult (*value_op)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
	void *wait_fn, *write_fn, *word_dev, *tmp;
	cudaDriverEntryPointQueryResult found;
	CHECK(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &wait_fn, 12000, cudaEnableDefault, &found));
	CHECK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &write_fn, 12000, cudaEnableDefault, &found));
	cudaStream_t s;
	u8 *a, *b, h[4];
	pthread_t t;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaHostAlloc((void **)&release_word, sizeof *release_word, cudaHostAllocMapped));
	*release_word = 0;
	CHECK(cudaHostGetDevicePointer(&word_dev, (void *)release_word, 0));
	CHECK(cudaMalloc(&a, N));
	CHECK(cudaMemset(a, 0x11, N));
	/* Work on s, then a fence that covers it: s's mark is spent. */
	nothing<<<1, 1, 0, s>>>();
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMalloc(&tmp, 4096));
	CHECK(cudaFree(tmp));
	CUresult r = ((value_op)wait_fn)(s, (CUdeviceptr)word_dev, 1, CU_STREAM_WAIT_VALUE_GEQ);
	if (r == CUDA_SUCCESS)
		r = ((value_op)write_fn)(s, (CUdeviceptr)a, 0x33333333u, 0);
	if (r != CUDA_SUCCESS) {
		printf("value-write: a stream memory operation failed: CUresult %d\n", (int)r);
		return 2;
	}
	pthread_create(&t, NULL, release_later, NULL);
	CHECK(cudaFree(a));
	CHECK(cudaMalloc(&b, N));
	CHECK(cudaMemsetAsync(b, 0x22, N, cudaStreamLegacy));
	CHECK(cudaStreamSynchronize(cudaStreamLegacy));
	pthread_join(t, NULL);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMemcpy(h, b, sizeof h, cudaMemcpyDefault));
	bool ok = count(h, sizeof h, 0x22) == sizeof h;
	printf("value-write: %s (a %p, b %p: b's first word %02x%02x%02x%02x)\n", ok ? "ok" : "BAD", (void *)a,
	       (void *)b, h[3], h[2], h[1], h[0]);
	return !ok;
}

__global__ void fill(u8 *to, size_t n, u8 v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		to[i] = v;
}

// B is written by a synchronous cudaMemset, or by a kernel on a second
// non-blocking stream, while a kernel on stream s still reads A, held
// behind the host function. Since session 89 the tools hand B out before
// that reader is done and queue B's writer behind it on the GPU
// (common/cuda/fence_order.h): "early" says whether B came back while s
// was still busy (plain CUDA's free waits for the GPU: never).
static int other_writer(const char *name, bool sync_memset)
{
	cudaStream_t s, t;
	u8 *to, *b, *h;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&to, N));
	u8 *a = pending_buffer(s);
	copy<<<264, 256, 0, s>>>(a, to, N);
	CHECK(cudaFree(a));
	CHECK(cudaMalloc(&b, N));
	bool early = cudaStreamQuery(s) == cudaErrorNotReady;
	if (sync_memset)
		CHECK(cudaMemset(b, 0x22, N));
	else
		fill<<<264, 256, 0, t>>>(b, N, 0x22);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMallocHost(&h, N));
	CHECK(cudaMemcpy(h, to, N, cudaMemcpyDefault));
	size_t good = count(h, N, 0x11);
	CHECK(cudaMemcpy(h, b, N, cudaMemcpyDefault));
	size_t written = count(h, N, 0x22);
	bool ok = good == N && written == N;
	printf("%s: %s (a %p, b %p: %zu of %zu bytes read 0x11, b written %s; early %s)\n", name, ok ? "ok" : "BAD",
	       (void *)a, (void *)b, good, N, written == N ? "whole" : "in part", early ? "yes" : "no");
	return ok ? 0 : 1;
}

static int sync_memset()
{
	return other_writer("sync-memset", true);
}

static int kernel_writer()
{
	return other_writer("kernel-writer", false);
}

// Freeing twice is an error, and leaves other allocations alone.
static int double_free()
{
	void *a, *b;
	CHECK(cudaMalloc(&a, 4 << 20));
	CHECK(cudaMalloc(&b, 4 << 20));
	CHECK(cudaFree(a));
	cudaError_t again = cudaFree(a);
	cudaGetLastError();
	cudaError_t use = cudaMemset(b, 1, 4 << 20);
	cudaError_t sync = cudaDeviceSynchronize();
	bool ok = again != cudaSuccess && use == cudaSuccess && sync == cudaSuccess;
	printf("double-free: %s (second free %s, then memset of another allocation %s, sync %s)\n",
	       ok ? "ok" : "BAD", cudaGetErrorName(again), cudaGetErrorName(use), cudaGetErrorName(sync));
	return !ok;
}

// A program built with --default-stream per-thread calls the _ptsz
// names of the stream-ordered calls, stream 0 its thread's own stream:
// under umkit they are served from managed memory like the others, and a
// free there leaves its neighbour alone.
extern "C" cudaError_t cudaMallocAsync_ptsz(void **, size_t, cudaStream_t);
extern "C" cudaError_t cudaFreeAsync_ptsz(void *, cudaStream_t);
static int ptsz_async()
{
	void *a, *b;
	CHECK(cudaMallocAsync_ptsz(&a, 4 << 20, 0));
	CHECK(cudaMallocAsync_ptsz(&b, 4 << 20, 0));
	CHECK(cudaMemsetAsync(b, 0x33, 4 << 20, cudaStreamPerThread));
	CHECK(cudaFreeAsync_ptsz(a, 0));
	CHECK(cudaStreamSynchronize(cudaStreamPerThread));
	static u8 h[4 << 20];
	CHECK(cudaMemcpy(h, b, sizeof h, cudaMemcpyDefault));
	cudaPointerAttributes attr;
	CHECK(cudaPointerGetAttributes(&attr, b));
	bool managed = attr.type == cudaMemoryTypeManaged;
	bool under_umkit = getenv("CUDA_INJECTION64_PATH") != NULL;
	bool ok = count(h, sizeof h, 0x33) == sizeof h && managed == under_umkit;
	printf("ptsz-async: %s (b %s memory, neighbour intact: %s)\n", ok ? "ok" : "BAD",
	       managed ? "managed" : "device", count(h, sizeof h, 0x33) == sizeof h ? "yes" : "no");
	CHECK(cudaFreeAsync_ptsz(b, 0));
	CHECK(cudaDeviceSynchronize());
	return !ok;
}

// The program's own managed memory, on the default stream alone: a kernel
// held behind the host function reads A; A is freed, B allocated (A's
// range again under umkit) and written by the host at once, in no
// stream's order. A plain cudaFree waits for the kernel; under umkit the
// free does not, so the allocation must.
static int managed_host_write()
{
	u8 *a, *b, *to, *h;
	CHECK(cudaMalloc(&to, N));
	CHECK(cudaMallocManaged(&a, N));
	memset(a, 0x11, N);
	CHECK(cudaLaunchHostFunc(0, sleep_200ms, NULL));
	copy<<<264, 256>>>(a, to, N);
	CHECK(cudaFree(a));
	CHECK(cudaMallocManaged(&b, N));
	memset(b, 0x22, N);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMallocHost(&h, N));
	CHECK(cudaMemcpy(h, to, N, cudaMemcpyDefault));
	size_t good = count(h, N, 0x11);
	printf("managed-host-write: %s (a %p, b %p: %zu of %zu bytes read 0x11)\n", good == N ? "ok" : "BAD",
	       (void *)a, (void *)b, good, N);
	return good == N ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)();
	} cases[] = {
		{ "copy-only", copy_only },       { "many-streams", many_streams }, { "reused-handle", reused_handle },
		{ "two-threads", two_threads },   { "double-free", double_free },   { "stream-churn", stream_churn },
		{ "relaxed-churn", relaxed_churn }, { "value-write", value_write }, { "ptsz-async", ptsz_async },
		{ "managed-host-write", managed_host_write }, { "sync-memset", sync_memset },
		{ "kernel-writer", kernel_writer },
	};
	for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
		if (strcmp(argv[1], cases[i].name) == 0)
			return cases[i].run();
	fprintf(stderr, "usage: fence_probe copy-only|many-streams|reused-handle|two-threads|double-free|stream-churn|"
			"relaxed-churn|value-write|ptsz-async|managed-host-write|sync-memset|kernel-writer\n");
	return 2;
}
