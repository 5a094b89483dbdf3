#!/usr/bin/env python3
"""Measure the constants umplan's simulator uses, on this GPU, and print them
as one JSON object that `umplan --simulate --constants FILE` reads:

  htod_gbps      prefetch to the GPU, one call over the whole range
  dtoh_gbps      prefetch to the host (eviction), one call
                 (both the median of SAMPLES round trips after one to warm up;
                 htod_gbps_range and dtoh_gbps_range hold the slowest and the
                 fastest: eviction varied 3x between single samples)
  fault_gbps     a kernel touching every 4 KiB page of host-resident data
  call_cost_us   one prefetch call whose range is already there
  fault_batch_us a kernel touching one page of one host-resident 2 MB block,
                 less the same kernel on resident data

and, for the record, how much the device memory in use dropped after
evicting the range (used_drop_after_evict_bytes).

Usage: python3 tests/gpu/calibrate.py [GIB]   (default 1; never more than a
quarter of the GPU's free memory)"""
import json
import statistics
import sys
import time

from cudrv import MB2, Gpu, timed

SAMPLES = 5


def main():
    gib = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    size = int(gib * (1 << 30)) // MB2 * MB2
    gpu = Gpu()
    ptr = gpu.managed(size)
    s = gpu.stream()

    def move(to_gpu, nbytes=size):
        return timed(lambda: (gpu.prefetch(ptr, nbytes, to_gpu, s), gpu.sync(s)))

    # One round trip warms the path: the first eviction also makes the host pages.
    move(False)
    move(True)
    out = {"bytes": size, "samples": SAMPLES}
    trips = [(move(False), move(True)) for _ in range(SAMPLES)]
    for key, times in (("dtoh", [t[0] for t in trips]), ("htod", [t[1] for t in trips])):
        rates = sorted(size / t / 1e9 for t in times)
        out[key + "_gbps"] = round(statistics.median(rates), 2)
        out[key + "_gbps_range"] = [round(rates[0], 2), round(rates[-1], 2)]

    # Faults: every page of host-resident data touched by one kernel.
    move(False)
    fault = timed(lambda: (gpu.touch(ptr, size, s), gpu.sync(s)))
    out["fault_gbps"] = round(size / fault / 1e9, 2)

    # One call that moves nothing: the fixed cost of a migration call.
    out["call_cost_us"] = round(statistics.median(move(True, MB2) for _ in range(50)) * 1e6, 1)

    # One faulting 2 MB block against the same kernel with it resident.
    resident = statistics.median(timed(lambda: (gpu.touch(ptr, 4096, s), gpu.sync(s))) for _ in range(20))
    faulting = []
    for _ in range(20):
        move(False, MB2)
        faulting.append(timed(lambda: (gpu.touch(ptr, 4096, s), gpu.sync(s))))
    out["fault_batch_us"] = round(max(statistics.median(faulting) - resident, 0) * 1e6, 1)

    # Does evicting managed memory give the device memory back?
    move(True)
    def used():
        free_b, total_b = gpu.mem_info()
        return total_b - free_b
    on_gpu = used()
    move(False)
    time.sleep(0.5)
    out["used_drop_after_evict_bytes"] = on_gpu - used()
    gpu.free(ptr)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
