/* cupti_dropped.c: counting the records CUPTI dropped (see cupti_dropped.h). */
#include "cupti_dropped.h"

#include "log.h"

void cupti_count_dropped(CUcontext ctx, uint32_t stream_id, atomic_uint_fast64_t *count, const char *consequence)
{
	size_t n = 0;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &n) == CUPTI_SUCCESS && n &&
	    atomic_fetch_add(count, n) == 0)
		um_warn("CUPTI dropped %zu activity records: %s", n, consequence);
}
