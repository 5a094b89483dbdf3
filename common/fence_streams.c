/* fence_streams.c: which streams a fence records its events on
 * (fence_streams.h). */
#include "fence_streams.h"

int fence_streams_choose(struct fenced *fenced, int n, bool *legacy, bool *lost)
{
	bool blocking_capture = false;
	int kept = 0;
	for (int i = 0; i < n; i++) {
		if (fenced[i].capturing) {
			blocking_capture |= !fenced[i].nonblocking;
			*lost |= fenced[i].dirty && !fenced[i].drained;
		} else {
			fenced[kept++] = fenced[i];
		}
	}
	int chosen = 0;
	for (int i = 0; i < kept; i++)
		if (fenced[i].dirty || (blocking_capture && !fenced[i].nonblocking))
			fenced[chosen++] = fenced[i];
	*legacy = !blocking_capture;
	return chosen;
}
