// reset_probe: a program that resets the device (cudaDeviceReset) and
// goes on, as test programs and CUDA's samples do. The reset destroys
// every allocation, the tools' arena segments among them: under umrec or
// umreplay the program must run as it does plainly, its memory after the
// reset the runtime's.
//
// Usage: reset_probe [first]
//   first: the device is reset before anything else too, as programs do
//   for a clean start (the tools' arena then has nothing to lose).
//   Two phases, each over BUFFERS buffers of 64 MiB on a non-blocking
//   stream: ROUNDS rounds that change every word of each buffer, then
//   each buffer's sum, which the probe also works out on the host. Phase 1
//   leaves its buffers allocated and resets the device; a free of one of
//   them after the reset gets the runtime's answer, printed. Phase 2 frees
//   its buffers, and the device is reset once more before the exit.
// Prints each sum, that answer, and "reset: ok" or "reset: FAILED ...";
// exits 0, 1 when a sum is wrong, 2 when a CUDA call failed.
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "probe_buffers.h"

static const int BUFFERS = 4, ROUNDS = 20;

// The sum every buffer should have: its words start at 0 and each round
// bumps them all alike (bump: p * 3 + by).
static unsigned long long expected_sum(int phase, int b)
{
	unsigned v = 0;
	for (int r = 0; r < ROUNDS; r++)
		v = v * 3 + (unsigned)(phase * 1000 + r * BUFFERS + b);
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
			bump_on(s, buf[b], (unsigned)(phase * 1000 + r * BUFFERS + b));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGetLastError());
	for (int b = 0; b < BUFFERS; b++) {
		unsigned long long sum = buffer_sum(buf[b]);
		printf("phase %d buffer %d sum %llu\n", phase, b, sum);
		wrong += sum != expected_sum(phase, b);
	}
	CHECK(cudaStreamDestroy(s));
	return wrong;
}

int main(int argc, char **argv)
{
	unsigned *first[BUFFERS], *second[BUFFERS];
	if (argc > 1 && strcmp(argv[1], "first") == 0)
		CHECK(cudaDeviceReset());
	int wrong = run_phase(1, first);
	CHECK(cudaDeviceReset());
	printf("free after the reset: %s\n", cudaGetErrorName(cudaFree(first[0])));
	cudaGetLastError();
	wrong += run_phase(2, second);
	for (int b = 0; b < BUFFERS; b++)
		CHECK(cudaFree(second[b]));
	CHECK(cudaDeviceReset());
	if (wrong)
		printf("reset: FAILED %d sums wrong\n", wrong);
	else
		printf("reset: ok\n");
	return wrong ? 1 : 0;
}
