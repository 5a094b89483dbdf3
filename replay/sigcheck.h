/*
 * sigcheck.h: deciding that a plan was made for another program (another
 * model, batch size or script), so the replayer stops acting on it.
 *
 * The rule (docs/replay.md, "Foreign plans"):
 *  - kernels: a window opens at a launch the matcher places (matched or
 *    resynced) and spans W = min(n_kernels, SIGCHECK_WINDOW_MAX) launches;
 *    at least half of them placed: the kernels agree. A failed window
 *    closes and the next placed launch opens another, because a warm-up
 *    kernel the plan also holds (a fill, a copy during initialisation) can
 *    open one among launches the plan does not hold. Foreign: when
 *    10 * n_kernels + SIGCHECK_NO_HIT_SLACK launches pass (counted from the
 *    first placed launch, or from the start if none is) without a window
 *    agreeing. A program of another shape is usually caught sooner, by its
 *    allocations.
 *  - allocations: each complete iteration (from one iteration start to the
 *    next) is compared with signature.alloc_sizes as multisets: it agrees
 *    when they share at least SIGCHECK_ALLOC_AGREE_PCT % of the larger. Not
 *    in order and not exactly, because threads (PyTorch's autograd thread
 *    and the main one) can interleave their allocations differently from
 *    run to run, and a resynchronisation can move an iteration's start by a
 *    kernel. Another batch size changes most sizes (activations); only the
 *    gradients' stay. If none of the first SIGCHECK_ALLOC_TRIES complete
 *    iterations agrees: foreign. Several tries, because a framework's first
 *    iterations allocate extra (optimizer state made at the first step,
 *    library workspaces). An iteration whose sizes could not be kept
 *    (memory ran out) is not judged and is no try.
 * The verdict is final. Not thread-safe: the engine's lock covers it.
 */
#ifndef UMKIT_REPLAY_SIGCHECK_H
#define UMKIT_REPLAY_SIGCHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"

#define SIGCHECK_WINDOW_MAX 1000
#define SIGCHECK_NO_HIT_SLACK 10000
#define SIGCHECK_ALLOC_TRIES 3
#define SIGCHECK_ALLOC_AGREE_PCT 90

typedef struct sigcheck sigcheck;

/* A check against sig (which must outlive it), by the kernels alone unless
 * allocations is true; NULL when out of memory. */
sigcheck *sigcheck_create(const struct plan_signature *sig, bool allocations);
void sigcheck_destroy(sigcheck *s);

/* One launch: placed = matched or resynced. */
void sigcheck_launch(sigcheck *s, bool placed);

/* The program allocated size bytes. */
void sigcheck_alloc(sigcheck *s, uint64_t size);

/* An iteration started (the previous one, if any, is complete). The last
 * `early` allocations were the new iteration's already (a start found
 * after the program began the iteration, engine.c): they are judged with
 * it, not with the one before. */
void sigcheck_iteration_start(sigcheck *s, uint64_t early);

/* True once the plan has been judged foreign. */
bool sigcheck_foreign(const sigcheck *s);

#endif
