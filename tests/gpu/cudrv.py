"""The CUDA driver API through ctypes, for the GPU scripts that measure
Unified Memory (calibrate.py, um_costs.py): no extra packages needed on the
GPU machine. Every call is checked; a failure ends the script with the
call's name and CUDA error number."""
import ctypes
import time

cuda = ctypes.CDLL("libcuda.so.1")

LOC_DEVICE, LOC_HOST = 1, 2  # CU_MEM_LOCATION_TYPE_DEVICE / _HOST
# CUmem_advise values
ADVISE_SET_READ_MOSTLY, ADVISE_UNSET_READ_MOSTLY = 1, 2
ADVISE_SET_PREFERRED_LOCATION, ADVISE_UNSET_PREFERRED_LOCATION = 3, 4
ADVISE_SET_ACCESSED_BY, ADVISE_UNSET_ACCESSED_BY = 5, 6
MB2 = 2 << 20

# touch writes one word in every 4 KiB page of [p, p + pages * 4096): it
# touches every page, as a kernel reading or writing a tensor would.
KERNELS_PTX = b"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry touch(.param .u64 p, .param .u64 pages)
{
	.reg .u64 %rd<8>;
	.reg .u32 %r<4>;
	.reg .pred %out;
	ld.param.u64 %rd1, [p];
	ld.param.u64 %rd2, [pages];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mul.wide.u32 %rd3, %r1, %r2;
	cvt.u64.u32 %rd4, %r3;
	add.u64 %rd3, %rd3, %rd4;
	setp.ge.u64 %out, %rd3, %rd2;
	@%out ret;
	shl.b64 %rd5, %rd3, 12;
	add.u64 %rd6, %rd1, %rd5;
	st.global.u32 [%rd6], %r3;
	ret;
}

// bump adds `add` to every 32-bit word of [p, p + n16 * 16), 16 bytes per
// thread and loop pass (grid-stride): with add 1 it reads and writes all of
// the data, at the rate a memory-bound kernel would; with add 0 it only
// reads (the store is skipped, and the loads stay: the store would use them).
.visible .entry bump(.param .u64 p, .param .u64 n16, .param .u64 add)
{
	.reg .u64 %rd<9>;
	.reg .u32 %r<10>;
	.reg .pred %done, %store;
	ld.param.u64 %rd1, [p];
	ld.param.u64 %rd2, [n16];
	ld.param.u64 %rd8, [add];
	cvt.u32.u64 %r9, %rd8;
	setp.ne.u32 %store, %r9, 0;
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mov.u32 %r4, %nctaid.x;
	mul.wide.u32 %rd3, %r1, %r2;
	cvt.u64.u32 %rd4, %r3;
	add.u64 %rd3, %rd3, %rd4;
	mul.wide.u32 %rd5, %r4, %r2;
NEXT:
	setp.ge.u64 %done, %rd3, %rd2;
	@%done ret;
	shl.b64 %rd6, %rd3, 4;
	add.u64 %rd7, %rd1, %rd6;
	ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd7];
	add.u32 %r5, %r5, %r9;
	add.u32 %r6, %r6, %r9;
	add.u32 %r7, %r7, %r9;
	add.u32 %r8, %r8, %r9;
	@%store st.global.v4.u32 [%rd7], {%r5, %r6, %r7, %r8};
	add.u64 %rd3, %rd3, %rd5;
	bra NEXT;
}

// Runs for the given number of nanoseconds (one thread): a kernel that
// keeps the GPU busy without touching memory.
.visible .entry spin(.param .u64 ns)
{
	.reg .u64 %t<4>;
	.reg .pred %more;
	ld.param.u64 %t1, [ns];
	mov.u64 %t2, %globaltimer;
	add.u64 %t1, %t1, %t2;
WAIT:
	mov.u64 %t3, %globaltimer;
	setp.lt.u64 %more, %t3, %t1;
	@%more bra WAIT;
	ret;
}
"""


class MemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


def check(rc, what):
    if rc != 0:
        raise SystemExit(f"{what} failed with CUDA error {rc}")


class Gpu:
    """Device 0's primary context, made current on the calling thread."""

    def __init__(self):
        check(cuda.cuInit(0), "cuInit")
        self.dev, self.ctx = ctypes.c_int(), ctypes.c_void_p()
        check(cuda.cuDeviceGet(ctypes.byref(self.dev), 0), "cuDeviceGet")
        check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), self.dev), "cuDevicePrimaryCtxRetain")
        self.bind()
        self._module = None

    def bind(self):
        """Makes the context current on this thread (each thread must)."""
        check(cuda.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")

    def mem_info(self):
        free_b, total_b = ctypes.c_size_t(), ctypes.c_size_t()
        check(cuda.cuMemGetInfo_v2(ctypes.byref(free_b), ctypes.byref(total_b)), "cuMemGetInfo")
        return free_b.value, total_b.value

    def managed(self, size):
        """size bytes of managed memory, written once on the GPU (resident there)."""
        free_b, _ = self.mem_info()
        if size > free_b // 4:
            raise SystemExit("refusing to ask for more than a quarter of the free GPU memory")
        ptr = ctypes.c_uint64()
        check(cuda.cuMemAllocManaged(ctypes.byref(ptr), ctypes.c_size_t(size), 1), "cuMemAllocManaged")
        check(cuda.cuMemsetD8_v2(ptr, ctypes.c_ubyte(1), ctypes.c_size_t(size)), "cuMemsetD8")
        self.sync()
        return ptr.value

    def free(self, ptr):
        check(cuda.cuMemFree_v2(ctypes.c_uint64(ptr)), "cuMemFree")

    def stream(self):
        s = ctypes.c_void_p()
        check(cuda.cuStreamCreate(ctypes.byref(s), 1), "cuStreamCreate")  # non-blocking
        return s

    def sync(self, stream=None):
        if stream is None:
            check(cuda.cuCtxSynchronize(), "cuCtxSynchronize")
        else:
            check(cuda.cuStreamSynchronize(stream), "cuStreamSynchronize")

    def idle(self, stream):
        """True once everything queued on stream has finished."""
        rc = cuda.cuStreamQuery(stream)
        if rc not in (0, 600):  # CUDA_ERROR_NOT_READY
            check(rc, "cuStreamQuery")
        return rc == 0

    def gate(self):
        """A 32-bit word in pinned host memory the GPU can read: (host
        address, device address). wait_value makes a stream wait for it."""
        host, dev = ctypes.c_void_p(), ctypes.c_uint64()
        check(cuda.cuMemHostAlloc(ctypes.byref(host), ctypes.c_size_t(4), 2), "cuMemHostAlloc")  # DEVICEMAP
        check(cuda.cuMemHostGetDevicePointer_v2(ctypes.byref(dev), host, 0), "cuMemHostGetDevicePointer")
        ctypes.c_uint32.from_address(host.value).value = 0
        return host.value, dev.value

    def wait_value(self, stream, dev, value):
        """stream waits until the word at dev is at least value."""
        check(cuda.cuStreamWaitValue32_v2(stream, ctypes.c_uint64(dev), ctypes.c_uint32(value), 0, 0),
              "cuStreamWaitValue32")

    def event(self):
        ev = ctypes.c_void_p()
        check(cuda.cuEventCreate(ctypes.byref(ev), 2), "cuEventCreate")  # disable timing
        return ev

    def record(self, ev, stream):
        check(cuda.cuEventRecord(ev, stream), "cuEventRecord")

    def wait(self, stream, ev):
        check(cuda.cuStreamWaitEvent(stream, ev, 0), "cuStreamWaitEvent")

    def location(self, to_gpu):
        return MemLocation(LOC_DEVICE, self.dev.value) if to_gpu else MemLocation(LOC_HOST, 0)

    def prefetch(self, ptr, size, to_gpu, stream):
        check(cuda.cuMemPrefetchAsync_v2(ctypes.c_uint64(ptr), ctypes.c_size_t(size),
                                         self.location(to_gpu), 0, stream), "cuMemPrefetchAsync")

    @staticmethod
    def _ranges(ranges):
        n = len(ranges)
        ptrs = (ctypes.c_uint64 * n)(*[r[0] for r in ranges])
        sizes = (ctypes.c_size_t * n)(*[r[1] for r in ranges])
        return n, ptrs, sizes

    def prefetch_batch(self, ranges, to_gpu, stream):
        n, ptrs, sizes = self._ranges(ranges)
        loc, idx = self.location(to_gpu), ctypes.c_size_t(0)
        check(cuda.cuMemPrefetchBatchAsync(ptrs, sizes, ctypes.c_size_t(n), ctypes.byref(loc),
                                           ctypes.byref(idx), ctypes.c_size_t(1), ctypes.c_ulonglong(0),
                                           stream), "cuMemPrefetchBatchAsync")

    def advise(self, ptr, size, advice, to_gpu):
        check(cuda.cuMemAdvise_v2(ctypes.c_uint64(ptr), ctypes.c_size_t(size), ctypes.c_int(advice),
                                  self.location(to_gpu)), "cuMemAdvise")

    def pinned(self, size):
        """size bytes of page-locked host memory."""
        host = ctypes.c_void_p()
        check(cuda.cuMemHostAlloc(ctypes.byref(host), ctypes.c_size_t(size), 0), "cuMemHostAlloc")
        return host.value

    def free_pinned(self, host):
        check(cuda.cuMemFreeHost(ctypes.c_void_p(host)), "cuMemFreeHost")

    def copy(self, dst, src, size, stream, to_gpu):
        """An asynchronous copy between device (or managed) and host memory."""
        if to_gpu:
            check(cuda.cuMemcpyHtoDAsync_v2(ctypes.c_uint64(dst), ctypes.c_void_p(src), ctypes.c_size_t(size),
                                            stream), "cuMemcpyHtoDAsync")
        else:
            check(cuda.cuMemcpyDtoHAsync_v2(ctypes.c_void_p(dst), ctypes.c_uint64(src), ctypes.c_size_t(size),
                                            stream), "cuMemcpyDtoHAsync")

    def discard_batch(self, ranges, stream):
        n, ptrs, sizes = self._ranges(ranges)
        check(cuda.cuMemDiscardBatchAsync(ptrs, sizes, ctypes.c_size_t(n), ctypes.c_ulonglong(0), stream),
              "cuMemDiscardBatchAsync")

    def discard_prefetch_batch(self, ranges, stream):
        n, ptrs, sizes = self._ranges(ranges)
        loc, idx = self.location(True), ctypes.c_size_t(0)
        check(cuda.cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, ctypes.c_size_t(n), ctypes.byref(loc),
                                                     ctypes.byref(idx), ctypes.c_size_t(1),
                                                     ctypes.c_ulonglong(0), stream),
              "cuMemDiscardAndPrefetchBatchAsync")

    def _launch(self, name, grid, block, stream, *values):
        if self._module is None:
            mod = ctypes.c_void_p()
            check(cuda.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(KERNELS_PTX)), "cuModuleLoadData")
            self._module = mod
        fn = ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(fn), self._module, name), "cuModuleGetFunction")
        vals = [ctypes.c_uint64(v) for v in values]
        args = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
        check(cuda.cuLaunchKernel(fn, ctypes.c_uint(grid), 1, 1, ctypes.c_uint(block), 1, 1, 0, stream, args,
                                  None), "cuLaunchKernel")

    def touch(self, ptr, size, stream):
        """Launches the page-touching kernel over [ptr, ptr + size)."""
        pages = size // 4096
        self._launch(b"touch", (pages + 255) // 256, 256, stream, ptr, pages)

    def bump(self, ptr, size, stream):
        """Launches the kernel that reads and writes every word of [ptr, ptr + size)."""
        self._launch(b"bump", 132 * 8, 256, stream, ptr, size // 16, 1)

    def peek(self, ptr, size, stream):
        """Launches the kernel that reads every word of [ptr, ptr + size) and writes none."""
        self._launch(b"bump", 132 * 8, 256, stream, ptr, size // 16, 0)

    def spin(self, seconds, stream):
        """Launches a kernel that keeps the GPU busy for seconds."""
        self._launch(b"spin", 1, 1, stream, int(seconds * 1e9))


def blocks(ptr, size, block=MB2):
    """[ptr, ptr + size) as (address, bytes) ranges of block bytes."""
    return [(ptr + o, min(block, size - o)) for o in range(0, size, block)]


def timed(fn):
    """Seconds fn() takes."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t
