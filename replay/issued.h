/*
 * issued.h: which prefetch jobs the executor's worker has issued.
 *
 * A kernel whose blocks a prefetch is bringing is ordered after that
 * prefetch (the gate, docs/replay.md), but a stream can only wait for work
 * already queued: the worker must have made the prefetch's call. The
 * worker issues jobs in order, behind evictions whose calls may copy for
 * milliseconds, so a launch often came first: it then ran unordered and
 * faulted page by page on the blocks the prefetch was about to bring (on
 * the H100, most of the PyTorch MLP's on-demand migrations under plan).
 * Here the worker publishes each prefetch job's ticket once issued, and a
 * launch may wait for it, for a bounded time, so a worker stuck behind a
 * long eviction (or a driver call that never returns) cannot hang the
 * program. Waiting blocks the program's thread, which costs time where the
 * GPU still had queued work (ViT-B/16 ran 5-23 % slower waiting every
 * time: docs/benchmarks.md), so a launch waits only when faulting would
 * cost more (issued_worth_waiting).
 *
 * Tickets increase (engine.h: one per flush). Slot ticket % slots holds
 * the newest ticket published there. Thread-safe: the worker publishes,
 * any of the program's threads waits.
 */
#ifndef UMKIT_REPLAY_ISSUED_H
#define UMKIT_REPLAY_ISSUED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct issued_tickets issued_tickets;

/* A table of slots slots (> 0), nothing published. NULL if out of memory. */
issued_tickets *issued_create(size_t slots);
void issued_destroy(issued_tickets *t);

/* The job of ticket (> 0) has been issued: its slot holds ticket from now
 * on (unless a later one was published there), and waiters wake. */
void issued_publish(issued_tickets *t, uint64_t ticket);

/* The ticket ticket's slot holds now: >= ticket means that job was issued
 * (> ticket: the slot has since been reused by a later job). */
uint64_t issued_get(issued_tickets *t, uint64_t ticket);

/* Waits until ticket's slot holds ticket or later, or timeout_ns has
 * passed; returns what the slot holds then (as issued_get). */
uint64_t issued_wait(issued_tickets *t, uint64_t ticket, uint64_t timeout_ns);

/* Whether a launch should wait for the worker to issue the prefetch that
 * brings `needed` bytes of its blocks, when evict_backlog and
 * prefetch_backlog bytes are queued for the worker and not yet done:
 * whether faulting the needed bytes in would take longer than the worker
 * needs to get through its queue, at the rates measured on the H100
 * (on-demand faults 4.3 GB/s, eviction about 10 GB/s, prefetch 48 GB/s:
 * h100-facts.md, docs/replay.md). */
bool issued_worth_waiting(uint64_t needed, uint64_t evict_backlog, uint64_t prefetch_backlog);

#endif
