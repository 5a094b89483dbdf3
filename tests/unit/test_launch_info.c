/*
 * Unit tests for decoding a kernel launch (common/cuda/launch_info.c),
 * linked with a fake of the driver's parameter queries: no GPU, no driver.
 *
 * What a function's parameter words have held is learnt per context
 * (session 58): one function launched on two GPUs holds arena addresses
 * in its first GPU's launches and other words in the second's, and the
 * second's must not change how the first's launches are named (their
 * execution IDs, which the replayer matches against the plan). Also the
 * launch's shape, stream and arguments as decoded.
 */
#include "testutil.h"

#include <cupti.h>

#include "arena.h"
#include "common/cuda/launch_info.h"
#include "execid.h"
#include "fake_arena.h"

#define CONTEXT_A ((CUcontext)(uintptr_t)0xa000)
#define CONTEXT_B ((CUcontext)(uintptr_t)0xb000)
#define KERNEL ((CUfunction)(uintptr_t)0xf000)
#define PACKED_KERNEL ((CUfunction)(uintptr_t)0xf100)
#define PADDED_KERNEL ((CUfunction)(uintptr_t)0xf200)
#define STREAM ((CUstream)(uintptr_t)0x5000)
#define SEGMENT_BASE ((uint64_t)1 << 40)

/* ---- the fake driver: KERNEL takes one 8-byte parameter, PACKED_KERNEL
 * three (24 bytes), PADDED_KERNEL a 4-byte one and an 8-byte one at 8
 * (an int and a pointer, with 4 bytes of padding between) ---- */

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size)
{
	size_t n = f == KERNEL ? 1 : f == PACKED_KERNEL ? 3 : f == PADDED_KERNEL ? 2 : 0;
	if (index >= n)
		return CUDA_ERROR_INVALID_VALUE;
	*offset = 8 * index;
	*size = f == PADDED_KERNEL && index == 0 ? 4 : 8;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetParamInfo(CUkernel k, size_t index, size_t *offset, size_t *size)
{
	return CUDA_ERROR_INVALID_VALUE;
}

/* An arena over addresses nothing maps (fake_arena.h), holding one 4 KiB
 * allocation, *t: decoding only looks addresses up. */
static arena *arena_holding_one(struct arena_alloc *t)
{
	static uint64_t next; /* the arena's backend keeps a pointer to it */
	next = SEGMENT_BASE;
	arena *a = fake_arena_create(&next);
	assert_non_null(a);
	assert_int_equal(arena_alloc(a, 4096, t), ARENA_OK);
	return a;
}

/* Decodes a cuLaunchKernel of KERNEL in context with word as its
 * parameter. */
static struct launch_info decode(arena *a, CUcontext context, uint64_t word)
{
	void *params[] = { &word };
	cuLaunchKernel_params p = { .f = KERNEL, .gridDimX = 4, .gridDimY = 1, .gridDimZ = 1,
				    .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1,
				    .hStream = STREAM, .kernelParams = params };
	CUpti_CallbackData cb = { .callbackSite = CUPTI_API_ENTER, .functionParams = &p,
				  .symbolName = "scale_kernel", .context = context };
	struct launch_info out;
	assert_true(launch_decode(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb, a, NULL, &out));
	return out;
}

/* Decodes a cuLaunchKernel of f (named name, one block of 32) with its
 * parameters given packed (buffer, *size bytes; extra) or, buffer NULL,
 * through kernelParams (params). */
static struct launch_info decode_launch(arena *a, CUfunction f, const char *name, void *buffer, size_t *size,
					void **params)
{
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, size,
			  CU_LAUNCH_PARAM_END };
	cuLaunchKernel_params p = { .f = f, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
				    .blockDimY = 1, .blockDimZ = 1, .hStream = STREAM,
				    .kernelParams = buffer ? NULL : params, .extra = buffer ? extra : NULL };
	CUpti_CallbackData cb = { .callbackSite = CUPTI_API_ENTER, .functionParams = &p, .symbolName = name,
				  .context = CONTEXT_A };
	struct launch_info out;
	assert_true(launch_decode(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb, a, NULL, &out));
	return out;
}

static void a_launch_decoded(void **state)
{
	struct arena_alloc t;
	arena *a = arena_holding_one(&t);
	struct launch_info l = decode(a, CONTEXT_A, t.address + 64);
	assert_string_equal(l.name, "scale_kernel");
	assert_ptr_equal(l.stream, STREAM);
	assert_int_equal(l.grid[0], 4);
	assert_int_equal(l.block[0], 128);
	assert_int_equal(l.nargs, 1);
	assert_int_equal(l.args[0].param_offset, 0);
	assert_int_equal(l.args[0].alloc.id, t.id);
	assert_int_equal(l.args[0].offset, 64);
	assert_true(l.args[0].steady);
	/* Named by its steady word as execid_of names it (the IDs of plans
	 * recorded before launch_decode hashed the words one at a time). */
	struct execid_arg word = { 0, 4096, 64 };
	struct execid_launch id = { "scale_kernel", 0, { 4, 1, 1 }, { 128, 1, 1 }, 0, &word, 1 };
	assert_true(l.exec_id == execid_of(&id, NULL));
	assert_true(l.shape_id == execid_shape_of(&id));
	arena_destroy(a);
}

/* Context A's launches keep their pointer and their ID, whatever context
 * B's launches of the same function held in the same word. */
static void another_contexts_words_change_nothing(void **state)
{
	struct arena_alloc t;
	arena *a = arena_holding_one(&t);
	struct launch_info first = decode(a, CONTEXT_A, t.address);
	struct launch_info other = decode(a, CONTEXT_B, 0x1234); /* not an arena address */
	struct launch_info again = decode(a, CONTEXT_A, t.address);
	assert_int_equal(other.nargs, 0);
	assert_int_equal(again.nargs, 1);
	assert_true(again.args[0].steady);
	assert_true(again.exec_id == first.exec_id);
	/* In one context, the same word rules the slot out, as it should. */
	struct launch_info ruled = decode(a, CONTEXT_B, t.address);
	assert_int_equal(ruled.nargs, 0);
	arena_destroy(a);
}

/* The launch forms other than cuLaunchKernel are read from their own
 * parameter structs: cuLaunchKernelEx's shape and stream from its config,
 * the cooperative launch's from its fields. Each names the launch as a
 * cuLaunchKernel of the same shape and arguments would (the plan does not
 * care how the program launched), and a _ptsz launch on stream 0 goes to
 * the thread's default stream. */
static void other_launch_forms_decoded(void **state)
{
	struct arena_alloc t;
	arena *a = arena_holding_one(&t);
	uint64_t word = t.address + 64;
	void *params[] = { &word };
	struct launch_info plain = decode(a, CONTEXT_A, word), l;

	CUlaunchConfig config = { .gridDimX = 4, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 128, .blockDimY = 1,
				  .blockDimZ = 1, .hStream = STREAM };
	cuLaunchKernelEx_params ex = { .config = &config, .f = KERNEL, .kernelParams = params };
	CUpti_CallbackData cb = { .callbackSite = CUPTI_API_ENTER, .functionParams = &ex,
				  .symbolName = "scale_kernel", .context = CONTEXT_A };
	assert_true(launch_is_kernel_cbid(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx));
	assert_true(launch_decode(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &cb, a, NULL, &l));
	assert_ptr_equal(l.stream, STREAM);
	assert_int_equal(l.nargs, 1);
	assert_int_equal(l.args[0].alloc.id, t.id);
	assert_true(l.exec_id == plain.exec_id && l.shape_id == plain.shape_id);
	config.hStream = NULL;
	config.gridDimY = 2;
	assert_true(launch_decode(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, &cb, a, NULL, &l));
	assert_ptr_equal(l.stream, CU_STREAM_PER_THREAD);
	assert_int_equal(l.grid[1], 2);
	assert_true(l.shape_id != plain.shape_id);

	cuLaunchCooperativeKernel_params coop = { .f = KERNEL, .gridDimX = 4, .gridDimY = 1, .gridDimZ = 1,
						  .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1,
						  .sharedMemBytes = 512, .hStream = STREAM, .kernelParams = params };
	cb.functionParams = &coop;
	assert_true(launch_decode(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, &cb, a, NULL, &l));
	assert_ptr_equal(l.stream, STREAM);
	assert_int_equal(l.shared_mem, 512);
	assert_int_equal(l.nargs, 1);
	assert_int_equal(l.args[0].offset, 64);

	/* Not a launch: nothing decoded. */
	assert_false(launch_is_kernel_cbid(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2));
	assert_false(launch_decode(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &cb, a, NULL, &l));
	arena_destroy(a);
}

/* Parameters passed packed in one buffer (cuLaunchKernel's extra, no
 * kernelParams) are read by the kernel's layout: an arena address found
 * at its offset in the buffer. */
static void packed_parameters_scanned(void **state)
{
	struct arena_alloc t;
	arena *a = arena_holding_one(&t);
	uint64_t buffer[3] = { 7, t.address + 128, 0 };
	size_t size = sizeof buffer;
	struct launch_info l = decode_launch(a, PACKED_KERNEL, "packed_kernel", buffer, &size, NULL);
	assert_int_equal(l.nargs, 1);
	assert_int_equal(l.args[0].param_offset, 8);
	assert_int_equal(l.args[0].alloc.id, t.id);
	assert_int_equal(l.args[0].offset, 128);
	arena_destroy(a);
}

/* A packed buffer's size is the program's word: bytes past the kernel's
 * parameter layout are none of its parameters (the driver copies the
 * layout's bytes, or refuses a size that is not the layout's), and a
 * size larger than the buffer would have them read past its end. An
 * arena address there is not scanned. */
static void packed_parameters_read_within_the_layout(void **state)
{
	struct arena_alloc t;
	arena *a = arena_holding_one(&t);
	uint64_t buffer[4] = { 7, t.address + 128, 0, t.address + 256 };
	size_t size = sizeof buffer; /* 32: the layout ends at 24 */
	struct launch_info l = decode_launch(a, PACKED_KERNEL, "packed_kernel", buffer, &size, NULL);
	assert_int_equal(l.nargs, 1);
	assert_int_equal(l.args[0].param_offset, 8);
	/* A size short of the layout: the parameters past it are not read. */
	size = 12;
	l = decode_launch(a, PACKED_KERNEL, "packed_kernel", buffer, &size, NULL);
	assert_int_equal(l.nargs, 0);
	arena_destroy(a);
}

/* The padding of a packed buffer is whatever the program's memory held,
 * often half of an earlier pointer: an int beside such padding can read
 * as an arena address in one launch and not in the next. Scanned by
 * parameter, as kernelParams are, the padding is no word of any: the
 * launches get one execution ID, the one kernelParams give them. */
static void packed_padding_leaves_the_id_alone(void **state)
{
	struct arena_alloc t;
	arena *a = arena_holding_one(&t);
	uint64_t word = t.address + 1024, pointer = t.address + 64;
	uint32_t n = (uint32_t)word; /* the int: word's low half */
	uint64_t buffer[2] = { word, pointer }; /* padding: word's high half */
	size_t size = 16;
	struct launch_info stale = decode_launch(a, PADDED_KERNEL, "padded_kernel", buffer, &size, NULL);
	buffer[0] = n; /* the same int, its padding 0 */
	struct launch_info clean = decode_launch(a, PADDED_KERNEL, "padded_kernel", buffer, &size, NULL);
	assert_int_equal(stale.nargs, 1);
	assert_int_equal(stale.args[0].param_offset, 8);
	assert_true(stale.args[0].steady);
	assert_true(stale.exec_id == clean.exec_id);
	void *params[] = { &n, &pointer };
	struct launch_info plain = decode_launch(a, PADDED_KERNEL, "padded_kernel", NULL, NULL, params);
	assert_true(plain.exec_id == clean.exec_id);
	arena_destroy(a);
}

/* Packed parameters the driver refuses or ignores are not scanned: a
 * size given through a NULL pointer (read through, it crashed the
 * program at API entry instead of letting the driver answer), a NULL
 * buffer, and a launch with neither kernelParams nor extra (what a kernel
 * without parameters is launched with). None of them decodes an argument. */
static void packed_parameters_without_a_buffer_or_size_find_nothing(void **state)
{
	struct arena_alloc t;
	arena *a = arena_holding_one(&t);
	uint64_t buffer[1] = { t.address };
	size_t size = sizeof buffer;
	void *no_size[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, NULL,
			    CU_LAUNCH_PARAM_END };
	void *no_buffer[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, NULL, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			      CU_LAUNCH_PARAM_END };
	void **extras[] = { no_size, no_buffer, NULL };
	for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++) {
		cuLaunchKernel_params p = { .f = KERNEL, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
					    .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1, .hStream = STREAM,
					    .extra = extras[i] };
		CUpti_CallbackData cb = { .callbackSite = CUPTI_API_ENTER, .functionParams = &p,
					  .symbolName = "packed_kernel", .context = CONTEXT_A };
		struct launch_info l;
		assert_true(launch_decode(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &cb, a, NULL, &l));
		assert_int_equal(l.nargs, 0);
		assert_false(l.args_truncated);
	}
	arena_destroy(a);
}

/* A cuLaunchKernelEx without its config is the driver's to refuse: the
 * callback, which comes first, decodes nothing rather than reading
 * through the NULL (which crashed the program instead of letting the
 * driver answer it). */
static void a_launch_without_its_config_is_not_decoded(void **state)
{
	cuLaunchKernelEx_params ex = { .config = NULL, .f = KERNEL };
	CUpti_CallbackData cb = { .callbackSite = CUPTI_API_ENTER, .functionParams = &ex,
				  .symbolName = "scale_kernel", .context = CONTEXT_A };
	struct launch_info l;
	CUstream s;
	assert_false(launch_stream(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, &cb, &s));
	assert_false(launch_decode(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &cb, NULL, NULL, &l));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_launch_decoded),
		cmocka_unit_test(another_contexts_words_change_nothing),
		cmocka_unit_test(other_launch_forms_decoded),
		cmocka_unit_test(packed_parameters_scanned),
		cmocka_unit_test(packed_parameters_read_within_the_layout),
		cmocka_unit_test(packed_padding_leaves_the_id_alone),
		cmocka_unit_test(packed_parameters_without_a_buffer_or_size_find_nothing),
		cmocka_unit_test(a_launch_without_its_config_is_not_decoded),
	};
	return cmocka_run_group_tests_name("launch_info", tests, NULL, NULL);
}
