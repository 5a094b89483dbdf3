/* match.c: plan position tracking (see match.h for the rules). */
#include "match.h"

#include <stdlib.h>

#include "plan.h"
#include "search.h"

struct cand {
	uint64_t exec_id;
	uint64_t pos; /* < n: 64 bits for search.h, in room the padding took */
};

struct match {
	const uint64_t *ids;
	const uint64_t *shapes; /* NULL: no shape matching */
	uint32_t n;
	struct cand *index;      /* [n] sorted by (exec_id, pos) */
	uint64_t hist[MATCH_HISTORY];
	uint32_t n_hist, hist_next; /* ring: hist_next is where the next ID goes */
	bool have_place;         /* next is trusted: a match there counts */
	uint32_t next;           /* expected position of the next launch (kept
				    while lost: resync ties go ahead of it) */
	bool have_last;
	uint32_t last;           /* the last position a launch was placed at */
	uint32_t entry;          /* the lowest position placed with support,
				    the history's or the track's (match.h);
				    PLAN_POS_NONE before the first */
	uint32_t entry_before;   /* entry before the last launch placed, for
				    match_move */
	uint32_t lost_run;
	uint64_t launches;
};

static int by_id_pos(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->exec_id != y->exec_id)
		return x->exec_id < y->exec_id ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

match *match_create(const uint64_t *exec_ids, const uint64_t *shape_ids, uint32_t n)
{
	match *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->index = malloc((n ? n : 1) * sizeof *m->index);
	if (!m->index) {
		free(m);
		return NULL;
	}
	m->ids = exec_ids;
	m->shapes = shape_ids;
	m->n = n;
	m->entry = PLAN_POS_NONE;
	for (uint32_t i = 0; i < n; i++)
		m->index[i] = (struct cand){ exec_ids[i], i };
	qsort(m->index, n, sizeof *m->index, by_id_pos);
	return m;
}

void match_destroy(match *m)
{
	if (!m)
		return;
	free(m->index);
	free(m);
}

/* The k-th most recent launch's ID, k >= 1 (k <= n_hist). */
static uint64_t hist_back(const match *m, uint32_t k)
{
	return m->hist[(m->hist_next + MATCH_HISTORY - k) % MATCH_HISTORY];
}

/* The plan's ID back positions before p, wrapping into the previous
 * iteration. */
static uint64_t plan_back(const match *m, uint32_t p, uint32_t back)
{
	return m->ids[(p + m->n - back % m->n) % m->n];
}

/* Run of agreement between history (skipping hist_skip most recent launches)
 * and the plan before p (skipping plan_skip positions). */
static uint32_t run(const match *m, uint32_t p, uint32_t hist_skip, uint32_t plan_skip)
{
	uint32_t r = 0;
	while (r + hist_skip < m->n_hist &&
	       hist_back(m, r + 1 + hist_skip) == plan_back(m, p, r + 1 + plan_skip))
		r++;
	return r;
}

static uint32_t score(const match *m, uint32_t p)
{
	uint32_t best = 2 * run(m, p, 0, 0);
	const uint32_t slack[3][2] = { { 1, 0 }, { 0, 1 }, { 1, 1 } };
	for (int i = 0; i < 3; i++) {
		uint32_t r = run(m, p, slack[i][0], slack[i][1]);
		if (r && 2 * r - 1 > best)
			best = 2 * r - 1;
	}
	return best;
}

/* How far p is from the expected position, ahead or back. */
static uint32_t distance(const match *m, uint32_t p)
{
	uint32_t ahead = (p + m->n - m->next) % m->n, back = (m->next + m->n - p) % m->n;
	return ahead < back ? ahead : back;
}

/* Whether a resync may move the matcher to p. Identical layers give
 * identical histories, so on track a launch whose ID the plan holds in
 * another layer (a kernel whose ID varies, one the program inserted) would
 * score as well there as where the program is: on track the matcher moves
 * at most MATCH_NEAR positions, ahead or back, from the expected position
 * (from the entry, too, when the expected position is the plan's first),
 * and farther only once its place is lost. */
static bool may_move(const match *m, uint32_t p)
{
	if (!m->have_place || distance(m, p) <= MATCH_NEAR)
		return true;
	/* Past the iteration's last kernel, a program that enters the plan
	 * after its first kernels goes on where it enters. */
	return m->next == 0 && m->entry != PLAN_POS_NONE && p >= m->entry && p - m->entry <= MATCH_NEAR;
}

/* The best-supported position of exec_id, or false when none scores 2;
 * of equal scores the nearest, ahead or back (identical layers give
 * equal scores a layer apart: a kernel the program ran again a few
 * positions back must not send the matcher a layer ahead, nor two such
 * steps a whole layer). A launch with the last one's ID, whose position is
 * supported as well as any, is that kernel repeated and goes there: in
 * layers of two kernels (a layer ahead as near as its own place) it would
 * otherwise score as well one layer ahead, and the matcher would skip a
 * layer. */
static bool resync(const match *m, uint64_t exec_id, uint32_t *pos)
{
	size_t first = lower_bound_u64(m->index, m->n, SEARCH_FIELD(struct cand, exec_id), exec_id);
	size_t count = upper_bound_u64(m->index, m->n, SEARCH_FIELD(struct cand, exec_id), exec_id) - first;
	if (!count)
		return false;
	/* Walk the candidates in order of distance from the expected
	 * position, ahead and back by turns (ahead first of two as near), so
	 * that the MATCH_CANDIDATES scored of an ID with more places are the
	 * nearest either way (session 61: walked ahead only, a kernel run
	 * again two back was placed a layer ahead). The first ahead is found
	 * by binary search: walked, its cost grew with the ID's places. */
	size_t ahead = lower_bound_u64(m->index + first, count, SEARCH_FIELD(struct cand, pos), m->next);
	size_t back = (ahead + count - 1) % count;
	ahead %= count;
	uint32_t best_score = 0, best_distance = 0;
	for (size_t i = 0; i < count && i < MATCH_CANDIDATES; i++) {
		uint32_t pa = (uint32_t)m->index[first + ahead].pos, pb = (uint32_t)m->index[first + back].pos, p, d;
		uint32_t da = distance(m, pa), db = distance(m, pb);
		if (da <= db) {
			p = pa, d = da;
			ahead = (ahead + 1) % count;
		} else {
			p = pb, d = db;
			back = (back + count - 1) % count;
		}
		if (!may_move(m, p))
			continue; /* on track, too far: never the place */
		uint32_t s = score(m, p);
		if (s > best_score || (s == best_score && d < best_distance)) {
			best_score = s;
			best_distance = d;
			*pos = p;
		}
	}
	if (best_score >= 2 && m->have_place && m->have_last && m->ids[m->last] == exec_id &&
	    score(m, m->last) >= best_score)
		*pos = m->last;
	return best_score >= 2;
}

void match_launch(match *m, uint64_t exec_id, uint64_t shape_id, struct match_step *out)
{
	uint32_t p = 0;
	bool supported = true; /* by the history or the track */
	bool was_lost = !m->have_place;
	*out = (struct match_step){ MATCH_LOST, PLAN_POS_NONE, 0, false, false, false, false };
	if (exec_id && m->have_place && m->ids[m->next] == exec_id) {
		out->how = MATCH_MATCHED;
		p = m->next;
	} else if (exec_id && m->launches == 0 && m->ids[0] == exec_id) {
		out->how = MATCH_MATCHED;
		supported = false;
	} else if (exec_id && resync(m, exec_id, &p)) {
		out->how = MATCH_RESYNCED;
		/* Forward, and nearer ahead than back (distance() is the move
		 * ahead): the iteration's last kernels run again after its first
		 * ones are a move back across its start, no positions skipped. */
		if (m->have_place && p >= m->next && distance(m, p) == p - m->next)
			out->skipped = p - m->next;
	} else if (shape_id && m->shapes && m->have_place && m->shapes[m->next] == shape_id) {
		out->how = MATCH_SHAPED;
		p = m->next;
		exec_id = m->ids[p];
	}
	m->launches++;
	m->hist[m->hist_next] = exec_id;
	m->hist_next = (m->hist_next + 1) % MATCH_HISTORY;
	if (m->n_hist < MATCH_HISTORY)
		m->n_hist++;

	if (out->how == MATCH_LOST) {
		if (++m->lost_run >= MATCH_LOST_AFTER)
			m->have_place = false;
		out->lost = !m->have_place;
		return;
	}
	out->position = p;
	uint64_t entry = m->entry == PLAN_POS_NONE ? 0 : m->entry;
	bool wrapped = m->have_last && p + m->n / 2 <= m->last;
	/* The launches lost right before p count as its predecessors in the
	 * wrap: a program whose iterations lack the plan's last kernels loses
	 * its place at each iteration's first launches, which no history
	 * supports, and finds it again MATCH_LOST_AFTER kernels in. */
	uint32_t lost_before = m->lost_run < p ? m->lost_run : p;
	bool wrapped_while_lost = m->have_last && p - lost_before + m->n / 2 <= m->last;
	out->iteration_start = m->have_last ? wrapped_while_lost && p <= entry + MATCH_NEAR : p == 0;
	out->found_back = wrapped && !out->iteration_start && was_lost;
	m->entry_before = m->entry;
	if (supported && p < m->entry)
		m->entry = p;
	m->lost_run = 0;
	m->have_place = m->have_last = true;
	m->last = p;
	m->next = (p + 1) % m->n;
}

void match_move(match *m, uint32_t p)
{
	m->entry = m->entry_before;
	if (p < m->entry)
		m->entry = p;
	m->last = p;
	m->next = (p + 1) % m->n;
}
