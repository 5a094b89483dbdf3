/*
 * Unit test for common/cuda/cudart.c: the runtime is found where the
 * program loaded it with RTLD_LOCAL under a name of its own, as a wheel
 * ships its copy (libcudart-<hash>.so.12, soname alike), which neither
 * RTLD_NEXT nor the usual names find (tests/unit/fake_cudart.c, built
 * next to this test); and the tools' own failed runtime calls leave the
 * thread's last error as the program had it.
 */
#include "testutil.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>

#include "common/cuda/capture.h"
#include "common/cuda/cudart.h"

/* The fake capture mode (common/cuda/capture.c): relaxed between begin
 * and end. */
static bool relaxed;
static int relaxations;

bool capture_relaxed_begin(CUstreamCaptureMode *saved)
{
	*saved = CU_STREAM_CAPTURE_MODE_GLOBAL;
	relaxed = true;
	relaxations++;
	return true;
}

void capture_relaxed_end(bool begun, CUstreamCaptureMode saved)
{
	if (begun)
		relaxed = saved != CU_STREAM_CAPTURE_MODE_GLOBAL;
}

/* The fake runtime, loaded as a wheel loads its own: RTLD_LOCAL, under
 * a name of its own. */
static void *load_runtime(void)
{
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(n > 0);
	self[n] = '\0';
	snprintf(path, sizeof path, "%s/libcudart-0a1b2c3d.so.12", dirname(self));
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		fail_msg("%s", dlerror());
	return lib;
}

static void runtime_under_a_name_of_its_own(void **state)
{
	(void)state;
	void *lib = load_runtime();
	assert_null(dlopen("libcudart.so.12", RTLD_LAZY | RTLD_NOLOAD));
	const struct cudart *rt = cudart_get();
	assert_non_null(rt);
	assert_ptr_equal((void *)rt->Free, dlsym(lib, "cudaFree"));
	assert_ptr_equal((void *)rt->PeekAtLastError, dlsym(lib, "cudaPeekAtLastError"));
}

/* A tool's runtime call that fails (cudart_clean before it, cudart_quiet
 * after) leaves the thread's last error as it found it: none, or the
 * program's own, which the failure had replaced (the runtime keeps the
 * latest error). The program's is made again as the shim's refusals are,
 * in relaxed capture mode, where the runtime can be made to refuse so
 * (cudaErrorMemoryAllocation, cudaErrorInvalidValue); another stays
 * replaced by the tool's, an error still. */
static void tool_failure_leaves_the_programs_error(void **state)
{
	(void)state;
	void *lib = load_runtime();
	void (*program_failed)(int) = (void (*)(int))dlsym(lib, "fake_cudart_fail");
	assert_non_null(program_failed);
	const struct cudart *rt = cudart_get();
	assert_non_null(rt);
	rt->GetLastError();

	bool clean = cudart_clean();
	assert_true(clean);
	assert_int_equal(cudart_quiet(clean, rt->Free((void *)1)), cudaErrorInvalidDevicePointer);
	assert_int_equal(rt->PeekAtLastError(), cudaSuccess);

	const cudaError_t made_again[] = { cudaErrorMemoryAllocation, cudaErrorInvalidValue };
	for (size_t i = 0; i < sizeof made_again / sizeof made_again[0]; i++) {
		program_failed(made_again[i]);
		clean = cudart_clean();
		assert_false(clean);
		int before = relaxations;
		assert_int_equal(cudart_quiet(clean, rt->Free((void *)1)), cudaErrorInvalidDevicePointer);
		assert_int_equal(rt->GetLastError(), made_again[i]);
		assert_int_equal(relaxations, before + 1);
		assert_false(relaxed);
	}

	program_failed(cudaErrorMemoryAllocation); /* the tool's call succeeds */
	clean = cudart_clean();
	assert_int_equal(cudart_quiet(clean, rt->Free(NULL)), cudaSuccess);
	assert_int_equal(rt->GetLastError(), cudaErrorMemoryAllocation);

	program_failed(cudaErrorInvalidConfiguration); /* a launch's: not made again */
	clean = cudart_clean();
	cudart_quiet(clean, rt->Free((void *)1));
	assert_int_not_equal(rt->GetLastError(), cudaSuccess);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runtime_under_a_name_of_its_own),
		cmocka_unit_test(tool_failure_leaves_the_programs_error),
	};
	return cmocka_run_group_tests_name("cudart", tests, NULL, NULL);
}
