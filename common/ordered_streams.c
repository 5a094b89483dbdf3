/* ordered_streams.c: the streams a thread has queued behind the arena's
 * newest fence order (ordered_streams.h). */
#include "ordered_streams.h"

static int find(const struct ordered_streams *t, const void *stream, const void *context)
{
	for (int i = 0; i < ORDERED_STREAMS; i++)
		if (t->e[i].token && t->e[i].stream == stream && t->e[i].context == context)
			return i;
	return -1;
}

bool ordered_streams_behind(const struct ordered_streams *t, const void *stream, const void *context,
			    uint64_t token, unsigned gen)
{
	int i = find(t, stream, context);
	return i >= 0 && t->e[i].gen == gen && t->e[i].token >= token;
}

void ordered_streams_note(struct ordered_streams *t, const void *stream, const void *context, uint64_t token,
			  unsigned gen)
{
	int i = find(t, stream, context);
	if (i < 0)
		i = (int)(t->next++ % ORDERED_STREAMS);
	t->e[i] = (struct ordered_stream){ stream, context, token, gen };
}
