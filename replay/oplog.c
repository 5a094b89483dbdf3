/* oplog.c: the recording executor (see oplog.h). */
#include "oplog.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

struct oplog {
	struct oplog_entry *e;
	size_t n, cap;
	struct oplog_gate *gates;
	size_t n_gates, cap_gates;
	uint64_t next_mark, now;
	uint64_t issued; /* what gate reports issued */
	uint64_t evicting; /* what evicting reports on the way out */
	int failed;
};

oplog *oplog_create(void)
{
	oplog *l = calloc(1, sizeof *l);
	if (l) {
		l->next_mark = 1;
		l->issued = UINT64_MAX;
	}
	return l;
}

void oplog_clear(oplog *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->e[i].ranges);
	l->n = 0;
	l->n_gates = 0;
}

void oplog_destroy(oplog *l)
{
	if (!l)
		return;
	oplog_clear(l);
	free(l->e);
	free(l->gates);
	free(l);
}

static struct oplog_entry *append(oplog *l)
{
	struct oplog_entry *p = room_for_one(l->e, l->n, &l->cap, sizeof *p, 64);
	if (!p) {
		l->failed = 1;
		return NULL;
	}
	l->e = p;
	struct oplog_entry *e = &l->e[l->n++];
	memset(e, 0, sizeof *e);
	return e;
}

/* A new entry holding a copy of ranges[0 .. n), or NULL (l->failed set). */
static struct oplog_entry *append_ranges(oplog *l, const struct engine_range *ranges, size_t n)
{
	struct engine_range *copy = malloc((n ? n : 1) * sizeof *copy);
	struct oplog_entry *e = copy ? append(l) : NULL;
	if (!e) {
		free(copy);
		l->failed = 1;
		return NULL;
	}
	memcpy(copy, ranges, n * sizeof *copy);
	e->ranges = copy;
	e->n = n;
	return e;
}

static void issue(void *ctx, enum engine_op op, const struct engine_range *ranges, size_t n,
		  uint64_t wait_mark, uint64_t ticket, uint64_t room)
{
	struct oplog_entry *e = append_ranges(ctx, ranges, n);
	if (e) {
		e->op = op;
		e->mark = wait_mark;
		e->ticket = ticket;
		e->room = room;
	}
}

static uint64_t gate(void *ctx, uint64_t ticket, bool wait_issue)
{
	oplog *l = ctx;
	struct oplog_gate *p = room_for_one(l->gates, l->n_gates, &l->cap_gates, sizeof *p, 64);
	if (!p) {
		l->failed = 1;
		return l->issued;
	}
	l->gates = p;
	l->gates[l->n_gates++] = (struct oplog_gate){ ticket, wait_issue };
	return l->issued;
}

static bool place(void *ctx, uint64_t address, uint64_t bytes, bool on_host)
{
	struct engine_range r = { address, bytes };
	struct oplog_entry *e = append_ranges(ctx, &r, 1);
	if (e)
		e->place = on_host ? 1 : -1;
	return e != NULL;
}

static uint64_t mark(void *ctx)
{
	oplog *l = ctx;
	struct oplog_entry *e = append(l);
	if (!e)
		return 0;
	e->is_mark = 1;
	e->mark = l->next_mark++;
	return e->mark;
}

static uint64_t now(void *ctx)
{
	return ((oplog *)ctx)->now;
}

static uint64_t evicting(void *ctx)
{
	return ((oplog *)ctx)->evicting;
}

struct engine_executor oplog_executor(oplog *l)
{
	return (struct engine_executor){ l, issue, mark, now, place, gate, evicting };
}

const struct oplog_entry *oplog_entries(const oplog *l, size_t *n)
{
	*n = l->n;
	return l->e;
}

const struct oplog_gate *oplog_gates(const oplog *l, size_t *n)
{
	*n = l->n_gates;
	return l->gates;
}

void oplog_set_time(oplog *l, uint64_t ns)
{
	l->now = ns;
}

void oplog_set_issued(oplog *l, uint64_t ticket)
{
	l->issued = ticket;
}

void oplog_set_evicting(oplog *l, uint64_t bytes)
{
	l->evicting = bytes;
}

int oplog_failed(const oplog *l)
{
	return l->failed;
}
