/*
 * rp_gate.c: keeps the migration stream waiting while the worker issues
 * a job's calls.
 *
 * A migration call made on an idle stream copies inside the call, and for
 * that long the driver stalls every other CUDA call of the process: the
 * program's launches, event records and discards waited 47-154 ms behind
 * an eviction on the H100. The same call on a stream that still waits for
 * something returns in 0.01-0.22 ms, and while the driver copies later,
 * the program's calls on other streams take what they take alone
 * (tests/gpu/um_costs.py, "deferred"; docs/replay.md). So the worker
 * closes the gate (the stream waits for a word in pinned host memory to
 * reach a ticket), makes its calls, and opens it (stores the ticket).
 *
 * Only the worker thread closes and opens the gate.
 */
#include <stdatomic.h>

#include <cuda.h>

#include "log.h"
#include "rp.h"

static _Atomic uint32_t *word; /* pinned, mapped for the GPU */
static CUdeviceptr word_dev;
static uint32_t ticket;
static bool broken;

bool rp_gate_create(void)
{
	void *host;
	if (word)
		return true;
	if (cuMemHostAlloc(&host, sizeof *word, CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS)
		return false;
	if (cuMemHostGetDevicePointer(&word_dev, host, 0) != CUDA_SUCCESS) {
		cuMemFreeHost(host);
		return false;
	}
	word = host;
	atomic_store(word, 0);
	return true;
}

bool rp_gate_close(CUstream s)
{
	if (!word || broken)
		return false;
	/* A ticket that wrapped around opens at once: the calls then copy
	 * inside themselves, as without a gate, once in 2^32 jobs. */
	if (cuStreamWaitValue32(s, word_dev, ticket + 1, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
		broken = true;
		um_warn("cannot make the replayer's stream wait (cuStreamWaitValue32); "
			"migrations will stall the program's CUDA calls while they copy");
		return false;
	}
	ticket++;
	return true;
}

void rp_gate_open(void)
{
	atomic_store_explicit(word, ticket, memory_order_release);
}
