/*
 * Unit tests for the recorder's callbacks (record/cuda/rec_callbacks.c):
 * their set-up, and what the NVTX, launch and write callbacks write.
 * Linked with common/cuda/write_calls.c, with a real arena over addresses
 * nothing maps, and with fakes of CUPTI, of the trace writer and of the
 * rest of the injection: no GPU, no CUPTI. Callbacks are made up as CUPTI
 * hands them over.
 *
 * nvtx_open_create and _destroy are wrapped (the Makefile links this test
 * with --wrap), so that a test can count the NVTX tables a start made and
 * freed.
 */
#include "testutil.h"

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
#include "fake_arena.h"
#include "record/cuda/rec.h"
#include "record/nvtx_open.h"

#define SUBSCRIBER ((CUpti_SubscriberHandle)(uintptr_t)0x5b)

/* ---- the NVTX tables: counted, and each kept so that none a later start
 * replaces is a leak to LeakSanitizer ---- */

nvtx_open *__real_nvtx_open_create(void);
void __real_nvtx_open_destroy(nvtx_open *o);
nvtx_open *__wrap_nvtx_open_create(void);
void __wrap_nvtx_open_destroy(nvtx_open *o);

static nvtx_open *made[256];
static size_t n_made;
static int tables_made, tables_freed; /* in this test */

nvtx_open *__wrap_nvtx_open_create(void)
{
	assert_true(n_made < sizeof made / sizeof made[0]);
	tables_made++;
	return made[n_made++] = __real_nvtx_open_create();
}

void __wrap_nvtx_open_destroy(nvtx_open *o)
{
	if (o)
		tables_freed++;
	__real_nvtx_open_destroy(o);
}

/* ---- CUPTI: what was subscribed and enabled ---- */

static CUpti_CallbackFunc subscribed;
static CUptiResult subscribe_result;
static int unsubscribes;

static CUptiResult subscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc fn, void *userdata)
{
	if (subscribe_result != CUPTI_SUCCESS)
		return subscribe_result;
	*s = SUBSCRIBER;
	subscribed = fn;
	return CUPTI_SUCCESS;
}

static CUptiResult unsubscribe(CUpti_SubscriberHandle s)
{
	assert_ptr_equal(s, SUBSCRIBER);
	unsubscribes++;
	subscribed = NULL;
	return CUPTI_SUCCESS;
}

const struct cupti_real *cupti_real(void)
{
	static const struct cupti_real real = { .Subscribe = subscribe, .Unsubscribe = unsubscribe };
	return &real;
}

/* Every enabling call (a driver call's callback, the driver allocations',
 * a domain) counts; the refuse_enable-th (from 1) fails. */
static int enables, refuse_enable;
static CUpti_CallbackId driver_cbids[256];
static size_t n_driver_cbids;
static bool driver_allocs_on, domain_on[CUPTI_CB_DOMAIN_SIZE];

static CUptiResult next_enable(CUpti_SubscriberHandle s)
{
	assert_ptr_equal(s, SUBSCRIBER);
	return ++enables == refuse_enable ? CUPTI_ERROR_INVALID_PARAMETER : CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle s, CUpti_CallbackDomain domain,
					 CUpti_CallbackId cbid)
{
	CUptiResult r = next_enable(s);
	assert_int_equal(enable, 1);
	assert_int_equal(domain, CUPTI_CB_DOMAIN_DRIVER_API);
	if (r == CUPTI_SUCCESS) {
		assert_true(n_driver_cbids < sizeof driver_cbids / sizeof driver_cbids[0]);
		driver_cbids[n_driver_cbids++] = cbid;
	}
	return r;
}

CUptiResult driver_allocs_enable(CUpti_SubscriberHandle s, const char *consequence)
{
	CUptiResult r = next_enable(s);
	driver_allocs_on = r == CUPTI_SUCCESS;
	return r;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle s, CUpti_CallbackDomain domain)
{
	CUptiResult r = next_enable(s);
	assert_int_equal(enable, 1);
	domain_on[domain] = r == CUPTI_SUCCESS;
	return r;
}

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext ctx, uint32_t *id)
{
	return CUPTI_ERROR_NOT_INITIALIZED;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext ctx, CUstream stream, uint8_t per_thread, uint32_t *id)
{
	return CUPTI_ERROR_NOT_INITIALIZED;
}

/* ---- the driver calls subscribed to, by kind ---- */

const CUpti_CallbackId launch_cbids[] = { CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
					  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx };
const int launch_ncbids = 2;
const CUpti_CallbackId stream_call_cbids[] = { CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync };
const int stream_call_ncbids = 1;
const CUpti_CallbackId graph_cbids[] = { CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch };
const int graph_ncbids = 1;

/* ---- the trace writer: the rows written, names by interned id ---- */

trace_writer *rec_writer;
struct gate rec_gate;

static const char *names[32];
static size_t n_names;

static int64_t intern(const char *s)
{
	for (size_t i = 0; i < n_names; i++)
		if (strcmp(names[i], s) == 0)
			return (int64_t)i + 1;
	assert_true(n_names < sizeof names / sizeof names[0]);
	names[n_names++] = s;
	return (int64_t)n_names;
}

static const char *name_of(int64_t id)
{
	assert_true(id >= 1 && (size_t)id <= n_names);
	return names[id - 1];
}

/* The next this many interns fail, as the writer's does out of memory. */
static int interns_failing;

int64_t trace_writer_intern(trace_writer *w, const char *s)
{
	if (interns_failing > 0) {
		interns_failing--;
		return 0;
	}
	return intern(s);
}

int64_t trace_writer_intern_message(trace_writer *w, const char *s)
{
	return intern(s);
}

static struct trace_nvtx ranges[16];
static size_t n_ranges;

void trace_writer_nvtx(trace_writer *w, const struct trace_nvtx *r)
{
	assert_true(n_ranges < sizeof ranges / sizeof ranges[0]);
	ranges[n_ranges++] = *r;
}

static struct trace_launch launch_row;
static struct trace_kernel_arg launch_arg;
static int launch_rows;

void trace_writer_launch(trace_writer *w, const struct trace_launch *l)
{
	launch_row = *l;
	if (l->nargs)
		launch_arg = l->args[0];
	launch_rows++;
}

static struct trace_write_dst write_rows[8];
static size_t n_write_rows;

void trace_writer_write_dst(trace_writer *w, const struct trace_write_dst *d)
{
	assert_true(n_write_rows < sizeof write_rows / sizeof write_rows[0]);
	write_rows[n_write_rows++] = *d;
}

void trace_writer_meta(trace_writer *w, const char *key, const char *value) {}
void trace_writer_stream(trace_writer *w, const struct trace_stream *s) {}
void trace_writer_alloc(trace_writer *w, const struct trace_alloc *a) {}
void trace_writer_free(trace_writer *w, uint64_t alloc_id, uint64_t free_ns, uint32_t thread_id) {}

/* ---- the recorder's other parts: its clock and thread, set by a test ---- */

static uint64_t now;
static uint32_t tid = 1;

uint64_t rec_now(void) { return now; }
uint32_t rec_tid(void) { return tid; }
void rec_meta_u64(const char *key, uint64_t v) {}
void rec_activity_enable_um(void) {}
void rec_activity_hand_over(void) {}

/* ---- the launches: one kernel, one pointer argument; captured into a
 * graph or not ---- */

#define KERNEL ((CUfunction)(uintptr_t)0xf0)

static bool capturing;
/* The kernel launch_decode names; another than KERNEL misses the thread's
 * name cache (rec_callbacks.c, name_id). */
static CUfunction kernel_fn = KERNEL;
static const char *kernel_name = "sgemm";

bool launch_is_kernel_cbid(CUpti_CallbackId cbid)
{
	return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
}

bool launch_decode(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, arena *a, struct addr_set *foreign,
		   struct launch_info *out)
{
	memset(out, 0, sizeof *out);
	out->name = kernel_name;
	out->function = kernel_fn;
	out->grid[0] = out->block[0] = 1;
	out->args[0] = (struct param_arg){ .param_offset = 8, .alloc = { .id = 5 }, .offset = 16 };
	out->nargs = 1;
	out->exec_id = 99;
	return launch_is_kernel_cbid(cbid);
}

bool stream_call_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	return capturing;
}

/* ---- the arena the writes land in: made by their tests' set-up ---- */

static arena *the_arena;
static uint64_t next_segment;

arena *um_alloc_arena(void)
{
	return the_arena;
}

/* ---- the rest of the injection, doing nothing ---- */

static const struct um_alloc_hooks *hooks;

void um_alloc_set_hooks(const struct um_alloc_hooks *h)
{
	hooks = h;
}

struct addr_set *um_alloc_foreign(void) { return NULL; }
CUcontext um_alloc_context(void) { return NULL; }
void um_backend_stream_destroyed(CUstream stream) {}
bool graph_cbid(CUpti_CallbackId cbid) { return false; }
void capture_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb) {}
bool capture_pytorch_cannot_capture(void) { return false; }
bool driver_allocs_cbid(CUpti_CallbackId cbid) { return false; }
void driver_allocs_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb) {}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx) { return CUDA_ERROR_NOT_INITIALIZED; }
CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) { return CUDA_ERROR_NOT_INITIALIZED; }
CUresult CUDAAPI cuCtxPopCurrent(CUcontext *ctx) { return CUDA_ERROR_NOT_INITIALIZED; }
CUresult CUDAAPI cuCtxGetDevice(CUdevice *dev) { return CUDA_ERROR_NOT_INITIALIZED; }
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) { return CUDA_ERROR_NOT_INITIALIZED; }
CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev) { return CUDA_ERROR_NOT_INITIALIZED; }

/* ---- helpers ---- */

static void reset(void)
{
	tables_made = tables_freed = 0;
	subscribed = NULL;
	subscribe_result = CUPTI_SUCCESS;
	unsubscribes = 0;
	enables = refuse_enable = 0;
	n_driver_cbids = 0;
	driver_allocs_on = false;
	memset(domain_on, 0, sizeof domain_on);
	hooks = NULL;
	n_ranges = 0;
	launch_rows = 0;
	n_write_rows = 0;
	interns_failing = 0;
	capturing = false;
	kernel_fn = KERNEL;
	kernel_name = "sgemm";
	now = 0;
	tid = 1;
}

static int setup(void **state)
{
	reset();
	return 0;
}

/* For the callbacks' tests: a fresh start, with nothing open. */
static int setup_started(void **state)
{
	reset();
	CUpti_SubscriberHandle sub;
	return rec_callbacks_start(&sub) == CUPTI_SUCCESS ? 0 : -1;
}

/* NVTX call cbid on thread thread at time t, as CUPTI hands it over. */
static void nvtx_call(CUpti_CallbackId cbid, uint32_t thread, uint64_t t, const void *params, const void *ret)
{
	assert_true(domain_on[CUPTI_CB_DOMAIN_NVTX]);
	CUpti_NvtxData d = { .functionParams = params, .functionReturnValue = ret };
	tid = thread;
	now = t;
	subscribed(NULL, CUPTI_CB_DOMAIN_NVTX, cbid, &d);
}

static void push(uint32_t thread, uint64_t t, const char *name)
{
	nvtxRangePushA_params p = { name };
	nvtx_call(CUPTI_CBID_NVTX_nvtxRangePushA, thread, t, &p, NULL);
}

static void pop(uint32_t thread, uint64_t t)
{
	nvtx_call(CUPTI_CBID_NVTX_nvtxRangePop, thread, t, NULL, NULL);
}

static void start(uint32_t thread, uint64_t t, const char *name, nvtxRangeId_t id)
{
	nvtxRangeStartA_params p = { name };
	nvtx_call(CUPTI_CBID_NVTX_nvtxRangeStartA, thread, t, &p, &id);
}

static void end(uint32_t thread, uint64_t t, nvtxRangeId_t id)
{
	nvtxRangeEnd_params p = { id };
	nvtx_call(CUPTI_CBID_NVTX_nvtxRangeEnd, thread, t, &p, NULL);
}

static void assert_range(size_t i, const char *name, uint32_t thread, uint64_t start_ns, uint64_t end_ns)
{
	assert_true(i < n_ranges);
	assert_string_equal(name_of(ranges[i].name_id), name);
	assert_int_equal(ranges[i].thread_id, thread);
	assert_int_equal(ranges[i].start_ns, start_ns);
	assert_int_equal(ranges[i].end_ns, end_ns);
}

/* Whether the start enabled the driver call cbid's callback. */
static bool enabled(CUpti_CallbackId cbid)
{
	return cbid_index(driver_cbids, n_driver_cbids, cbid) >= 0;
}

/* Driver call cbid's callback at site, as CUPTI hands it over: only for
 * a call the start enabled. */
static void driver_call(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site, uint32_t correlation,
			const void *params)
{
	assert_true(enabled(cbid));
	CUpti_CallbackData cb = { .callbackSite = site, .correlationId = correlation, .functionParams = params };
	subscribed(NULL, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cb);
}

static void launch(void)
{
	driver_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, 42, NULL);
}

/* ---- the set-up ---- */

/* Whether the recorder must see the driver call cbid: a launch, a call
 * that queues work on a stream, a graph's, or one that writes device
 * memory other than through a kernel (write_calls.h). */
static bool wanted(CUpti_CallbackId cbid)
{
	static const uint64_t params[16]; /* room for any call's destination */
	CUdeviceptr dst;
	return cbid_index(launch_cbids, (size_t)launch_ncbids, cbid) >= 0 ||
	       cbid_index(stream_call_cbids, (size_t)stream_call_ncbids, cbid) >= 0 ||
	       cbid_index(graph_cbids, (size_t)graph_ncbids, cbid) >= 0 ||
	       write_call_dst(cbid, params, &dst) != WRITE_NONE;
}

/* Every list of driver calls (and no other call), the driver
 * allocations, the resource and NVTX domains; then the allocator's
 * hooks. */
static void a_start_enables_every_callback(void **state)
{
	CUpti_SubscriberHandle sub;
	assert_int_equal(rec_callbacks_start(&sub), CUPTI_SUCCESS);
	assert_ptr_equal(sub, SUBSCRIBER);
	assert_non_null(subscribed);
	for (CUpti_CallbackId cbid = 0; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++)
		if (enabled(cbid) != wanted(cbid))
			fail_msg("driver call %u: enabled %d, wanted %d", cbid, enabled(cbid), wanted(cbid));
	assert_true(enabled(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2));
	assert_true(driver_allocs_on);
	assert_true(domain_on[CUPTI_CB_DOMAIN_RESOURCE]);
	assert_true(domain_on[CUPTI_CB_DOMAIN_NVTX]);
	assert_int_equal(enables, n_driver_cbids + 3);
	assert_non_null(hooks);
	assert_non_null(hooks->on_alloc);
	assert_non_null(hooks->on_free);
	assert_non_null(hooks->on_device_reset);
	assert_int_equal(unsubscribes, 0);
	assert_int_equal(tables_made, 1);
	assert_int_equal(tables_freed, 0);
}

/* The program's own profiler holds CUPTI: the start fails with CUPTI's
 * error and leaves nothing behind, and a later one works. */
static void a_refused_subscription_leaves_nothing(void **state)
{
	CUpti_SubscriberHandle sub;
	subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	assert_int_equal(rec_callbacks_start(&sub), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	assert_int_equal(enables, 0);
	assert_int_equal(unsubscribes, 0);
	assert_null(hooks);
	assert_int_equal(tables_made, 1);
	assert_int_equal(tables_freed, 1);

	subscribe_result = CUPTI_SUCCESS;
	assert_int_equal(rec_callbacks_start(&sub), CUPTI_SUCCESS);
	assert_non_null(hooks);
	assert_int_equal(tables_made, 2);
	assert_int_equal(tables_freed, 1);
}

/* Whichever enabling CUPTI refuses, none is tried after it, the
 * subscription is given back and nothing is left behind. */
static void a_refused_enable_leaves_nothing(void **state)
{
	/* As many as a start that succeeds makes. */
	CUpti_SubscriberHandle started;
	assert_int_equal(rec_callbacks_start(&started), CUPTI_SUCCESS);
	const int steps = enables;
	for (int refused = 1; refused <= steps; refused++) {
		reset();
		refuse_enable = refused;
		CUpti_SubscriberHandle sub;
		assert_int_equal(rec_callbacks_start(&sub), CUPTI_ERROR_INVALID_PARAMETER);
		assert_int_equal(enables, refused);
		assert_int_equal(unsubscribes, 1);
		assert_null(subscribed);
		assert_null(hooks);
		assert_int_equal(tables_made, 1);
		assert_int_equal(tables_freed, 1);
	}
}

/* A start undone (the activity's start failed, before the gate opened):
 * the subscription given back, the NVTX table freed, and a start after it
 * works. */
static void a_stop_undoes_a_start(void **state)
{
	CUpti_SubscriberHandle sub;
	assert_int_equal(rec_callbacks_start(&sub), CUPTI_SUCCESS);
	rec_callbacks_stop(sub);
	assert_int_equal(unsubscribes, 1);
	assert_null(subscribed);
	assert_int_equal(tables_made, 1);
	assert_int_equal(tables_freed, 1);
	assert_int_equal(rec_callbacks_start(&sub), CUPTI_SUCCESS);
	assert_int_equal(tables_made, 2);
	assert_int_equal(tables_freed, 1);
}

/* ---- NVTX ---- */

/* A pop closes the newest range its own thread pushed, and writes it; a
 * pop with none open writes nothing. */
static void pushed_ranges_nest_per_thread(void **state)
{
	push(1, 10, "step");
	push(2, 20, "loader");
	push(1, 30, "forward");
	pop(1, 40);
	pop(2, 50);
	pop(1, 60);
	pop(1, 70);
	assert_int_equal(n_ranges, 3);
	assert_range(0, "forward", 1, 30, 40);
	assert_range(1, "loader", 2, 20, 50);
	assert_range(2, "step", 1, 10, 60);
}

/* A started range is named by the ID its start returned, and may end on
 * another thread; a start that returned nothing opens nothing. */
static void started_ranges_end_by_id(void **state)
{
	start(1, 10, "epoch", 7);
	start(1, 20, "batch", 8);
	nvtxRangeStartA_params lost = { "lost" };
	nvtx_call(CUPTI_CBID_NVTX_nvtxRangeStartA, 1, 25, &lost, NULL);
	end(2, 30, 7);
	end(2, 40, 9);
	assert_int_equal(n_ranges, 1);
	assert_range(0, "epoch", 1, 10, 30);
}

/* An Ex form is named by its ASCII message; a wide one is not trusted
 * (rec_callbacks.c, attribute_name), and the range is named "". */
static void ex_ranges_are_named_by_ascii_only(void **state)
{
	nvtxEventAttributes_t ascii = { .version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
					.messageType = NVTX_MESSAGE_TYPE_ASCII, .message.ascii = "ascii" };
	nvtxEventAttributes_t wide = ascii;
	wide.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	wide.message.unicode = L"wide";
	nvtxRangePushEx_params p = { &ascii };
	nvtxRangeStartEx_params s = { &wide };
	nvtxRangeId_t id = 3;
	nvtx_call(CUPTI_CBID_NVTX_nvtxRangePushEx, 1, 10, &p, NULL);
	nvtx_call(CUPTI_CBID_NVTX_nvtxRangeStartEx, 1, 20, &s, &id);
	pop(1, 30);
	end(1, 40, 3);
	assert_int_equal(n_ranges, 2);
	assert_range(0, "ascii", 1, 10, 30);
	assert_range(1, "", 1, 20, 40);
}

/* At the end of the recording the ranges still open are written, oldest
 * first, as never closed (end 0), and once. */
static void finish_writes_open_ranges_once(void **state)
{
	push(1, 10, "step");
	start(2, 20, "epoch", 7);
	rec_callbacks_finish();
	assert_int_equal(n_ranges, 2);
	assert_range(0, "step", 1, 10, 0);
	assert_range(1, "epoch", 2, 20, 0);
	rec_callbacks_finish();
	assert_int_equal(n_ranges, 2);
}

/* Once the exit path has shut the gate, callbacks record nothing. */
static void a_shut_gate_records_nothing(void **state)
{
	gate_shut(&rec_gate);
	push(1, 10, "late");
	gate_open(&rec_gate);
	pop(1, 20);
	rec_callbacks_finish();
	assert_int_equal(n_ranges, 0);
}

/* ---- launches ---- */

/* A launch is written with its pointer arguments; one captured into a
 * CUDA graph runs nothing, and is only counted. */
static void captured_launches_are_counted_not_written(void **state)
{
	uint64_t captured = rec_callbacks_captured_launches();
	launch();
	assert_int_equal(launch_rows, 1);
	assert_string_equal(name_of(launch_row.name_id), "sgemm");
	assert_int_equal(launch_row.correlation_id, 42);
	assert_int_equal(launch_row.exec_id, 99);
	assert_int_equal(launch_row.nargs, 1);
	assert_int_equal(launch_arg.param_offset, 8);
	assert_int_equal(launch_arg.alloc_id, 5);
	assert_int_equal(launch_arg.offset, 16);
	assert_int_equal(rec_callbacks_captured_launches(), captured);

	capturing = true;
	launch();
	assert_int_equal(launch_rows, 1);
	assert_int_equal(rec_callbacks_captured_launches(), captured + 1);
}

/* A name the writer could not intern (out of memory, counted as dropped)
 * is asked for again at the kernel's next launch: the thread's cache kept
 * its 0, and every later launch of the kernel on that thread named no
 * string. */
static void a_failed_name_is_not_cached(void **state)
{
	kernel_fn = (CUfunction)(uintptr_t)0x1f0;
	kernel_name = "relu";
	interns_failing = 1;
	launch();
	assert_int_equal(launch_rows, 1);
	assert_int_equal(launch_row.name_id, 0);
	launch();
	assert_int_equal(launch_rows, 2);
	assert_string_equal(name_of(launch_row.name_id), "relu");
}

/* ---- writes ---- */

#define MIB (1ULL << 20)

/* The allocations the writes' tests write into: ids 1 and 2. */
static struct arena_alloc held[2];

/* For the writes' tests: a fresh start, and an arena holding two
 * allocations. */
static int setup_writes(void **state)
{
	next_segment = 1ULL << 40;
	if (setup_started(state) != 0 || !(the_arena = fake_arena_create(&next_segment)))
		return -1;
	for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
		if (arena_alloc(the_arena, 4 * MIB, &held[i]) != ARENA_OK)
			return -1;
	return 0;
}

static int teardown_writes(void **state)
{
	arena_destroy(the_arena);
	the_arena = NULL;
	return 0;
}

static void assert_write_row(size_t i, uint32_t correlation, uint64_t address, uint64_t alloc_id)
{
	assert_true(i < n_write_rows);
	assert_int_equal(write_rows[i].correlation_id, correlation);
	assert_int_equal(write_rows[i].address, address);
	assert_int_equal(write_rows[i].alloc_id, alloc_id);
}

/* A memset gets one row at its entry, under its correlation ID, naming
 * the allocation that holds its destination; one past every allocation
 * names none (0, stored as NULL). */
static void a_memset_names_the_allocation_it_writes(void **state)
{
	cuMemsetD8_v2_params in = { held[1].address + 4096, 0xab, 16 };
	cuMemsetD8_v2_params past = { held[1].address + held[1].size, 0xab, 16 };
	driver_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, CUPTI_API_ENTER, 70, &in);
	driver_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, CUPTI_API_EXIT, 70, &in);
	driver_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, CUPTI_API_ENTER, 71, &past);
	assert_int_equal(n_write_rows, 2);
	assert_write_row(0, 70, in.dstDevice, held[1].id);
	assert_write_row(1, 71, past.dstDevice, 0);
}

/* A stream memory operation that writes a word names its address, which
 * its parameters keep after the stream. */
static void a_word_write_names_its_address(void **state)
{
	cuStreamWriteValue32_params p = { NULL, held[0].address + 8, 1, 0 };
	driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32, CUPTI_API_ENTER, 72, &p);
	assert_int_equal(n_write_rows, 1);
	assert_write_row(0, 72, p.addr, held[0].id);
}

/* A 2-D copy's destination sits in its descriptor: it gets no row, which
 * umplan takes as a write that may have gone anywhere. */
static void an_unknown_destination_gets_no_row(void **state)
{
	CUDA_MEMCPY2D copy = { .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = held[0].address,
			       .WidthInBytes = 64, .Height = 2 };
	cuMemcpy2D_v2_params p = { &copy };
	driver_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2, CUPTI_API_ENTER, 73, &p);
	assert_int_equal(n_write_rows, 0);
}

/* A memset captured into a CUDA graph writes when the graph runs, under
 * the graph launch's correlation ID: no row. Nor is one written once the
 * exit path has shut the gate. */
static void captured_or_late_writes_get_no_row(void **state)
{
	cuMemsetD8Async_params p = { held[0].address, 0, 16, NULL };
	capturing = true;
	driver_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, CUPTI_API_ENTER, 74, &p);
	capturing = false;
	gate_shut(&rec_gate);
	driver_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, CUPTI_API_ENTER, 75, &p);
	gate_open(&rec_gate);
	assert_int_equal(n_write_rows, 0);
	driver_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, CUPTI_API_ENTER, 76, &p);
	assert_int_equal(n_write_rows, 1);
	assert_write_row(0, 76, p.dstDevice, held[0].id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(a_start_enables_every_callback, setup),
		cmocka_unit_test_setup(a_refused_subscription_leaves_nothing, setup),
		cmocka_unit_test_setup(a_refused_enable_leaves_nothing, setup),
		cmocka_unit_test_setup(a_stop_undoes_a_start, setup),
		cmocka_unit_test_setup(pushed_ranges_nest_per_thread, setup_started),
		cmocka_unit_test_setup(started_ranges_end_by_id, setup_started),
		cmocka_unit_test_setup(ex_ranges_are_named_by_ascii_only, setup_started),
		cmocka_unit_test_setup(finish_writes_open_ranges_once, setup_started),
		cmocka_unit_test_setup(a_shut_gate_records_nothing, setup_started),
		cmocka_unit_test_setup(captured_launches_are_counted_not_written, setup_started),
		cmocka_unit_test_setup(a_failed_name_is_not_cached, setup_started),
		cmocka_unit_test_setup_teardown(a_memset_names_the_allocation_it_writes, setup_writes,
						teardown_writes),
		cmocka_unit_test_setup_teardown(a_word_write_names_its_address, setup_writes, teardown_writes),
		cmocka_unit_test_setup_teardown(an_unknown_destination_gets_no_row, setup_writes, teardown_writes),
		cmocka_unit_test_setup_teardown(captured_or_late_writes_get_no_row, setup_writes, teardown_writes),
	};
	return cmocka_run_group_tests_name("rec_callbacks", tests, NULL, NULL);
}
