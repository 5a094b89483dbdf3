/*
 * oplog.h: an engine executor that records instead of acting: every batch
 * (kind, ranges, marker waited for, ticket, room), every marker and every
 * placement in host memory, in order, and apart from them the tickets
 * launches gated on. The unit
 * tests judge the engine by this log; it also lets a tool show what a
 * policy would do to a recorded run without a GPU.
 *
 * Markers are numbered 1, 2, ... in the order they are asked for; the
 * clock is whatever oplog_set_time last set. Not thread-safe on its own: the
 * engine calls it with its lock held.
 */
#ifndef UMKIT_REPLAY_OPLOG_H
#define UMKIT_REPLAY_OPLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* One entry: a batch, a marker (is_mark) or a placement (place). */
struct oplog_entry {
	int is_mark;
	int place;                    /* 1: placed in host memory, -1: released;
					 the range is ranges[0] */
	uint64_t mark;                /* the marker recorded, or waited for */
	uint64_t ticket;              /* batches: their flush's */
	uint64_t room;                /* batches: the model's room after it */
	enum engine_op op;            /* batches */
	struct engine_range *ranges;  /* batches: n ranges, owned by the log */
	size_t n;
};

typedef struct oplog oplog;

/* An empty log, or NULL when out of memory. */
oplog *oplog_create(void);
void oplog_destroy(oplog *l);

/* The executor writing into l (ctx = l); valid while l lives. */
struct engine_executor oplog_executor(oplog *l);

/* The entries so far, oldest first; *n gets their count. Valid until the
 * next entry or oplog_clear. */
const struct oplog_entry *oplog_entries(const oplog *l, size_t *n);

/* A call of gate: its ticket, and whether it asked to wait for the issue. */
struct oplog_gate {
	uint64_t ticket;
	bool wait_issue;
};

/* The gates so far, oldest first; *n gets their count. Valid until the
 * next gate or oplog_clear. */
const struct oplog_gate *oplog_gates(const oplog *l, size_t *n);

/* Forgets the entries and gates (marker numbering goes on). */
void oplog_clear(oplog *l);

/* Sets what the executor's now() returns. */
void oplog_set_time(oplog *l, uint64_t ns);

/* Sets the newest ticket gate() reports issued (at first UINT64_MAX: every
 * prefetch issued as soon as it is queued). */
void oplog_set_issued(oplog *l, uint64_t ticket);

/* Sets the bytes evicting() reports still on their way out of the GPU (at
 * first 0: every eviction landed as soon as it is queued). */
void oplog_set_evicting(oplog *l, uint64_t bytes);

/* True when the log ran out of memory (entries were lost). */
int oplog_failed(const oplog *l);

#endif
