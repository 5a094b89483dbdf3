/*
 * Unit tests for what the replayer's callbacks tell the engine
 * (replay/cuda/rp_callbacks.c), linked with fakes of CUPTI, of the rest of
 * the injection and of the engine's calls: no GPU, no CUPTI. Callbacks are
 * made up as CUPTI hands them over.
 *
 * A write the engine does not see leaves an allocation fresh, and a fresh
 * allocation alone in a discarded block gets a discard-and-prefetch before
 * its first kernel, which destroys what the write put there
 * (docs/replay.md, "What discard may touch").
 */
#include "testutil.h"

#include <stdatomic.h>

#include <cuda.h>
#include <cupti.h>

#include "arena.h"
#include "common/cuda/capture.h"
#include "common/cuda/cupti_guard.h"
#include "common/cuda/cupti_um.h"
#include "common/cuda/driver_allocs.h"
#include "common/cuda/launch_info.h"
#include "common/cuda/stream_calls.h"
#include "common/cuda/um_alloc.h"
#include "common/cuda/um_backend.h"
#include "replay/cuda/rp.h"

/* ---- the allocation every write lands in ---- */

#define ALLOC_ID 7
#define ALLOC_ADDRESS ((uint64_t)1 << 40)
#define ALLOC_BYTES (4ULL << 20)

bool arena_lookup(arena *a, uint64_t address, struct arena_alloc *out)
{
	if (address < ALLOC_ADDRESS || address >= ALLOC_ADDRESS + ALLOC_BYTES)
		return false;
	*out = (struct arena_alloc){ ALLOC_ID, ALLOC_ADDRESS, ALLOC_BYTES, ALLOC_BYTES };
	return true;
}

arena *um_alloc_arena(void)
{
	return (arena *)(uintptr_t)0xa000;
}

/* ---- the engine: which allocations it was told were written ---- */

static uint64_t written_id;
static size_t unknown_writes;

void engine_on_write(engine *e, uint64_t id)
{
	written_id = id;
}

void engine_on_unknown_write(engine *e)
{
	unknown_writes++;
}

bool engine_follows_launches(engine *e)
{
	return true;
}

bool engine_on_launch(engine *e, uint64_t exec_id, uint64_t shape_id, const struct engine_access *acc,
		      size_t n)
{
	return false;
}

void engine_after_launch(engine *e)
{
}

void engine_get_stats(engine *e, struct engine_stats *out)
{
	memset(out, 0, sizeof *out);
}

bool engine_on_alloc(engine *e, uint64_t id, uint64_t address, uint64_t size)
{
	return true;
}

bool engine_on_managed_alloc(engine *e, uint64_t id, uint64_t address, uint64_t size)
{
	return true;
}

void engine_on_free(engine *e, uint64_t id)
{
}

void engine_stop(engine *e)
{
}

/* ---- CUPTI: the subscriber's callback is kept, so that calls can be made up ---- */

static CUpti_CallbackFunc subscribed;

static CUptiResult subscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc fn, void *userdata)
{
	*s = (CUpti_SubscriberHandle)(uintptr_t)0x5b;
	subscribed = fn;
	return CUPTI_SUCCESS;
}

static CUptiResult unsubscribe(CUpti_SubscriberHandle s)
{
	subscribed = NULL;
	return CUPTI_SUCCESS;
}

const struct cupti_real *cupti_real(void)
{
	static const struct cupti_real real = { .Subscribe = subscribe, .Unsubscribe = unsubscribe };
	return &real;
}

/* The driver calls subscribed to: CUPTI calls back only for those. */
static CUpti_CallbackId enabled[512];
static size_t n_enabled;

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
				CUpti_CallbackId cbid)
{
	if (enable && domain == CUPTI_CB_DOMAIN_DRIVER_API && n_enabled < sizeof enabled / sizeof enabled[0])
		enabled[n_enabled++] = cbid;
	return CUPTI_SUCCESS;
}

static bool is_enabled(CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < n_enabled; i++)
		if (enabled[i] == cbid)
			return true;
	return false;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = "CUPTI_ERROR_FAKE";
	return CUPTI_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
	return CUDA_SUCCESS;
}

/* ---- the rest of the injection, doing nothing ---- */

engine *rp_engine = (engine *)(uintptr_t)0xe000;
atomic_bool rp_active = true;
char *rp_plan_path;

const CUpti_CallbackId graph_cbids[] = { 0 };
const int graph_ncbids = 0;
const CUpti_CallbackId launch_cbids[] = { 0 };
const int launch_ncbids = 0;
const CUpti_CallbackId stream_call_cbids[] = { 0 };
const int stream_call_ncbids = 0;

bool graph_cbid(CUpti_CallbackId cbid) { return false; }
void capture_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb) {}
bool capture_pytorch_cannot_capture(void) { return false; }
bool capture_mode_global(void) { return true; }
void capture_watch(void) {}
enum cupti_um_state cupti_um_enable(const char **why) { return CUPTI_UM_ENABLED_WITH_FAULTS; }
CUptiResult driver_allocs_enable(CUpti_SubscriberHandle subscriber, const char *consequence) { return CUPTI_SUCCESS; }
bool driver_allocs_cbid(CUpti_CallbackId cbid) { return false; }
void driver_allocs_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb) {}
bool launch_is_kernel_cbid(CUpti_CallbackId cbid) { return false; }
bool launch_decode(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, arena *a, struct addr_set *foreign,
		   struct launch_info *out) { return false; }
bool stream_call_note(CUpti_CallbackId cbid, const CUpti_CallbackData *cb) { return false; }
void um_alloc_set_hooks(const struct um_alloc_hooks *hooks) {}
CUcontext um_alloc_context(void) { return NULL; }
struct addr_set *um_alloc_foreign(void) { return NULL; }
void um_alloc_get_stats(struct um_alloc_stats *out) { memset(out, 0, sizeof *out); }
void um_backend_stream_destroyed(CUstream stream) {}
void um_backend_launches_seen(bool from_start) {}
void um_backend_launches_unseen(void) {}
uint64_t rp_now(void) { return 0; }
CUptiResult rp_activity_start(bool kernel_times) { return CUPTI_SUCCESS; }
void rp_activity_note_launch(uint32_t correlation) {}
void rp_activity_hand_over(void) {}
void rp_activity_keep_until(uint64_t ns) {}
void rp_check_device_fits(void) {}
void rp_exec_end(void) {}
void rp_exec_forget_discards(uint64_t address, uint64_t bytes) {}
bool rp_exec_in_current_context(void) { return false; }
bool rp_exec_own_call(void) { return false; }
void rp_exec_set_launch_stream(CUstream s) {}
void rp_exec_stream_destroyed(void) {}
void rp_exec_wait_discards(uint64_t address, uint64_t bytes) {}
void rp_exec_wait_issued(void) {}
void rp_residency_start(void) {}
uint64_t rp_residency_stop(void) { return 0; }

/* ---- helpers ---- */

static int setup(void **state)
{
	if (!subscribed && rp_callbacks_start(false) != CUPTI_SUCCESS)
		return -1;
	written_id = 0;
	unknown_writes = 0;
	return subscribed ? 0 : -1;
}

/* Makes the entry callback of driver call cbid with params, as CUPTI
 * would: only for a call subscribed to. */
static void enter(CUpti_CallbackId cbid, const char *name, const void *params)
{
	if (!is_enabled(cbid))
		return;
	CUpti_CallbackData cb = { 0 };
	cb.callbackSite = CUPTI_API_ENTER;
	cb.functionName = name;
	cb.functionParams = params;
	subscribed(NULL, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cb);
}

/* ---- tests ---- */

/* The calls of the legacy stream and of the per-thread one alike: a
 * program built with per-thread default streams makes the _ptds ones. */
static void memsets_in_2d_are_writes(void **state)
{
	const CUdeviceptr dst = ALLOC_ADDRESS + (1 << 20);
	cuMemsetD2D8_v2_params d8 = { dst, 256, 1, 256, 4 };
	cuMemsetD2D16_v2_params d16 = { dst, 256, 1, 128, 4 };
	cuMemsetD2D32_v2_params d32 = { dst, 256, 1, 64, 4 };
	cuMemsetD2D8_v2_ptds_params d8p = { dst, 256, 1, 256, 4 };
	cuMemsetD2D16_v2_ptds_params d16p = { dst, 256, 1, 128, 4 };
	cuMemsetD2D32_v2_ptds_params d32p = { dst, 256, 1, 64, 4 };
	const struct {
		CUpti_CallbackId cbid;
		const char *name;
		const void *params;
	} calls[] = {
		{ CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8_v2, "cuMemsetD2D8_v2", &d8 },
		{ CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16_v2, "cuMemsetD2D16_v2", &d16 },
		{ CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32_v2, "cuMemsetD2D32_v2", &d32 },
		{ CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8_v2_ptds, "cuMemsetD2D8_v2_ptds", &d8p },
		{ CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16_v2_ptds, "cuMemsetD2D16_v2_ptds", &d16p },
		{ CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32_v2_ptds, "cuMemsetD2D32_v2_ptds", &d32p },
	};
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		written_id = 0;
		enter(calls[i].cbid, calls[i].name, calls[i].params);
		if (written_id != ALLOC_ID)
			fail_msg("%s into allocation %d was not told to the engine", calls[i].name, ALLOC_ID);
	}
	assert_int_equal(unknown_writes, 0);
}

/* A write outside the arena's memory names no allocation; the same call
 * into the allocation's last bytes names it (else, the call not followed,
 * nothing would be named either way). */
static void a_write_elsewhere_names_none(void **state)
{
	cuMemsetD8_v2_params in = { ALLOC_ADDRESS + ALLOC_BYTES - 16, 0, 16 };
	enter(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, "cuMemsetD8_v2", &in);
	assert_int_equal(written_id, ALLOC_ID);
	written_id = 0;
	cuMemsetD8_v2_params p = { ALLOC_ADDRESS + ALLOC_BYTES, 0, 16 };
	enter(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, "cuMemsetD8_v2", &p);
	assert_int_equal(written_id, 0);
}

/* A copy names its destination first, as a memset does; a stream memory
 * operation that writes a word names it after the stream, in each of its
 * eight forms' one place; a 2-D copy's sits in its descriptor. */
static void copies_and_word_writes_are_writes(void **state)
{
	const CUdeviceptr dst = ALLOC_ADDRESS + 64;
	cuMemcpyHtoDAsync_v2_params htod = { dst, "host", 16, NULL };
	enter(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2", &htod);
	assert_int_equal(written_id, ALLOC_ID);
	written_id = 0;
	cuStreamWriteValue64_v2_ptsz_params word = { NULL, dst, 1, 0 };
	enter(CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_v2_ptsz, "cuStreamWriteValue64_v2_ptsz", &word);
	assert_int_equal(written_id, ALLOC_ID);
	written_id = 0;
	CUDA_MEMCPY2D copy = { .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = dst };
	cuMemcpy2DAsync_v2_params in_2d = { &copy, NULL };
	enter(CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2, "cuMemcpy2DAsync_v2", &in_2d);
	assert_int_equal(written_id, 0);
	assert_int_equal(unknown_writes, 1);
}

/* A batched decompression writes the destinations its descriptors name,
 * which the engine cannot tell: after one, no allocation is fresh, as
 * after a batched copy (a discard-and-prefetch of a fresh allocation it
 * decompressed into would destroy the data). */
static void a_batched_decompression_is_an_unknown_write(void **state)
{
	cuMemBatchDecompressAsync_params p = { .count = 1 };
	cuMemBatchDecompressAsync_ptsz_params ptsz = { .count = 1 };
	enter(CUPTI_DRIVER_TRACE_CBID_cuMemBatchDecompressAsync, "cuMemBatchDecompressAsync", &p);
	enter(CUPTI_DRIVER_TRACE_CBID_cuMemBatchDecompressAsync_ptsz, "cuMemBatchDecompressAsync_ptsz", &ptsz);
	assert_int_equal(unknown_writes, 2);
	assert_int_equal(written_id, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(memsets_in_2d_are_writes, setup),
		cmocka_unit_test_setup(a_write_elsewhere_names_none, setup),
		cmocka_unit_test_setup(copies_and_word_writes_are_writes, setup),
		cmocka_unit_test_setup(a_batched_decompression_is_an_unknown_write, setup),
	};
	return cmocka_run_group_tests_name("rp_callbacks", tests, NULL, NULL);
}
