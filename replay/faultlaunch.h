/*
 * faultlaunch.h: dating each on-demand migration by the launch of the
 * kernel that faulted, for charging it to an allocation (faultsrc.h).
 *
 * A migration's own start is the wrong moment to ask who held its address
 * when the program uses one stream: the arena then hands a freed range out
 * again before the GPU has run the old owner's last kernels (stream order
 * makes that safe), so by the time those kernels fault the range has a new
 * owner. The allocation the faulting kernel touched is the one that held
 * the address when the kernel was launched. With --kernel-times the
 * replayer has both halves: CUPTI's kernel records (each kernel's span on
 * the GPU and its correlation ID) and its own note of each launch's time
 * under the same ID (one clock: CUPTI's timestamps).
 *
 * A migration belongs to a kernel running at its start. Where several run
 * (several streams), the latest launched is taken: the arena does not reuse
 * early then, so an owner that held the address at the faulting kernel's
 * launch still holds it at any later launch before the migration.
 */
#ifndef UMKIT_REPLAY_FAULTLAUNCH_H
#define UMKIT_REPLAY_FAULTLAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "replay/faultsrc.h"

/* One kernel's span on the GPU, from CUPTI's kernel activity record. */
struct kernel_span {
	uint64_t start_ns, end_ns;
	uint64_t correlation;
};

/* One launch the replayer followed: when it was made, under which
 * correlation ID. */
struct launch_time {
	uint64_t correlation;
	uint64_t ns;
};

/* Sets ev[i].launch_ns to the launch time of the kernel that ran at
 * ev[i].t_ns, or to 0 where none ran then or its launch was not noted.
 * Sorts l; returns how many migrations were dated (0, with none dated,
 * when memory ran out). */
size_t faultlaunch_date(struct fault_event *ev, size_t n, const struct kernel_span *k, size_t nk,
			struct launch_time *l, size_t nl);

#endif
