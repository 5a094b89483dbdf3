/*
 * rec_callbacks.c: what the recorder learns synchronously, on the program's
 * own threads: kernel launches (with their pointer arguments), where copies
 * and memsets write, contexts and streams, NVTX ranges, and allocations
 * (through the shim's hooks).
 *
 * Everything here runs inside the program's CUDA calls, so it only decodes
 * and queues; the writer thread does the I/O.
 */
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>

#include "common/cuda/capture.h"
#include "common/cuda/cbids.h"
#include "common/cuda/cupti_guard.h"
#include "common/cuda/driver_allocs.h"
#include "common/cuda/launch_info.h"
#include "common/cuda/stream_calls.h"
#include "common/cuda/um_alloc.h"
#include "common/cuda/um_backend.h"
#include "common/cuda/write_calls.h"
#include "log.h"
#include "rec.h"
#include "record/nvtx_open.h"
#include "thread_scratch.h"
#include "trace_schema.h"

static atomic_uint_fast64_t launch_seq;
static atomic_uint_fast64_t captured_launches;
static atomic_int truncation_warned, capture_warned, no_buffer_warned;

/* The trace's string id of a kernel's name, remembered per thread by
 * function and name pointer: interning hashes the long mangled name under
 * the writer's lock, and a step of PyTorch training launches the same few
 * hundred kernels over and over. A miss only costs the lookup. A name the
 * writer could not intern (0: out of memory) is not kept, but asked for
 * again at the next launch. */
#define NAME_CACHE 256
static __thread struct { CUfunction f; const char *name; int64_t id; } name_cache[NAME_CACHE];

static int64_t name_id(const struct launch_info *li)
{
	size_t slot = ((uintptr_t)li->function >> 4) % NAME_CACHE;
	if (!name_cache[slot].id || name_cache[slot].f != li->function || name_cache[slot].name != li->name) {
		name_cache[slot].f = li->function;
		name_cache[slot].name = li->name;
		name_cache[slot].id = trace_writer_intern(rec_writer, li->name);
	}
	return name_cache[slot].id;
}

/* What recording a launch needs besides its stack, 40 KiB: the launch
 * decoded and its arguments' rows, in a buffer of the launching thread's
 * (common/thread_scratch.h). */
struct launch_buffers {
	struct launch_info li;
	struct trace_kernel_arg args[PARAM_MAX_POINTERS];
};
static struct thread_scratch launch_scratch = THREAD_SCRATCH_INIT(sizeof(struct launch_buffers));

/* captured: the launch's work goes into a CUDA graph (stream_call_note). */
static void on_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, bool captured)
{
	if (cb->callbackSite != CUPTI_API_ENTER)
		return;
	struct launch_buffers *s = thread_scratch_get(&launch_scratch);
	if (!s) {
		if (atomic_fetch_add(&no_buffer_warned, 1) == 0)
			um_warn("no memory to decode a kernel launch: launches go unrecorded");
		return;
	}
	const struct launch_info *li = &s->li;
	if (!launch_decode(cbid, cb, um_alloc_arena(), um_alloc_foreign(), &s->li))
		return;
	if (captured) {
		atomic_fetch_add(&captured_launches, 1);
		return;
	}
	rec_activity_enable_um();
	for (uint32_t i = 0; i < li->nargs; i++) {
		s->args[i].param_offset = li->args[i].param_offset;
		s->args[i].alloc_id = li->args[i].alloc.id;
		s->args[i].offset = li->args[i].offset;
	}
	if (li->args_truncated && atomic_fetch_add(&truncation_warned, 1) == 0)
		um_warn("kernel %s passes more than %d pointers into managed memory; the rest are not recorded",
			li->name, PARAM_MAX_POINTERS);
	struct trace_launch l = {
		.correlation_id = cb->correlationId,
		.seq = atomic_fetch_add(&launch_seq, 1),
		.exec_id = li->exec_id,
		.name_id = name_id(li),
		.grid = { li->grid[0], li->grid[1], li->grid[2] },
		.block = { li->block[0], li->block[1], li->block[2] },
		.shared_mem = li->shared_mem,
		.thread_id = rec_tid(),
		.launch_ns = rec_now(),
		.args = s->args,
		.nargs = li->nargs,
	};
	trace_writer_launch(rec_writer, &l);
}

/* A capture begins or ends, or a graph is launched: said once, at the
 * first. */
static void on_graph(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	capture_note(cbid, cb);
	if (cb->callbackSite != CUPTI_API_ENTER)
		return;
	if (atomic_exchange(&capture_warned, 1))
		return;
	um_warn("the program uses CUDA graphs: the kernels a graph runs are recorded from their activity "
		"alone (table graph_kernel, without arguments), and umplan plans only the kernels launched "
		"one by one%s",
		capture_pytorch_cannot_capture()
			? "; PyTorch cannot capture a graph with its caching allocator off "
			  "(PYTORCH_NO_CUDA_MEMORY_CACHING=1): record it with umrec --framework-cache"
			: "");
}

/* A call that writes device memory other than through a kernel and names
 * its destination gets a write_dst row at its entry, under its correlation
 * ID, which its memcpy or memset activity record carries too: umplan then
 * knows which allocation the copy or memset wrote. A call whose
 * destinations its parameters do not say gets none (umplan takes a copy
 * or memset without a row as one that may have written anywhere), nor
 * does one captured into a CUDA graph: its work runs when the graph is
 * launched, under the launch's correlation ID. */
static void on_write(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, bool captured)
{
	CUdeviceptr dst;
	if (cb->callbackSite != CUPTI_API_ENTER || captured ||
	    write_call_dst(cbid, cb->functionParams, &dst) != WRITE_AT)
		return;
	struct trace_write_dst d = { cb->correlationId, dst, write_dst_alloc(dst) };
	trace_writer_write_dst(rec_writer, &d);
}

uint64_t rec_callbacks_captured_launches(void)
{
	return atomic_load(&captured_launches);
}

static void write_device_meta(CUcontext ctx)
{
	CUdevice dev;
	char name[256];
	size_t mem = 0;
	if (cuCtxPushCurrent(ctx) != CUDA_SUCCESS)
		return;
	if (cuCtxGetDevice(&dev) == CUDA_SUCCESS) {
		if (cuDeviceGetName(name, sizeof name, dev) == CUDA_SUCCESS)
			trace_writer_meta(rec_writer, "device_name", name);
		if (cuDeviceTotalMem(&mem, dev) == CUDA_SUCCESS)
			rec_meta_u64("device_memory", mem);
	}
	cuCtxPopCurrent(&ctx);
}

static void on_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *r)
{
	static atomic_int contexts;
	if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
		if (atomic_fetch_add(&contexts, 1) == 0)
			write_device_meta(r->context);
	} else if (cbid == CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING) {
		um_backend_stream_destroyed(r->resourceHandle.stream);
	} else if (cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED) {
		struct trace_stream s = { .created_ns = rec_now() };
		if (cuptiGetStreamIdEx(r->context, r->resourceHandle.stream, 0, &s.id) == CUPTI_SUCCESS &&
		    cuptiGetContextId(r->context, &s.context_id) == CUPTI_SUCCESS)
			trace_writer_stream(rec_writer, &s);
	}
}

/* NVTX ranges, push/pop and start/end (nvtx_open.h): each is written when
 * it closes, and those open at exit then (rec_callbacks_finish). */
static nvtx_open *nvtx;

static int64_t nvtx_name(const char *msg)
{
	return trace_writer_intern_message(rec_writer, msg);
}

/* An Ex form's name: its ASCII message, else "". Not a wide one: on an
 * H200 CUPTI handed every Ex range named by a wide string the first such
 * name the process gave (session 61), so none is trusted. */
static int64_t attribute_name(const nvtxEventAttributes_t *a)
{
	return nvtx_name(a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "");
}

static void on_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
	const void *p = d->functionParams;
	struct trace_nvtx r = { 0, rec_tid(), rec_now(), 0 };
	switch (cbid) {
	/* CUDA's NVTX implements the A and Ex forms only: a W form has no
	 * effect and no callback, so a pop after a PushW closes the range
	 * around it (docs/trace-schema.md). */
	case CUPTI_CBID_NVTX_nvtxRangePushA:
		r.name_id = nvtx_name(((const nvtxRangePushA_params *)p)->message);
		nvtx_open_push(nvtx, &r);
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
		r.name_id = attribute_name(((const nvtxRangePushEx_params *)p)->eventAttrib);
		nvtx_open_push(nvtx, &r);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartA:
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
		/* The ID the call returns is what its end names. */
		if (!d->functionReturnValue)
			break;
		r.name_id = cbid == CUPTI_CBID_NVTX_nvtxRangeStartA
				    ? nvtx_name(((const nvtxRangeStartA_params *)p)->message)
				    : attribute_name(((const nvtxRangeStartEx_params *)p)->eventAttrib);
		nvtx_open_start(nvtx, *(const nvtxRangeId_t *)d->functionReturnValue, &r);
		break;
	case CUPTI_CBID_NVTX_nvtxRangePop:
		if (nvtx_open_pop(nvtx, r.thread_id, r.start_ns, &r))
			trace_writer_nvtx(rec_writer, &r);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeEnd:
		if (nvtx_open_end(nvtx, ((const nvtxRangeEnd_params *)p)->id, r.start_ns, &r))
			trace_writer_nvtx(rec_writer, &r);
		break;
	default:
		break;
	}
}

static void write_nvtx(void *unused, const struct trace_nvtx *r)
{
	trace_writer_nvtx(rec_writer, r);
}

void rec_callbacks_finish(void)
{
	nvtx_open_drain(nvtx, write_nvtx, NULL);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	if (!gate_enter(&rec_gate))
		return;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		bool captured = stream_call_note(cbid, data);
		if (launch_is_kernel_cbid(cbid))
			on_launch(cbid, data, captured);
		else if (driver_allocs_cbid(cbid))
			driver_allocs_note(cbid, data);
		else if (graph_cbid(cbid))
			on_graph(cbid, data);
		else
			on_write(cbid, data, captured);
	}
	else if (domain == CUPTI_CB_DOMAIN_RESOURCE)
		on_resource(cbid, data);
	else if (domain == CUPTI_CB_DOMAIN_NVTX)
		on_nvtx(cbid, data);
	gate_leave(&rec_gate);
}

/* The CUPTI ID of a stream-ordered allocation's stream; 0 for any other
 * allocation, or when CUPTI cannot name the stream. */
static uint32_t alloc_stream_id(const char *api, CUstream stream)
{
	CUcontext ctx = NULL;
	uint32_t id = 0;
	bool ordered = strcmp(api, TRACE_API_ASYNC) == 0 || strcmp(api, TRACE_API_FROM_POOL) == 0;
	if (!ordered || cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
		return 0;
	bool per_thread = stream == CU_STREAM_PER_THREAD;
	if (cuptiGetStreamIdEx(ctx, per_thread ? NULL : stream, per_thread, &id) != CUPTI_SUCCESS)
		return 0;
	return id;
}

/* meta.arena_context_id, once, at the arena's first allocation: the CUPTI
 * ID of the context the arena serves. A program on several GPUs launches
 * kernels in other contexts too; umplan plans only the arena's. */
static void note_arena_context(void)
{
	static atomic_bool noted;
	uint32_t id;
	CUcontext ctx;
	if (atomic_load(&noted) || !(ctx = um_alloc_context()) || atomic_exchange(&noted, true))
		return;
	if (cuptiGetContextId(ctx, &id) == CUPTI_SUCCESS)
		rec_meta_u64("arena_context_id", id);
	/* The device the first context was made on may not be the arena's
	 * (a program that touches GPU 0 and trains on GPU 1): its name and
	 * memory, which umplan's default capacity starts from, are the
	 * arena's. */
	write_device_meta(ctx);
}

static void on_alloc(const struct arena_alloc *a, const char *api, CUstream stream)
{
	if (!gate_enter(&rec_gate))
		return;
	note_arena_context();
	struct trace_alloc t = { a->id, a->address, a->size, a->reserved, api, rec_now(), rec_tid(),
				 alloc_stream_id(api, stream) };
	trace_writer_alloc(rec_writer, &t);
	gate_leave(&rec_gate);
}

static void on_free(const struct arena_alloc *a)
{
	if (!gate_enter(&rec_gate))
		return;
	trace_writer_free(rec_writer, a->id, rec_now(), rec_tid());
	gate_leave(&rec_gate);
}

/* The program resets the device: the records of the context the reset
 * destroys are handed over first. Where the reset destroys the arena's
 * memory, meta.device_reset_ns says when, and the shim then frees the
 * live allocations (on_free); the program's memory after it is not
 * recorded. */
static void on_device_reset(bool arena_lost)
{
	if (!gate_enter(&rec_gate))
		return;
	rec_activity_hand_over();
	if (arena_lost)
		rec_meta_u64("device_reset_ns", rec_now());
	gate_leave(&rec_gate);
}

CUptiResult rec_callbacks_start(CUpti_SubscriberHandle *sub)
{
	static const struct um_alloc_hooks hooks = { on_alloc, on_free, on_device_reset };
	if (!(nvtx = nvtx_open_create()))
		return CUPTI_ERROR_OUT_OF_MEMORY;
	CUptiResult r = cupti_real()->Subscribe(sub, on_callback, NULL);
	if (r != CUPTI_SUCCESS)
		goto fail;
	r = cbids_enable(*sub, launch_cbids, (size_t)launch_ncbids);
	if (r == CUPTI_SUCCESS)
		r = write_calls_enable(*sub);
	if (r == CUPTI_SUCCESS)
		r = cbids_enable(*sub, stream_call_cbids, (size_t)stream_call_ncbids);
	if (r == CUPTI_SUCCESS)
		r = cbids_enable(*sub, graph_cbids, (size_t)graph_ncbids);
	if (r == CUPTI_SUCCESS)
		r = driver_allocs_enable(*sub, "the trace holds none of it, so no plan can move it");
	if (r == CUPTI_SUCCESS)
		r = cuptiEnableDomain(1, *sub, CUPTI_CB_DOMAIN_RESOURCE);
	if (r == CUPTI_SUCCESS)
		r = cuptiEnableDomain(1, *sub, CUPTI_CB_DOMAIN_NVTX);
	if (r != CUPTI_SUCCESS) {
		cupti_real()->Unsubscribe(*sub); /* CUPTI's one place, for the program's own profiler */
		goto fail;
	}
	um_alloc_set_hooks(&hooks);
	return CUPTI_SUCCESS;
fail:
	nvtx_open_destroy(nvtx);
	nvtx = NULL;
	return r;
}

void rec_callbacks_stop(CUpti_SubscriberHandle sub)
{
	cupti_real()->Unsubscribe(sub); /* CUPTI's one place, for the program's own profiler */
	nvtx_open_destroy(nvtx);
	nvtx = NULL;
}
