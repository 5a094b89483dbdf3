/* fence_streams.c: which streams a fence records its events on
 * (fence_streams.h). */
#include "fence_streams.h"

int fence_streams_choose(struct fenced *fenced, int n)
{
	int chosen = 0;
	for (int i = 0; i < n; i++) {
		struct fenced x = fenced[i];
		if (x.capturing && (!x.nonblocking || (x.busy && !x.drained)))
			return -1;
		if (!x.capturing && x.busy && x.nonblocking)
			fenced[chosen++] = x;
	}
	return chosen;
}
