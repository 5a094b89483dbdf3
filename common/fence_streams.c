/* fence_streams.c: which streams a fence records its events on
 * (fence_streams.h). */
#include "fence_streams.h"

int fence_streams_choose(struct fenced *fenced, int n, const char **why)
{
	int chosen = 0;
	for (int i = 0; i < n; i++) {
		struct fenced x = fenced[i];
		if (x.capturing && !x.nonblocking) {
			*why = "a blocking stream captures (a per-thread default stream is one)";
			return -1;
		}
		if (x.capturing && x.busy && !x.drained) {
			*why = "a capturing stream has work from before its capture not drained";
			return -1;
		}
		if (!x.capturing && x.busy && x.nonblocking)
			fenced[chosen++] = x;
	}
	return chosen;
}
