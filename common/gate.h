/*
 * gate.h: calls from any thread into something one thread will tear down.
 *
 * A call passes the gate only while it is open and leaves it when done;
 * gate_close shuts it and waits for the calls that passed, so once it
 * returns none is inside and none will pass again: what they used may be
 * freed. Both sides use sequentially consistent operations, so either the
 * closer sees a call inside or the call sees the gate shut.
 */
#ifndef UMKIT_GATE_H
#define UMKIT_GATE_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

struct gate {
	atomic_bool shut;
	atomic_uint inside;
};

/* A gate shut from the start, for a static one that opens later. */
#define GATE_SHUT { true, 0 }

static inline void gate_open(struct gate *g)
{
	atomic_store(&g->shut, false);
}

/* True: the call may go on and must call gate_leave. False: the gate is
 * shut; do nothing (and do not call gate_leave). */
static inline bool gate_enter(struct gate *g)
{
	atomic_fetch_add(&g->inside, 1);
	if (!atomic_load(&g->shut))
		return true;
	atomic_fetch_sub(&g->inside, 1);
	return false;
}

static inline void gate_leave(struct gate *g)
{
	atomic_fetch_sub(&g->inside, 1);
}

/* Shuts the gate without waiting: for a forked child, where the calls
 * counted inside are the parent's other threads, which do not exist. */
static inline void gate_shut(struct gate *g)
{
	atomic_store(&g->shut, true);
}

/* Shuts the gate and waits for the calls inside to leave. A call inside
 * must not wait for the closing thread. */
static inline void gate_close(struct gate *g)
{
	gate_shut(g);
	while (atomic_load(&g->inside) > 0)
		sched_yield();
}

#endif
