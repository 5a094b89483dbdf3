/*
 * rec.h: state shared by the recorder's pieces inside libumrec.so.
 *
 *   rec_inject.c     InitializeInjection: settings, the trace, CUPTI set-up;
 *                    the exit path that flushes and closes the trace
 *   rec_callbacks.c  CUPTI callbacks: kernel launches, where copies and
 *                    memsets write, contexts and streams, NVTX ranges, and
 *                    the allocator hooks
 *   rec_activity.c   CUPTI activity buffers: kernels, memcpy/memset and the
 *                    Unified Memory migration and fault records
 */
#ifndef UMKIT_REC_H
#define UMKIT_REC_H

#include <stdint.h>

#include <cupti.h>

#include "gate.h"
#include "record/trace_writer.h"

/* The trace being written; NULL when this process does not record. */
extern trace_writer *rec_writer;
/* Every hook that writes to the trace passes it (gate.h). It opens once
 * the trace is set up; the exit path shuts it and waits for the hooks
 * inside before the writer closes and is freed, since other threads (the
 * program's, CUPTI's) may still be in a hook while exit handlers run. */
extern struct gate rec_gate;

/* CPU time on CUPTI's clock, the trace's time base. */
uint64_t rec_now(void);
/* The calling thread's OS id. */
uint32_t rec_tid(void);
/* meta.key = v, in decimal. */
void rec_meta_u64(const char *key, uint64_t v);

/* Subscribes the callbacks and installs the allocator's hooks
 * (rec_callbacks.c). Returns 0 or a CUPTI error; a failed start leaves
 * nothing subscribed, hooked or allocated. */
CUptiResult rec_callbacks_start(CUpti_SubscriberHandle *sub);
/* Undoes a start that the gate never opened after (the activity's start
 * failed): gives the subscription back and frees the NVTX table. The
 * allocator's hooks stay, doing nothing behind the shut gate: replacing
 * them could tear a read on a thread already allocating. */
void rec_callbacks_stop(CUpti_SubscriberHandle sub);
/* Kernel launches captured into CUDA graphs so far: they ran nothing and
 * have no kernel row. */
uint64_t rec_callbacks_captured_launches(void);
/* Writes the NVTX ranges still open, as never closed; the exit path calls
 * it once the gate is shut. */
void rec_callbacks_finish(void);
/* Registers buffers and enables the activity kinds that need no context;
 * where one fails, those it enabled are disabled again. */
CUptiResult rec_activity_start(void);
/* Enables the Unified Memory counters once CUPTI accepts them (cupti_um.h)
 * and notes the outcome in the trace's meta.um_counters; call it from every
 * launch, it is cheap once done. */
void rec_activity_enable_um(void);
/* Stops the periodic flush and makes CUPTI hand over every buffered
 * record (the exit path); notes in meta.um_counters that the Unified
 * Memory counters were never enabled, where they were not. */
void rec_activity_flush(void);
/* Makes CUPTI hand over every buffered record now, once the work queued
 * has run (before the device's reset, which destroys the context). */
void rec_activity_hand_over(void);
/* Records CUPTI reported dropping (all contexts so far). */
uint64_t rec_activity_dropped(void);

#endif
