// reset_probe: a program that resets the device (cudaDeviceReset) and
// goes on, as test programs and CUDA's samples do. The reset destroys
// every allocation of the primary context, the tools' arena segments
// among them: under umrec or umreplay the program must run as it does
// plainly, its memory after the reset the runtime's.
//
// Usage: reset_probe [middle | first | own-context]
//   Two phases, each over BUFFERS buffers of 64 MiB on a non-blocking
//   stream: ROUNDS rounds that change every word of each buffer, then
//   each buffer's sum, which the probe also works out on the host.
//   middle (the default): phase 1 leaves its buffers allocated and resets
//   the device; a free of one of them after the reset gets the runtime's
//   answer, printed. Phase 2 frees its buffers, and the device is reset
//   once more before the exit.
//   first: the same, with a reset before anything else too, as programs
//   make for a clean start (the tools' arena then has nothing to lose).
//   own-context: after phase 1 a context of the probe's own is made
//   current and the device reset with it current, which resets only the
//   runtime's state for that context (cuda_runtime_api.h): phase 1's
//   buffers live on, get one round more (launches the tools must still
//   see), their sums are taken again, and they are freed before the
//   reset of the middle case.
// Prints each sum, that answer, and "reset: ok" or "reset: FAILED ...";
// exits 0, 1 when a sum is wrong, 2 when a CUDA call failed.
#include <cstdio>
#include <cstring>

#include <cuda.h>
#include <cuda_runtime.h>

#include "probe_buffers.h"

#define DRV(call)                                                            \
	do {                                                                 \
		CUresult r_ = (call);                                        \
		if (r_ != CUDA_SUCCESS) {                                    \
			printf("%s failed: CUDA error %d\n", #call, (int)r_); \
			exit(2);                                             \
		}                                                            \
	} while (0)

static const int BUFFERS = 4, ROUNDS = 20;

// What round r of phase bumps buffer b by.
static unsigned bump_by(int phase, int r, int b)
{
	return (unsigned)(phase * 1000 + r * BUFFERS + b);
}

// The sum buffer b should have after rounds rounds of phase: its words
// start at 0 and each round bumps them all alike (bump: p * 3 + by).
static unsigned long long expected_sum(int phase, int b, int rounds)
{
	unsigned v = 0;
	for (int r = 0; r < rounds; r++)
		v = v * 3 + bump_by(phase, r, b);
	return (unsigned long long)v * PROBE_BUFFER_WORDS;
}

// Runs phase's rounds over fresh buffers (left in buf); returns how many
// sums were wrong.
static int run_phase(int phase, unsigned *buf[BUFFERS])
{
	cudaStream_t s;
	int wrong = 0;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int b = 0; b < BUFFERS; b++) {
		CHECK(cudaMalloc(&buf[b], PROBE_BUFFER_BYTES));
		CHECK(cudaMemsetAsync(buf[b], 0, PROBE_BUFFER_BYTES, s));
	}
	for (int r = 0; r < ROUNDS; r++)
		for (int b = 0; b < BUFFERS; b++)
			bump_on(s, buf[b], bump_by(phase, r, b));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGetLastError());
	for (int b = 0; b < BUFFERS; b++) {
		unsigned long long sum = buffer_sum(buf[b]);
		printf("phase %d buffer %d sum %llu\n", phase, b, sum);
		wrong += sum != expected_sum(phase, b, ROUNDS);
	}
	CHECK(cudaStreamDestroy(s));
	return wrong;
}

// One round more over phase 1's buffers, and their sums; returns how
// many were wrong.
static int one_round_more(unsigned *buf[BUFFERS])
{
	int wrong = 0;
	for (int b = 0; b < BUFFERS; b++)
		bump_on(0, buf[b], bump_by(1, ROUNDS, b));
	for (int b = 0; b < BUFFERS; b++) {
		unsigned long long sum = buffer_sum(buf[b]);
		printf("phase 1 buffer %d sum after one round more %llu\n", b, sum);
		wrong += sum != expected_sum(1, b, ROUNDS + 1);
	}
	return wrong;
}

// A reset with a context of the probe's own current, which is then
// destroyed (the primary context is current again).
static void reset_own_context(void)
{
	CUdevice dev;
	CUcontext own;
	DRV(cuCtxGetDevice(&dev));
	DRV(cuCtxCreate(&own, NULL, 0, dev));
	CHECK(cudaDeviceReset());
	DRV(cuCtxDestroy(own));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "middle";
	bool first = strcmp(mode, "first") == 0, own = strcmp(mode, "own-context") == 0;
	if (!first && !own && strcmp(mode, "middle") != 0) {
		fprintf(stderr, "usage: reset_probe [middle | first | own-context]\n");
		return 2;
	}
	unsigned *phase1[BUFFERS], *phase2[BUFFERS];
	if (first)
		CHECK(cudaDeviceReset());
	int wrong = run_phase(1, phase1);
	if (own) {
		reset_own_context();
		wrong += one_round_more(phase1);
		for (int b = 0; b < BUFFERS; b++)
			CHECK(cudaFree(phase1[b]));
	}
	CHECK(cudaDeviceReset());
	if (!own) {
		printf("free after the reset: %s\n", cudaGetErrorName(cudaFree(phase1[0])));
		cudaGetLastError();
	}
	wrong += run_phase(2, phase2);
	for (int b = 0; b < BUFFERS; b++)
		CHECK(cudaFree(phase2[b]));
	CHECK(cudaDeviceReset());
	if (wrong)
		printf("reset: FAILED %d sums wrong\n", wrong);
	else
		printf("reset: ok\n");
	return wrong ? 1 : 0;
}
