/*
 * Unit tests for the examples' PyTorch allocator on Unified Memory
 * (examples/pytorch/managed_alloc.c), with fakes of the three runtime
 * calls it makes: no GPU. The allocator is a shared object of its own,
 * built apart from umkit's libraries, so its source is compiled in here.
 * Where it ends the program, a forked child runs the call.
 */
#include "testutil.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../examples/pytorch/managed_alloc.c"

/* ---- the fakes ---- */

static cudaError_t answer;	/* what the next runtime call returns */
static void *freed;		/* the last pointer cudaFree was given */
static int calls;
static char block[64];

cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
	calls++;
	assert_int_equal(flags, cudaMemAttachGlobal);
	*p = answer == cudaSuccess && size <= sizeof block ? block : NULL;
	return answer;
}

cudaError_t cudaFree(void *p)
{
	calls++;
	freed = p;
	return answer;
}

const char *cudaGetErrorString(cudaError_t err)
{
	return err == cudaSuccess ? "no error" : "made-up failure";
}

static int setup(void **state)
{
	answer = cudaSuccess;
	freed = NULL;
	calls = 0;
	return 0;
}

/* The child's stderr, a file of the test's scratch folder. */
static char child_err[512];

/* The exit status of a child that calls the allocator with the runtime
 * answering err, at_exit (where not NULL) registered first: -1 where it
 * returned instead of ending. Its stderr goes to child_err. */
static int child_status(cudaError_t err, bool allocate, void (*at_exit)(void))
{
	test_path(child_err, sizeof child_err, "child.err");
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		answer = err;
		if (!freopen(child_err, "w", stderr))
			_exit(99);
		if (at_exit)
			atexit(at_exit);
		if (allocate)
			umkit_managed_malloc(32, 0, NULL);
		else
			umkit_managed_free(block, 32, 0, NULL);
		_exit(100);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status) == 100 ? -1 : WEXITSTATUS(status);
}

/* ---- the tests ---- */

static void empty_tensors_get_null_without_a_call(void **state)
{
	assert_null(umkit_managed_malloc(0, 0, NULL));
	assert_null(umkit_managed_malloc(-1, 0, NULL));
	umkit_managed_free(NULL, 0, 0, NULL);
	assert_int_equal(calls, 0);
}

static void tensors_come_from_managed_memory_and_go_back(void **state)
{
	void *p = umkit_managed_malloc(32, 0, NULL);
	assert_ptr_equal(p, block);
	umkit_managed_free(p, 32, 0, NULL);
	assert_ptr_equal(freed, block);
	assert_int_equal(calls, 2);
}

/* PyTorch takes a NULL as an empty tensor: a refused allocation must end
 * the program, not hand one back. */
static void a_refused_allocation_ends_the_program(void **state)
{
	assert_int_equal(child_status(cudaErrorMemoryAllocation, true, NULL), 2);
}

/* A failed context makes cudaFree fail: the program ends, where the
 * return value was dropped and it ran on. The failure is real (the child
 * returned when the fake answered cudaSuccess). */
static void a_failed_free_ends_the_program(void **state)
{
	assert_int_equal(child_status(cudaSuccess, false, NULL), -1);
	assert_int_equal(child_status(cudaErrorIllegalAddress, false, NULL), 2);
}

/* The frees made while the program ends (here by an exit handler, as by
 * destructors holding tensors) fail as well: one line, one exit, where
 * each called exit() again from inside it. */
static void free_again(void)
{
	umkit_managed_free(block, 16, 0, NULL);
	umkit_managed_free(block, 8, 0, NULL);
}

static void a_failed_free_ends_the_program_once(void **state)
{
	assert_int_equal(child_status(cudaErrorIllegalAddress, false, free_again), 2);
	size_t n;
	char *text = test_read_file(child_err, &n);
	assert_true(n > 0 && memchr(text, '\n', n) == text + n - 1); /* one line */
	text[n - 1] = '\0';
	assert_non_null(strstr(text, "cudaFree of 32 bytes at "));
	free(text);
}

/* At the interpreter's exit the runtime may unload before the tensors are
 * freed: no failure, the memory goes with the process. */
static void a_free_while_the_runtime_unloads_is_no_failure(void **state)
{
	answer = cudaErrorCudartUnloading;
	umkit_managed_free(block, 32, 0, NULL);
	assert_ptr_equal(freed, block);
	assert_int_equal(child_status(cudaErrorCudartUnloading, false, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(empty_tensors_get_null_without_a_call, setup),
		cmocka_unit_test_setup(tensors_come_from_managed_memory_and_go_back, setup),
		cmocka_unit_test_setup(a_refused_allocation_ends_the_program, setup),
		cmocka_unit_test_setup(a_failed_free_ends_the_program, setup),
		cmocka_unit_test_setup(a_failed_free_ends_the_program_once, setup),
		cmocka_unit_test_setup(a_free_while_the_runtime_unloads_is_no_failure, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
