#!/usr/bin/env python3
"""Measure Unified Memory migration bandwidths on this GPU: prefetch to the
GPU (HtoD), prefetch to the host (eviction, DtoH), with CUDA's driver API
through ctypes (no extra packages). Prints one JSON object.

Usage: python3 tests/gpu/calibrate.py [GIB]   (default 1; never more than
the GPU has free)"""
import ctypes
import json
import sys
import time

cuda = ctypes.CDLL("libcuda.so.1")


class MemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


LOC_DEVICE, LOC_HOST = 1, 2  # CU_MEM_LOCATION_TYPE_DEVICE / _HOST


def check(rc, what):
    if rc != 0:
        raise SystemExit(f"calibrate: {what} failed with CUDA error {rc}")


def main():
    gib = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    size = int(gib * (1 << 30))
    check(cuda.cuInit(0), "cuInit")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    free_b, total_b = ctypes.c_size_t(), ctypes.c_size_t()
    check(cuda.cuMemGetInfo_v2(ctypes.byref(free_b), ctypes.byref(total_b)), "cuMemGetInfo")
    if size > free_b.value // 4:
        raise SystemExit("calibrate: refusing to ask for more than a quarter of the free GPU memory")
    ptr = ctypes.c_uint64()
    check(cuda.cuMemAllocManaged(ctypes.byref(ptr), ctypes.c_size_t(size), 1), "cuMemAllocManaged")
    stream = ctypes.c_void_p()
    check(cuda.cuStreamCreate(ctypes.byref(stream), 1), "cuStreamCreate")
    check(cuda.cuMemsetD8_v2(ptr, ctypes.c_ubyte(1), ctypes.c_size_t(size)), "cuMemsetD8")
    check(cuda.cuCtxSynchronize(), "cuCtxSynchronize")

    def prefetch(loc_type, loc_id):
        loc = MemLocation(loc_type, loc_id)
        t = time.perf_counter()
        check(cuda.cuMemPrefetchAsync_v2(ptr, ctypes.c_size_t(size), loc, 0, stream), "cuMemPrefetchAsync")
        check(cuda.cuStreamSynchronize(stream), "cuStreamSynchronize")
        return time.perf_counter() - t

    out = {"bytes": size}
    for rep in range(3):  # keep the last of three, the first warms the path
        dtoh = prefetch(LOC_HOST, 0)
        htod = prefetch(LOC_DEVICE, dev.value)
    out["htod_gbps"] = round(size / htod / 1e9, 2)
    out["dtoh_gbps"] = round(size / dtoh / 1e9, 2)

    # Does evicting managed memory give the device memory back? Compare the
    # memory in use with the data on the GPU and after moving it out.
    def used():
        check(cuda.cuMemGetInfo_v2(ctypes.byref(free_b), ctypes.byref(total_b)), "cuMemGetInfo")
        return total_b.value - free_b.value
    on_gpu = used()
    prefetch(LOC_HOST, 0)
    time.sleep(0.5)
    out["used_drop_after_evict_bytes"] = on_gpu - used()
    check(cuda.cuMemFree_v2(ptr), "cuMemFree")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
