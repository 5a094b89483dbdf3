/*
 * Unit test for common/cuda/cudart.c: the runtime is found where the
 * program loaded it with RTLD_LOCAL under a name of its own, as a wheel
 * ships its copy (libcudart-<hash>.so.12, soname alike), which neither
 * RTLD_NEXT nor the usual names find (tests/unit/fake_cudart.c, built
 * next to this test).
 */
#include "testutil.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>

#include "common/cuda/cudart.h"

static void runtime_under_a_name_of_its_own(void **state)
{
	(void)state;
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(n > 0);
	self[n] = '\0';
	snprintf(path, sizeof path, "%s/libcudart-0a1b2c3d.so.12", dirname(self));
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		fail_msg("%s", dlerror());
	assert_null(dlopen("libcudart.so.12", RTLD_LAZY | RTLD_NOLOAD));
	const struct cudart *rt = cudart_get();
	assert_non_null(rt);
	assert_ptr_equal((void *)rt->Free, dlsym(lib, "cudaFree"));
	assert_ptr_equal((void *)rt->PeekAtLastError, dlsym(lib, "cudaPeekAtLastError"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runtime_under_a_name_of_its_own),
	};
	return cmocka_run_group_tests_name("cudart", tests, NULL, NULL);
}
