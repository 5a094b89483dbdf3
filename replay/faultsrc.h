/*
 * faultsrc.h: which allocations the GPU still faulted on (umreplay --stats,
 * "fault_sources"), so that a plan's remaining faults can be traced to the
 * tensors behind them.
 *
 * The engine notes every allocation the program makes, with the time and
 * the identity the plan gives it; at exit the on-demand migrations CUPTI
 * reported are charged to the allocation that held their address at the
 * launch of the kernel that faulted, where that is known (--kernel-times:
 * faultlaunch.h), else at the migration's start: the latest allocation
 * made by then that covers the address. The two differ while the program
 * uses one stream: the arena then hands a freed range out again before the
 * GPU has run the old owner's last kernels (docs/design.md, "Freed memory
 * and the GPU"), and by its own start a fault of those kernels would be
 * charged to the new owner. All times come from one clock (the replayer
 * uses CUPTI's timestamps).
 *
 * An allocation made anew every iteration is one source, as in a plan
 * (struct plan_alloc): iteration origin with its iteration ordinal
 * (allocmap.h); otherwise persistent origin with its id (= trace
 * alloc.id).
 *
 * Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_FAULTSRC_H
#define UMKIT_REPLAY_FAULTSRC_H

#include <stddef.h>
#include <stdint.h>

struct alloc_rec; /* allocmap.h */

/* Allocations noted at most: past this (64 MB of log) later ones go
 * unnoted, and faults from the first of them on unattributed (a noted
 * allocation's range may be an unnoted one's by then). */
#define FAULTSRC_MAX_ALLOCS (1u << 20)

/* One on-demand migration: when it started, where, how many bytes; and
 * when the kernel that faulted was launched (0: not known). */
struct fault_event {
	uint64_t t_ns, address, bytes;
	uint64_t launch_ns;
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
	uint64_t sources;       /* distinct sources charged */
	uint64_t unattributed;  /* migrations no noted allocation covers */
	uint64_t by_launch;     /* migrations charged as of their kernel's launch */
	uint64_t owner_changed; /* of those, ones whose address had another
				   owner by the migration's start */
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
