/*
 * Unit tests for counting the GPU memory a program gets past the shim
 * (common/cuda/driver_allocs.c), linked with fakes of the CUPTI call it
 * makes and of the runtime table's mark of the tools' own allocations: no
 * GPU, no CUPTI. Callbacks are made up as CUPTI hands them over.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "common/cuda/cudart.h"
#include "common/cuda/driver_allocs.h"

/* ---- the fakes ---- */

static CUpti_CallbackId enabled[32];
static size_t n_enabled;
static bool own;

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
				CUpti_CallbackId cbid)
{
	assert_int_equal(enable, 1);
	assert_int_equal(domain, CUPTI_CB_DOMAIN_DRIVER_API);
	if (n_enabled < sizeof enabled / sizeof enabled[0])
		enabled[n_enabled++] = cbid;
	return CUPTI_SUCCESS;
}

bool cudart_own_allocation(void)
{
	return own;
}

/* ---- helpers ---- */

/* The context current at the calls made up: two made-up handles. */
static CUcontext const gpu0 = (CUcontext)0x1000, gpu1 = (CUcontext)0x2000;
static CUcontext current = gpu0;

/* Makes the callback of a call with params that returned result, at site. */
static void call(CUpti_CallbackId cbid, const char *name, const void *params, CUresult result,
		 CUpti_ApiCallbackSite site)
{
	CUpti_CallbackData cb = { 0 };
	cb.callbackSite = site;
	cb.context = current;
	cb.functionName = name;
	cb.functionParams = params;
	cb.functionReturnValue = &result;
	driver_allocs_note(cbid, &cb);
}

static void granted(CUpti_CallbackId cbid, const char *name, const void *params)
{
	call(cbid, name, params, CUDA_SUCCESS, CUPTI_API_EXIT);
}

static void counted_of(enum driver_mem kind, uint64_t count, uint64_t bytes)
{
	uint64_t c, b, p;
	driver_allocs_get(kind, &c, &b, &p);
	assert_int_equal(c, count);
	assert_int_equal(b, bytes);
}

static uint64_t peak_of(enum driver_mem kind)
{
	uint64_t c, b, p;
	driver_allocs_get(kind, &c, &b, &p);
	return p;
}

/* The device memory's, which most tests follow. */
static void counted(uint64_t count, uint64_t bytes)
{
	counted_of(DRIVER_MEM_DEVICE, count, bytes);
}

static uint64_t peak(void)
{
	return peak_of(DRIVER_MEM_DEVICE);
}

#define D(name) CUPTI_DRIVER_TRACE_CBID_##name

/* ---- tests, in order: the counters are the process's ---- */

static void test_subscribes_to_the_allocating_calls(void **state)
{
	assert_int_equal(driver_allocs_enable(NULL, "test"), CUPTI_SUCCESS);
	assert_int_equal(n_enabled, 15);
	for (size_t i = 0; i < n_enabled; i++)
		assert_true(driver_allocs_cbid(enabled[i]));
	assert_true(driver_allocs_cbid(D(cuMemCreate)));
	assert_true(driver_allocs_cbid(D(cuMemAlloc_v2)));
	assert_false(driver_allocs_cbid(D(cuLaunchKernel)));
	assert_false(driver_allocs_cbid(D(cuMemAllocHost_v2))); /* host memory */
	assert_true(driver_allocs_cbid(D(cuMemFree_v2)));
	assert_true(driver_allocs_cbid(D(cuMemRelease)));
	assert_false(driver_allocs_cbid(D(cuMemFreeHost)));
}

static CUdeviceptr dptr;

static void first_allocation(void)
{
	cuMemAlloc_v2_params p = { &dptr, 4 << 20 };
	call(D(cuMemAlloc_v2), "cuMemAlloc_v2", &p, CUDA_SUCCESS, CUPTI_API_ENTER); /* not yet granted */
	call(D(cuMemAlloc_v2), "cuMemAlloc_v2", &p, CUDA_ERROR_OUT_OF_MEMORY, CUPTI_API_EXIT);
	counted(0, 0);
	granted(D(cuMemAlloc_v2), "cuMemAlloc_v2", &p);
	counted(1, 4 << 20);
	granted(D(cuMemAlloc_v2), "cuMemAlloc_v2", &p);
	counted(2, 8 << 20);
}

/* Counted, not warned of: a PyTorch program's libraries make some. */
static void test_counts_what_was_granted(void **state)
{
	assert_string_equal(stderr_of(first_allocation), "");
}

static void test_sizes_of_each_call(void **state)
{
	CUdeviceptr_v1 small;
	unsigned int pitch_v1 = 512;
	size_t pitch = 1024;
	cuMemAlloc_params v1 = { &small, 1000 };
	cuMemAllocPitch_params pitched_v1 = { &small, &pitch_v1, 500, 3, 4 };
	cuMemAllocPitch_v2_params pitched = { &dptr, &pitch, 1000, 7, 4 };
	cuMemAllocAsync_ptsz_params ordered = { &dptr, 5000, NULL };
	cuMemAllocFromPoolAsync_params pooled = { &dptr, 6000, NULL, NULL };
	counted(2, 8 << 20);
	granted(D(cuMemAlloc), "cuMemAlloc", &v1);
	granted(D(cuMemAllocPitch), "cuMemAllocPitch", &pitched_v1);
	granted(D(cuMemAllocPitch_v2), "cuMemAllocPitch_v2", &pitched);
	granted(D(cuMemAllocAsync_ptsz), "cuMemAllocAsync_ptsz", &ordered);
	granted(D(cuMemAllocFromPoolAsync), "cuMemAllocFromPoolAsync", &pooled);
	counted(7, (8 << 20) + 1000 + 512 * 3 + 1024 * 7 + 5000 + 6000);
}

static void managed_allocations(void)
{
	CUdeviceptr managed_ptr = 0x7a0000000000;
	cuMemAllocManaged_params managed = { &managed_ptr, 3000, CU_MEM_ATTACH_GLOBAL };
	uint64_t c, b, p;
	driver_allocs_get(DRIVER_MEM_DEVICE, &c, &b, &p);
	counted_of(DRIVER_MEM_MANAGED, 0, 0);
	granted(D(cuMemAllocManaged), "cuMemAllocManaged", &managed);
	counted_of(DRIVER_MEM_MANAGED, 1, 3000);
	assert_int_equal(peak_of(DRIVER_MEM_MANAGED), 3000);
	managed.bytesize = 5000;
	managed_ptr += 4096; /* another allocation */
	granted(D(cuMemAllocManaged), "cuMemAllocManaged", &managed);
	counted_of(DRIVER_MEM_MANAGED, 2, 8000);
	assert_int_equal(peak_of(DRIVER_MEM_MANAGED), 8000);
	/* None of it is device memory. */
	counted(c, b);
	assert_int_equal(peak(), p);
}

/* Managed memory is counted apart from the device memory, and warned of
 * once: umkit neither records nor plans it. */
static void test_managed_memory_counted_apart_and_warned_of_once(void **state)
{
	const char *err = stderr_of(managed_allocations);
	const char *warned = strstr(err, "allocated 2.93 KiB of managed memory with cuMemAllocManaged, past umkit's "
					 "allocator: the driver migrates and evicts that memory on its own, and test");
	assert_non_null(warned);
	assert_null(strstr(warned + 1, "allocated ")); /* one warning */
}

static CUmemGenericAllocationHandle mapping;

/* Physical memory on the device counts, on the host not. */
static void mappings(void)
{
	CUmemAllocationProp on_device = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
					  .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUmemAllocationProp on_host = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
					.location = { CU_MEM_LOCATION_TYPE_HOST, 0 } };
	cuMemCreate_params device_p = { &mapping, 2 << 20, &on_device, 0 }, host_p = { &mapping, 2 << 20, &on_host, 0 };
	uint64_t c, b, p;
	driver_allocs_get(DRIVER_MEM_DEVICE, &c, &b, &p);
	granted(D(cuMemCreate), "cuMemCreate", &host_p);
	counted(c, b);
	granted(D(cuMemCreate), "cuMemCreate", &device_p);
	granted(D(cuMemCreate), "cuMemCreate", &device_p);
	counted(c + 2, b + (4 << 20));
}

static void test_device_mappings_counted_and_warned_of_once(void **state)
{
	const char *err = stderr_of(mappings);
	assert_non_null(strstr(err, "mapped 2.00 MiB with cuMemCreate, past umkit's allocator (PyTorch's expandable "
				    "segments map their memory so): that memory is plain device memory, and test"));
	assert_null(strstr(strstr(err, "cuMemCreate") + 1, "cuMemCreate,")); /* one warning */
}

static void test_the_tools_own_are_not_counted(void **state)
{
	uint64_t c, b, p, mc, mb, mp;
	cuMemAllocManaged_params arena_segment = { &dptr, 64 << 20, CU_MEM_ATTACH_GLOBAL };
	cuMemAlloc_v2_params device_segment = { &dptr, 64 << 20 };
	driver_allocs_get(DRIVER_MEM_DEVICE, &c, &b, &p);
	driver_allocs_get(DRIVER_MEM_MANAGED, &mc, &mb, &mp);
	own = true;
	granted(D(cuMemAllocManaged), "cuMemAllocManaged", &arena_segment);
	granted(D(cuMemAlloc_v2), "cuMemAlloc_v2", &device_segment);
	own = false;
	counted(c, b);
	assert_int_equal(peak(), p);
	counted_of(DRIVER_MEM_MANAGED, mc, mb);
	assert_int_equal(peak_of(DRIVER_MEM_MANAGED), mp);
}

/* A call's callback at its successful exit. The id is pasted here, not
 * through D: cuda.h maps some names to their _v2 (cuMemAlloc, cuMemFree),
 * and an argument passed on is expanded. */
#define GRANTED(name, params) granted(CUPTI_DRIVER_TRACE_CBID_##name, #name, params)

/* Each call's memory, by what gives it back. */
static void test_the_peak_follows_what_is_given_back(void **state)
{
	/* What the tests above left held: the stream-ordered and the mapped
	 * memory by name, the rest with its context. */
	cuMemFreeAsync_params free_pooled = { dptr, NULL };
	cuMemRelease_params release_mapped = { mapping };
	granted(D(cuMemFreeAsync), "cuMemFreeAsync", &free_pooled);
	granted(D(cuMemRelease), "cuMemRelease", &release_mapped);
	driver_allocs_context_reset(gpu0);
	const uint64_t mib = 1 << 20, big = peak() + 8 * mib; /* above every earlier peak */
	CUdeviceptr a = 0x7f0000000000, b = 0x7f0000400000, c = 0x7f0000800000;
	CUdeviceptr_v1 small = 0x1000;
	CUmemGenericAllocationHandle h = 0x1000; /* a handle may equal a pointer */
	CUmemAllocationProp on_device = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
					  .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	cuMemAlloc_v2_params alloc_a = { &a, big }, alloc_c = { &c, 3 * mib };
	cuMemAllocAsync_params alloc_b = { &b, 2 * mib, NULL };
	cuMemAlloc_params alloc_small = { &small, 4096 };
	cuMemCreate_params map_h = { &h, 2 * mib, &on_device, 0 };
	cuMemFree_v2_params free_a = { a }, free_c = { c }, unknown = { 0x5000 };
	cuMemFreeAsync_ptsz_params free_b = { b, NULL };
	cuMemFree_params free_small = { small };
	cuMemRelease_params release_h = { h };

	GRANTED(cuMemAlloc_v2, &alloc_a);
	GRANTED(cuMemAllocAsync, &alloc_b);
	assert_int_equal(peak(), big + 2 * mib);
	call(D(cuMemFree_v2), "cuMemFree_v2", &free_a, CUDA_ERROR_INVALID_VALUE, CUPTI_API_EXIT); /* kept */
	GRANTED(cuMemFree_v2, &free_a);
	GRANTED(cuMemFree_v2, &free_a); /* given back once */
	GRANTED(cuMemAlloc, &alloc_small);
	GRANTED(cuMemCreate, &map_h);
	assert_int_equal(peak(), big + 2 * mib); /* 4 MiB and 4 KiB held */
	GRANTED(cuMemAlloc_v2, &alloc_a);
	assert_int_equal(peak(), big + 4 * mib + 4096);

	/* The mapping's 2 MiB, then the pointer's 4 KiB, with the same key. */
	GRANTED(cuMemRelease, &release_h);
	GRANTED(cuMemFree, &free_small);
	GRANTED(cuMemAlloc_v2, &alloc_c); /* big + 2 MiB held before */
	assert_int_equal(peak(), big + 5 * mib);

	/* Memory not counted (from before the subscription, or the tools'
	 * own) given back: nothing to take off. */
	GRANTED(cuMemFree_v2, &unknown);
	GRANTED(cuMemFree_v2, &free_a);
	GRANTED(cuMemFreeAsync_ptsz, &free_b);
	GRANTED(cuMemFree_v2, &free_c);
	/* At a pointer none of them had, so that a free not taken off
	 * cannot pass as an allocation made again in its place. */
	CUdeviceptr d = 0x7f0000c00000;
	cuMemAlloc_v2_params alloc_d = { &d, big + 5 * mib };
	GRANTED(cuMemAlloc_v2, &alloc_d); /* nothing else held */
	assert_int_equal(peak(), big + 5 * mib);
}

/* A context's reset takes what was held in it. */
static void test_a_context_reset_gives_back_what_it_owned(void **state)
{
	uint64_t top = peak(); /* all held now, in gpu0 */
	driver_allocs_context_reset(gpu0);
	CUdeviceptr a = 0x7e0000000000;
	cuMemAlloc_v2_params alloc = { &a, (size_t)top };
	GRANTED(cuMemAlloc_v2, &alloc);
	assert_int_equal(peak(), top);
}

/* Another device's memory, and memory no context owns, outlive it. */
static void test_a_context_reset_leaves_the_rest(void **state)
{
	const uint64_t mib = 1 << 20, top = peak(); /* held now, in gpu0 */
	CUdeviceptr other = 0x7d0000000000, pooled = 0x7d0000100000, owned = 0x7d0000200000;
	CUmemGenericAllocationHandle mapped = 0x3000;
	CUmemAllocationProp on_device = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
					  .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	cuMemAlloc_v2_params alloc_other = { &other, mib }, alloc_owned = { &owned, top + 1 };
	cuMemAllocFromPoolAsync_params alloc_pooled = { &pooled, mib, NULL, NULL };
	cuMemCreate_params map = { &mapped, mib, &on_device, 0 };

	current = gpu1;
	GRANTED(cuMemAlloc_v2, &alloc_other);
	current = gpu0;
	GRANTED(cuMemAllocFromPoolAsync, &alloc_pooled);
	GRANTED(cuMemCreate, &map);
	assert_int_equal(peak(), top + 3 * mib);
	driver_allocs_context_reset(gpu0);
	/* 3 MiB held: top + 1 byte more reaches a new peak by that much. */
	GRANTED(cuMemAlloc_v2, &alloc_owned);
	assert_int_equal(peak(), top + 3 * mib + 1);
}

/* Managed and device memory mixed: each freed by its pointer, what a free
 * gives back comes off the kind that pointer was allocated as. */
static void test_managed_memory_given_back_apart(void **state)
{
	driver_allocs_context_reset(gpu0);
	driver_allocs_context_reset(gpu1);
	/* Held now: no managed memory (the tests above made it in gpu0), and
	 * 2 MiB of device memory no context owns, the pooled and the mapped
	 * of the test above. */
	uint64_t c, b, dev, mc, mb, mp;
	driver_allocs_get(DRIVER_MEM_DEVICE, &c, &b, &dev);
	driver_allocs_get(DRIVER_MEM_MANAGED, &mc, &mb, &mp);
	const uint64_t mib = 1 << 20, big = mp + dev + 8 * mib; /* above either peak */
	/* Each allocation at a pointer of its own: one made again at a
	 * pointer still held would give that back unseen. */
	CUdeviceptr m[3] = { 0x7c0000000000, 0x7c0100000000, 0x7c0200000000 }, n[2] = { 0x7c0300000000, 0x7c0400000000 },
		    d[2] = { 0x7c0500000000, 0x7c0600000000 };
	cuMemAllocManaged_params alloc_m[3], alloc_n[2];
	cuMemAlloc_v2_params alloc_d[2];
	for (int i = 0; i < 3; i++)
		alloc_m[i] = (cuMemAllocManaged_params){ &m[i], big, CU_MEM_ATTACH_GLOBAL };
	for (int i = 0; i < 2; i++) {
		alloc_n[i] = (cuMemAllocManaged_params){ &n[i], mib, CU_MEM_ATTACH_HOST };
		alloc_d[i] = (cuMemAlloc_v2_params){ &d[i], dev };
	}
	cuMemFree_v2_params free_m = { m[0] }, free_d = { d[0] };
	cuMemFreeAsync_params free_n = { n[0], NULL };

	GRANTED(cuMemAllocManaged, &alloc_m[0]);
	GRANTED(cuMemAlloc_v2, &alloc_d[0]);
	assert_int_equal(peak(), dev + 2 * mib); /* big not among it */
	assert_int_equal(peak_of(DRIVER_MEM_MANAGED), big);

	/* Freed, each comes off its own kind: the device memory held is 2 MiB
	 * again, not big less than that, and the managed memory none. */
	GRANTED(cuMemFree_v2, &free_d);
	GRANTED(cuMemFree_v2, &free_m);
	GRANTED(cuMemAlloc_v2, &alloc_d[1]);
	assert_int_equal(peak(), dev + 2 * mib);
	GRANTED(cuMemAllocManaged, &alloc_n[0]);
	GRANTED(cuMemAllocManaged, &alloc_m[1]);
	assert_int_equal(peak_of(DRIVER_MEM_MANAGED), big + mib);

	/* A stream-ordered free gives it back too, and so does its context's
	 * reset. */
	GRANTED(cuMemFreeAsync, &free_n);
	GRANTED(cuMemAllocManaged, &alloc_n[1]);
	assert_int_equal(peak_of(DRIVER_MEM_MANAGED), big + mib);
	driver_allocs_context_reset(gpu0);
	alloc_m[2].bytesize = big + mib;
	GRANTED(cuMemAllocManaged, &alloc_m[2]);
	assert_int_equal(peak_of(DRIVER_MEM_MANAGED), big + mib);
	assert_int_equal(peak(), dev + 2 * mib);

	/* Each allocation counted once, in its kind; the frees count none. */
	counted(c + 2, b + 2 * dev);
	counted_of(DRIVER_MEM_MANAGED, mc + 5, mb + 3 * big + 3 * mib);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_subscribes_to_the_allocating_calls),
		cmocka_unit_test(test_counts_what_was_granted),
		cmocka_unit_test(test_sizes_of_each_call),
		cmocka_unit_test(test_managed_memory_counted_apart_and_warned_of_once),
		cmocka_unit_test(test_device_mappings_counted_and_warned_of_once),
		cmocka_unit_test(test_the_tools_own_are_not_counted),
		cmocka_unit_test(test_the_peak_follows_what_is_given_back),
		cmocka_unit_test(test_a_context_reset_gives_back_what_it_owned),
		cmocka_unit_test(test_a_context_reset_leaves_the_rest),
		cmocka_unit_test(test_managed_memory_given_back_apart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
