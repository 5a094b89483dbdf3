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
// Prints the synchronize's result and the capture's end.
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

static CUresult synced;
static bool b_relaxed;

static void *synchronize(void *)
{
	cudaFree(NULL); // the runtime binds the primary context to this thread
	if (b_relaxed) {
		CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
		cuThreadExchangeStreamCaptureMode(&m);
	}
	synced = cuCtxSynchronize();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *c = argc == 2 ? argv[1] : "";
	bool global = !strcmp(c, "other-global") || !strcmp(c, "other-b-relaxed");
	bool self = !strcmp(c, "self-relaxed");
	b_relaxed = !strcmp(c, "other-b-relaxed");
	if (!global && !self && strcmp(c, "other-relaxed")) {
		fprintf(stderr, "usage: sync_in_capture other-global | other-relaxed | other-b-relaxed | self-relaxed\n");
		return 64;
	}
	unsigned *p;
	cudaStream_t s;
	cudaMalloc(&p, 4096);
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaError_t begun = cudaStreamBeginCapture(s, global ? cudaStreamCaptureModeGlobal : cudaStreamCaptureModeRelaxed);
	spin<<<1, 32, 0, s>>>(p);
	if (self) {
		synced = cuCtxSynchronize();
	} else {
		pthread_t t;
		pthread_create(&t, NULL, synchronize, NULL);
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
	printf("%s: begin %s, cuCtxSynchronize %s, end capture %s, launch %s, stream sync %s\n", c,
	       cudaGetErrorName(begun), name(synced), cudaGetErrorName(ended), cudaGetErrorName(launched),
	       cudaGetErrorName(done));
	return 0;
}
