/*
 * fake_hand_over.h: the wait for the GPU (um_alloc_wait_for_gpu) and
 * CUPTI's flush, faked for the tests of the tools' activity records: a
 * forced flush must come after the wait, or the records of kernels still
 * queued would be handed over without their times; forced flushes are
 * counted. CUPTI's count of dropped records, which each buffer completed
 * asks for, does nothing. Include after testutil.h, in one file of a test.
 */
#ifndef UMKIT_FAKE_HAND_OVER_H
#define UMKIT_FAKE_HAND_OVER_H

#include <stdatomic.h>
#include <stdbool.h>

#include <cupti.h>

#include "common/cuda/cupti_dropped.h"
#include "common/cuda/um_alloc.h"

static bool gpu_waited;
static int forced_flushes;

void um_alloc_wait_for_gpu(void)
{
	gpu_waited = true;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	if (flag == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
		assert_true(gpu_waited);
		forced_flushes++;
	}
	return CUPTI_SUCCESS;
}

void cupti_count_dropped(CUcontext ctx, uint32_t stream_id, atomic_uint_fast64_t *count, const char *consequence)
{
}

#endif
