// Session 46: what cuCtxSynchronize does while a graph capture is under
// way, the synchronize a deferred fence of the arena makes
// (common/fence_ring.h). Each case in its own process:
//   sync_in_capture CASE
//   other-global    thread A captures on a non-blocking stream in global
//                   mode; thread B, in its default (global) mode,
//                   synchronizes in the middle
//   other-relaxed   the same, A capturing in relaxed mode
//   other-b-relaxed A in global mode; B switches itself to relaxed mode
//                   (cuThreadExchangeStreamCaptureMode) first
//   self-relaxed    A synchronizes in the middle of its own relaxed capture
//   self-global     the same in global mode
// and, instead of the synchronize, the call the shim makes to bind the
// context (common/cuda/um_alloc.c, bind_context):
//   free0-other-global  B, a thread with no context, calls cudaFree(NULL)
//                       while A captures in global mode
//   free0-self-global   A calls cudaFree(NULL) in its own global capture
// Prints the call's result and the capture's end.
// Build: nvcc -O2 -o sync_in_capture sync_in_capture.cu -lcuda
#include <cstdio>
#include <cstring>
#include <pthread.h>

#include <cuda.h>
#include <cuda_runtime.h>

__global__ void spin(unsigned *p)
{
	p[threadIdx.x] += 1;
}

static const char *name(CUresult r)
{
	const char *n = NULL;
	cuGetErrorName(r, &n);
	return n ? n : "?";
}

static const char *result;
static bool b_relaxed, free0;
static CUcontext ctx;

// The call the case makes in the middle of the capture.
static void call(void)
{
	result = free0 ? cudaGetErrorName(cudaFree(NULL)) : name(cuCtxSynchronize());
}

static void *other_thread(void *)
{
	if (!free0)
		cuCtxSetCurrent(ctx); // B has the context; free0: it has none
	if (b_relaxed) {
		CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
		cuThreadExchangeStreamCaptureMode(&m);
	}
	call();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *c = argc == 2 ? argv[1] : "";
	static const char *cases[] = { "other-global", "other-relaxed", "other-b-relaxed", "self-relaxed",
				       "self-global", "free0-other-global", "free0-self-global" };
	bool known = false;
	for (const char *k : cases)
		known |= !strcmp(c, k);
	if (!known) {
		fprintf(stderr, "usage: sync_in_capture other-global | other-relaxed | other-b-relaxed | "
				"self-relaxed | self-global | free0-other-global | free0-self-global\n");
		return 64;
	}
	bool global = strstr(c, "global") || !strcmp(c, "other-b-relaxed");
	bool self = strstr(c, "self");
	b_relaxed = !strcmp(c, "other-b-relaxed");
	free0 = !strncmp(c, "free0", 5);
	unsigned *p;
	cudaStream_t s;
	cudaMalloc(&p, 4096);
	cuCtxGetCurrent(&ctx);
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaError_t begun = cudaStreamBeginCapture(s, global ? cudaStreamCaptureModeGlobal : cudaStreamCaptureModeRelaxed);
	spin<<<1, 32, 0, s>>>(p);
	if (self) {
		call();
	} else {
		pthread_t t;
		pthread_create(&t, NULL, other_thread, NULL);
		pthread_join(t, NULL);
	}
	spin<<<1, 32, 0, s>>>(p);
	cudaGraph_t g = NULL;
	cudaError_t ended = cudaStreamEndCapture(s, &g);
	cudaGraphExec_t e;
	cudaError_t launched = ended == cudaSuccess ? cudaGraphInstantiate(&e, g, 0) : ended;
	if (launched == cudaSuccess)
		launched = cudaGraphLaunch(e, s);
	cudaError_t done = cudaStreamSynchronize(s);
	printf("%s: begin %s, %s %s, end capture %s, launch %s, stream sync %s\n", c, cudaGetErrorName(begun),
	       free0 ? "cudaFree(NULL)" : "cuCtxSynchronize", result, cudaGetErrorName(ended),
	       cudaGetErrorName(launched), cudaGetErrorName(done));
	return 0;
}
