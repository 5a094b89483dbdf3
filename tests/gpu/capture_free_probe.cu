// capture_free_probe: frees and stream-ordered allocations in the middle
// of a CUDA graph capture, which the tools serve from their arena. Plain
// CUDA is the reference: under umrec or umreplay the probe must end the
// same way, with the same sums.
//
// Usage: capture_free_probe free | free-other | async | free-async |
//                           free-realloc | realloc-busy
//   Thread A captures STEPS steps over BUFFERS buffers on stream s, in
//   relaxed mode, launches the graph LAUNCHES times and synchronizes.
//   free:       in the middle of the capture, A frees with cudaFree a
//               buffer that s worked on just before the capture began;
//   free-other: thread B (global mode) makes that free instead;
//   async:      the graph allocates a scratch buffer on s with
//               cudaMallocAsync, fills it, adds it into every buffer and
//               frees it with cudaFreeAsync (graph memory nodes, in plain
//               CUDA); after the capture a buffer of the same size is
//               allocated and filled, and the graph's launches must leave
//               it alone;
//   free-async: in the middle of the capture, A frees on s with
//               cudaFreeAsync the buffer s worked on before it (launched
//               once), and prints what cudaGetLastError says then;
//   free-realloc: as free, then A allocates a buffer of the same size
//               with cudaMalloc, switching itself to relaxed mode for the
//               call as PyTorch's allocator does inside a capture, and
//               the graph fills it and works on it too (the tools'
//               arena would hand out the freed range, whose work may
//               still run: a synchronize to wait for it broke the
//               capture). The freed buffer's work and the new one's all
//               run on s, in order, so this shows that the capture lives
//               on, not that the range waited (realloc-busy does);
//   realloc-busy: as free-realloc, but the freed buffer's last reader
//               still waits to run on another stream when it is freed (a
//               copy into a witness buffer, behind a 200 ms host
//               function), and A fills the new buffer at once on a third
//               stream: the witness must hold the freed buffer's bytes,
//               or "capture: FAILED" says it does not. The tools' arena
//               must wait for that reader before it hands the range out
//               again, or hand out other memory.
//   PROBE_STREAM names the kind of stream s is: non-blocking (the default,
//   also when unset), blocking, or per-thread (the thread's per-thread
//   default stream, cudaStreamPerThread).
// After the launches a buffer of the same size is allocated and filled
// (the "spare"). Prints every buffer's sum, the spare's, and "capture: ok"
// or "capture: FAILED <error> at <call>"; exits 0, or 1 when it failed.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

#include <cuda_runtime.h>

#include "probe_buffers.h"

static const int BUFFERS = 4;

static unsigned *buf[BUFFERS], *doomed, *again, *witness;
static enum { FREE, FREE_OTHER, ASYNC, FREE_ASYNC, FREE_REALLOC, REALLOC_BUSY } mode;
// realloc-busy's streams: the freed buffer's last reader, and the new
// buffer's filler (both non-blocking, neither capturing); and the event
// after the reader's copy.
static cudaStream_t reader, filler;
static cudaEvent_t read_done;

__global__ void add(unsigned *to, const unsigned *from, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		to[i] += from[i];
}

static void step(cudaStream_t s, int k)
{
	for (int b = 0; b < BUFFERS; b++)
		bump_on(s, buf[b], (unsigned)(k * BUFFERS + b));
}

// realloc-busy, before the capture: the witness gets a copy of doomed
// once s's work on it is done and 200 ms have passed, on the reader.
static void read_doomed_late(cudaStream_t s)
{
	cudaEvent_t bumped;
	CHECK(cudaMalloc(&witness, PROBE_BUFFER_BYTES));
	CHECK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&filler, cudaStreamNonBlocking));
	CHECK(cudaEventCreateWithFlags(&bumped, cudaEventDisableTiming));
	CHECK(cudaEventCreateWithFlags(&read_done, cudaEventDisableTiming));
	CHECK(cudaMemsetAsync(witness, 0, PROBE_BUFFER_BYTES, reader));
	CHECK(cudaEventRecord(bumped, s));
	CHECK(cudaStreamWaitEvent(reader, bumped, 0));
	CHECK(cudaLaunchHostFunc(reader, sleep_200ms, NULL));
	add<<<256, 256, 0, reader>>>(witness, doomed, PROBE_BUFFER_WORDS);
	CHECK(cudaEventRecord(read_done, reader));
}

// Whether the witness holds doomed's bytes: memset to 9 in every byte,
// then bumped once by 1.
static bool witness_intact()
{
	const unsigned word = 0x09090909u * 3u + 1u;
	return buffer_sum(witness) == (unsigned long long)word * PROBE_BUFFER_WORDS;
}

static void *free_doomed(void *)
{
	CHECK(cudaFree(doomed));
	return NULL;
}

// The first call that fails, as "<error> at <call>".
static char failure[160];
// free-async: what cudaGetLastError said just after the free.
static cudaError_t free_last_error;

static bool ok(cudaError_t e, const char *call)
{
	if (e != cudaSuccess && !failure[0])
		snprintf(failure, sizeof failure, "%s at %s", cudaGetErrorName(e), call);
	return e == cudaSuccess;
}

// The middle of the capture: what the mode frees or allocates.
static bool mid_capture(cudaStream_t s)
{
	switch (mode) {
	case FREE:
		return ok(cudaFree(doomed), "cudaFree");
	case FREE_OTHER: {
		pthread_t other;
		pthread_create(&other, NULL, free_doomed, NULL);
		pthread_join(other, NULL);
		return true;
	}
	case FREE_ASYNC: {
		bool freed = ok(cudaFreeAsync(doomed, s), "cudaFreeAsync");
		// A program may check the last error rather than the answer.
		free_last_error = cudaGetLastError();
		return freed;
	}
	case REALLOC_BUSY:
		// Read already, the case could not tell a range that waited from
		// one that did not.
		if (cudaEventQuery(read_done) != cudaErrorNotReady) {
			snprintf(failure, sizeof failure, "inconclusive: the reader ran before the free");
			return false;
		}
		[[fallthrough]];
	case FREE_REALLOC: {
		if (!ok(cudaFree(doomed), "cudaFree"))
			return false;
		cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
		cudaThreadExchangeStreamCaptureMode(&m);
		bool got = ok(cudaMalloc(&again, PROBE_BUFFER_BYTES), "cudaMalloc");
		cudaThreadExchangeStreamCaptureMode(&m);
		if (got && mode == REALLOC_BUSY)
			return ok(cudaMemsetAsync(again, 7, PROBE_BUFFER_BYTES, filler), "cudaMemsetAsync");
		if (!got || !ok(cudaMemsetAsync(again, 7, PROBE_BUFFER_BYTES, s), "cudaMemsetAsync"))
			return false;
		bump_on(s, again, 5);
		return true;
	}
	case ASYNC: {
		unsigned *scratch;
		if (!ok(cudaMallocAsync((void **)&scratch, PROBE_BUFFER_BYTES, s), "cudaMallocAsync") ||
		    !ok(cudaMemsetAsync(scratch, 1, PROBE_BUFFER_BYTES, s), "cudaMemsetAsync"))
			return false;
		for (int b = 0; b < BUFFERS; b++)
			add<<<256, 256, 0, s>>>(buf[b], scratch, PROBE_BUFFER_WORDS);
		return ok(cudaFreeAsync(scratch, s), "cudaFreeAsync");
	}
	}
	return false;
}

int main(int argc, char **argv)
{
	const char *m = argc == 2 ? argv[1] : "";
	mode = !strcmp(m, "free") ? FREE : !strcmp(m, "free-other") ? FREE_OTHER :
	       !strcmp(m, "async") ? ASYNC : !strcmp(m, "free-realloc") ? FREE_REALLOC :
	       !strcmp(m, "realloc-busy") ? REALLOC_BUSY : FREE_ASYNC;
	if (mode == FREE_ASYNC && strcmp(m, "free-async")) {
		fprintf(stderr, "usage: capture_free_probe free | free-other | async | free-async | free-realloc | "
				"realloc-busy\n");
		return 64;
	}
	for (int b = 0; b < BUFFERS; b++) {
		CHECK(cudaMalloc(&buf[b], PROBE_BUFFER_BYTES));
		CHECK(cudaMemset(buf[b], b, PROBE_BUFFER_BYTES));
	}
	CHECK(cudaMalloc(&doomed, PROBE_BUFFER_BYTES));
	CHECK(cudaMemset(doomed, 9, PROBE_BUFFER_BYTES));
	CHECK(cudaDeviceSynchronize());

	cudaStream_t s = cudaStreamPerThread;
	const char *kind = getenv("PROBE_STREAM");
	if (!kind || !strcmp(kind, "non-blocking"))
		CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	else if (!strcmp(kind, "blocking"))
		CHECK(cudaStreamCreate(&s));
	else if (strcmp(kind, "per-thread")) {
		fprintf(stderr, "capture_free_probe: PROBE_STREAM is '%s': non-blocking, blocking or per-thread\n", kind);
		return 64;
	}
	// Work on s just before the capture, still running when it begins: what
	// a free in the middle of the capture must not overtake.
	step(s, 0);
	bump_on(s, doomed, 1);
	if (mode == REALLOC_BUSY)
		read_doomed_late(s);
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	int launches = mode == FREE_ASYNC ? 1 : 3;
	if (ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture")) {
		step(s, 1);
		bool mid = mid_capture(s);
		step(s, 2);
		// The capture is ended even after a failure, which may have ended it.
		if (ok(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture") && mid &&
		    ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate"))
			for (int r = 0; r < launches && ok(cudaGraphLaunch(exec, s), "cudaGraphLaunch"); r++)
				;
	}
	ok(cudaStreamSynchronize(s), "cudaStreamSynchronize");
	cudaGetLastError();
	if (mode == REALLOC_BUSY) {
		CHECK(cudaDeviceSynchronize());
		if (!witness_intact() && !failure[0])
			snprintf(failure, sizeof failure, "the freed buffer's last reader saw other bytes");
	}

	unsigned *spare;
	CHECK(cudaMalloc(&spare, PROBE_BUFFER_BYTES));
	CHECK(cudaMemset(spare, 3, PROBE_BUFFER_BYTES));
	if (!failure[0] && mode == ASYNC) {
		// The graph's scratch buffer is its own: launched again, it must not
		// write into memory allocated since.
		ok(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
		ok(cudaStreamSynchronize(s), "cudaStreamSynchronize");
	}
	for (int b = 0; b < BUFFERS; b++)
		printf("buffer %d sum %llu\n", b, buffer_sum(buf[b]));
	printf("spare sum %llu\n", buffer_sum(spare));
	if (again && !failure[0])
		printf("reallocated sum %llu\n", buffer_sum(again));
	if (mode == FREE_ASYNC)
		printf("last error after the free %s\n", cudaGetErrorName(free_last_error));
	printf(failure[0] ? "capture: FAILED %s\n" : "capture: ok\n", failure);
	return failure[0] ? 1 : 0;
}
