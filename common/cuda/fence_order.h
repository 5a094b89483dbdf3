/*
 * fence_order.h: device memory handed out before the fence of its last
 * free completed, with the program's streams queued behind that fence on
 * the GPU instead of its thread waiting on the host (the arena backend's
 * fence_order, common/cuda/um_backend.c).
 *
 * An order is a promise that every piece of GPU work the program queues
 * from now on runs after the fence. The fences' events (common/fence_ring.h)
 * are waited for by the tools' own stream, the join stream, behind which an
 * event, the order's, is then recorded; each call that queues work, at its
 * entry, has its stream wait for that event unless the calling thread
 * queued that stream behind this order or a later one already
 * (common/ordered_streams.h). A wait the driver refuses is made on the
 * host. Work captured into a graph runs at the graph's launch, whose
 * stream waits then.
 *
 * The promise holds only while the callbacks see every such call, so
 * orders are made only then, and once they go unseen the host waits for
 * every order made (fence_order_settle). Memory the host may touch (the
 * program's own managed memory) is not ordered: the arena waits for it.
 */
#ifndef UMKIT_FENCE_ORDER_H
#define UMKIT_FENCE_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "fence_ring.h"

/* Orders the GPU's later work behind every fence of ring up to token;
 * under the arena's lock, with launches seen. The join stream and the
 * order's event are made in context at the first order. False when it
 * cannot (closed, a deferred fence still pending, the driver refused):
 * the arena then waits. */
bool fence_order_promise(struct fence_ring *ring, uint64_t token, CUcontext context);

/* A call is about to queue work on stream (at its entry; a special handle
 * the calling thread's, in its current context): queues the stream behind
 * the newest order unless the thread did. gen: moves when a stream is
 * destroyed. */
void fence_order_stream(CUstream stream, unsigned gen);

/* The ring's fence_ring_ops.event_await: stream waits for event. */
bool fence_order_await(void *ctx, void *event, void *stream);

/* Launches go unseen from here on (call after the launch view says so):
 * no more orders, and the host waits for those made. */
void fence_order_settle(void);

/* Launches are seen again: orders may be made once the fences can name
 * every stream (the caller checks the launch view at each). */
void fence_order_reopen(void);

/* A device reset destroyed the join stream and the order's event, and
 * finished the work they ordered. */
void fence_order_reset(void);

#endif
