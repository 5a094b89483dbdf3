/* marks.c: marker indexes (see marks.h). */
#include "marks.h"

#include <stdlib.h>

struct marks {
	struct wait_ref ring[MARKS_RING];
	uint32_t n_pos;
	uint8_t *wanted;         /* [n_pos] bitmap as bytes: cheap to test */
	struct wait_ref *by_pos; /* [n_pos] */
};

marks *marks_create(const struct plan *plan)
{
	marks *m = calloc(1, sizeof *m);
	if (!m || !plan)
		return m;
	m->n_pos = plan->signature.n_kernels;
	m->wanted = calloc(m->n_pos, 1);
	m->by_pos = calloc(m->n_pos, sizeof *m->by_pos);
	if (!m->wanted || !m->by_pos) {
		marks_destroy(m);
		return NULL;
	}
	for (uint64_t i = 0; i < plan->n_ops; i++)
		if (plan->ops[i].after < m->n_pos)
			m->wanted[plan->ops[i].after] = 1;
	return m;
}

void marks_destroy(marks *m)
{
	if (!m)
		return;
	free(m->wanted);
	free(m->by_pos);
	free(m);
}

bool marks_position_wanted(const marks *m, uint32_t pos)
{
	return pos < m->n_pos && m->wanted[pos];
}

void marks_note(marks *m, uint64_t seq, uint32_t pos, uint64_t mark)
{
	struct wait_ref w = { seq, mark };
	m->ring[seq % MARKS_RING] = w;
	if (pos < m->n_pos && (m->by_pos[pos].seq <= seq || !m->by_pos[pos].mark))
		m->by_pos[pos] = w;
}

struct wait_ref marks_of_launch(const marks *m, uint64_t seq)
{
	struct wait_ref w = m->ring[seq % MARKS_RING];
	return seq && w.seq == seq ? w : (struct wait_ref){ 0, 0 };
}

struct wait_ref marks_of_position(const marks *m, uint32_t pos)
{
	return pos < m->n_pos ? m->by_pos[pos] : (struct wait_ref){ 0, 0 };
}
