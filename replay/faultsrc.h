/*
 * faultsrc.h: which allocations the GPU still faulted on (umreplay --stats,
 * "fault_sources"), so that a plan's remaining faults can be traced to the
 * tensors behind them.
 *
 * The engine notes every allocation the program makes, with the time and
 * the identity the plan gives it; at exit the on-demand migrations CUPTI
 * reported are charged to the allocation that held their address then: the
 * latest allocation made at or before t that covers a. The arena hands a
 * freed range out again only once the GPU has finished with it, except
 * while the program uses one stream (docs/design.md, "Freed memory and the
 * GPU"); then a fault of the old owner's last kernels may be charged to the
 * new owner. Both times must come from one clock (the replayer uses
 * CUPTI's timestamps).
 *
 * An allocation made anew every iteration is one source, as in a plan
 * (struct plan_alloc): iteration origin with its ordinal since the plan's
 * kernel #0 (allocmap.h); otherwise persistent origin with its id (= trace
 * alloc.id).
 *
 * Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_FAULTSRC_H
#define UMKIT_REPLAY_FAULTSRC_H

#include <stddef.h>
#include <stdint.h>

struct alloc_rec; /* allocmap.h */

/* Allocations noted at most: past this (about 48 MB of log) later ones go
 * unnoted, and faults on them unattributed. */
#define FAULTSRC_MAX_ALLOCS (1u << 20)

/* One on-demand migration: when it started, where, how many bytes. */
struct fault_event {
	uint64_t t_ns, address, bytes;
};

struct fault_source {
	uint8_t origin;       /* enum plan_alloc_origin */
	uint64_t ordinal;     /* with origin, the identity (see above) */
	uint64_t alloc_id;    /* the first instance charged (arena id) */
	uint64_t size;        /* its bytes */
	int32_t plan_alloc;   /* index into the plan's allocs; -1: not named */
	uint64_t migrations, bytes;
};

struct fault_totals {
	uint64_t sources;      /* distinct sources charged */
	uint64_t unattributed; /* migrations no noted allocation covers */
};

typedef struct faultsrc faultsrc;

faultsrc *faultsrc_create(void);
void faultsrc_destroy(faultsrc *f);

/* The program made allocation r at t_ns (calls in time order; faultsrc
 * may be NULL: nothing is noted). */
void faultsrc_note(faultsrc *f, uint64_t t_ns, const struct alloc_rec *r);

/* Charges ev[0 .. n) (any order) to the noted allocations and writes the
 * sources with the most bytes, most first, to out[0 .. max); returns how
 * many were written, or 0 with *tot zero when memory ran out. */
size_t faultsrc_attribute(const faultsrc *f, const struct fault_event *ev, size_t n,
			  struct fault_source *out, size_t max, struct fault_totals *tot);

#endif
