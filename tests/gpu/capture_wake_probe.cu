// capture_wake_probe: can an idle replay that wakes on one thread break a
// CUDA graph capture under way on another? An idle umreplay attaches to
// CUPTI when the program's memory outgrows the budget, and waking inside a
// capture broke it on the capturing thread in session 43 (docs/replay.md,
// "CUDA graphs"). So it does not wake at an allocation made outside CUDA's
// global capture mode; but the mode it asks for is the allocating
// thread's, and a capture in relaxed mode lets other threads allocate in
// global mode. The probe found more: the tools broke any capture on a
// stream whose first work they saw inside it (its "capture nothing" case).
//
// Usage: capture_wake_probe eager | capture [malloc | managed | none]
//   eager:   allocate BUFFERS buffers of 64 MiB and run STEPS steps of
//            kernels over them (what the plan is made from);
//   capture: the same, then thread A captures STEPS steps on a stream in
//            relaxed mode; in the middle of its capture thread B (global
//            mode) allocates 512 MiB with cudaMalloc (the default; it takes
//            an idle replay past a budget just above the eager peak) or
//            cudaMallocManaged, and fills it on a stream of its own (none:
//            only the stream, made and synchronized; stream: only made;
//            nothing: no CUDA call); A ends the capture and replays the
//            graph 3 times. PROBE_CAPTURE_MODE=global or thread_local
//            captures in that mode instead of relaxed; PROBE_MANAGED
//            makes the buffers with cudaMallocManaged, PROBE_NO_EAGER
//            leaves out the eager steps, PROBE_USE_STREAM_FIRST runs a step
//            on the capture's stream before the capture.
// Prints the per-buffer sums (the same under any tool) and "capture: ok" or
// "capture: FAILED <error>"; exits 0, or 1 when the capture failed.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

#include <cuda_runtime.h>

#include "probe_buffers.h"

static const int BUFFERS = 8, STEPS = 4;
static const size_t EXTRA = (size_t)512 << 20;

static unsigned *buf[BUFFERS];

static void step(cudaStream_t s, int k)
{
	for (int b = 0; b < BUFFERS; b++)
		bump_on(s, buf[b], (unsigned)(k * BUFFERS + b));
}

// B's side of the handshake: A has begun capturing when `begun` is set; A
// ends its capture once `allocated` is.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static bool begun, allocated;
static enum { B_MALLOC, B_MANAGED, B_NONE, B_STREAM, B_NOTHING } b_alloc = B_MALLOC;

static void wait_for(bool *flag)
{
	pthread_mutex_lock(&lock);
	while (!*flag)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

static void set(bool *flag)
{
	pthread_mutex_lock(&lock);
	*flag = true;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

static void *allocate_meanwhile(void *)
{
	wait_for(&begun);
	if (b_alloc == B_NOTHING) {
		set(&allocated);
		return NULL;
	}
	// On a stream of its own: synchronising the device, or the legacy
	// stream, is not allowed while a stream captures.
	cudaStream_t own;
	CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
	if (b_alloc == B_STREAM) {
		set(&allocated);
		return NULL;
	}
	void *extra;
	if (b_alloc != B_NONE) {
		// Global mode: this thread's default.
		if (b_alloc == B_MALLOC)
			CHECK(cudaMalloc(&extra, EXTRA));
		else
			CHECK(cudaMallocManaged(&extra, EXTRA, cudaMemAttachGlobal));
		CHECK(cudaMemsetAsync(extra, 0x5a, EXTRA, own));
	}
	CHECK(cudaStreamSynchronize(own));
	set(&allocated);
	return NULL;
}

int main(int argc, char **argv)
{
	bool capture = argc >= 2 && strcmp(argv[1], "capture") == 0;
	const char *b_kind = argc == 3 ? argv[2] : "malloc";
	b_alloc = strcmp(b_kind, "managed") == 0 ? B_MANAGED : strcmp(b_kind, "none") == 0 ? B_NONE :
		  strcmp(b_kind, "stream") == 0 ? B_STREAM : strcmp(b_kind, "nothing") == 0 ? B_NOTHING : B_MALLOC;
	if (argc < 2 || argc > 3 || (!capture && (argc != 2 || strcmp(argv[1], "eager") != 0)) ||
	    (b_alloc == B_MALLOC && strcmp(b_kind, "malloc") != 0)) {
		fprintf(stderr, "usage: capture_wake_probe eager | capture [malloc | managed | none | stream | nothing]\n");
		return 64;
	}
	bool managed = getenv("PROBE_MANAGED") != NULL;
	for (int b = 0; b < BUFFERS; b++) {
		if (managed)
			CHECK(cudaMallocManaged(&buf[b], PROBE_BUFFER_BYTES, cudaMemAttachGlobal));
		else
			CHECK(cudaMalloc(&buf[b], PROBE_BUFFER_BYTES));
		CHECK(cudaMemset(buf[b], b, PROBE_BUFFER_BYTES));
	}
	for (int k = 0; k < STEPS && !getenv("PROBE_NO_EAGER"); k++)
		step(0, k);
	CHECK(cudaDeviceSynchronize());

	const char *failed = NULL;
	if (capture) {
		cudaStream_t s;
		CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		if (getenv("PROBE_USE_STREAM_FIRST")) {
			step(s, 0);
			CHECK(cudaStreamSynchronize(s));
		}
		pthread_t other;
		pthread_create(&other, NULL, allocate_meanwhile, NULL);
		cudaGraph_t graph = NULL;
		const char *m = getenv("PROBE_CAPTURE_MODE");
		cudaStreamCaptureMode mode = m && !strcmp(m, "global") ? cudaStreamCaptureModeGlobal :
					     m && !strcmp(m, "thread_local") ? cudaStreamCaptureModeThreadLocal :
					     cudaStreamCaptureModeRelaxed;
		const char *stage = "cudaStreamBeginCapture";
		cudaError_t e = cudaStreamBeginCapture(s, mode);
		if (e == cudaSuccess) {
			step(s, STEPS);
			set(&begun);
			wait_for(&allocated);
			step(s, STEPS + 1);
			stage = "cudaStreamEndCapture";
			e = cudaStreamEndCapture(s, &graph);
		} else {
			set(&begun);
		}
		pthread_join(other, NULL);
		cudaGraphExec_t exec;
		if (e == cudaSuccess) {
			stage = "cudaGraphInstantiate";
			e = cudaGraphInstantiate(&exec, graph, 0);
		}
		for (int r = 0; r < 3 && e == cudaSuccess; r++) {
			stage = "cudaGraphLaunch";
			e = cudaGraphLaunch(exec, s);
		}
		if (e == cudaSuccess) {
			stage = "cudaStreamSynchronize";
			e = cudaStreamSynchronize(s);
		}
		if (e != cudaSuccess) {
			static char what[160];
			snprintf(what, sizeof what, "%s at %s", cudaGetErrorName(e), stage);
			failed = what;
		}
	}
	for (int b = 0; b < BUFFERS; b++)
		printf("buffer %d sum %llu\n", b, buffer_sum(buf[b]));
	if (capture)
		printf(failed ? "capture: FAILED %s\n" : "capture: ok\n", failed);
	return failed ? 1 : 0;
}
