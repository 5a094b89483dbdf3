#!/usr/bin/env python3
"""Session 40: does SET_ACCESSED_BY (GPU) alone, with no preferred location,
let a kernel use pages evicted to the host without faulting them back?
512 MB of managed memory written on the GPU and evicted, then a kernel
reading and writing every word, twice, timed (ms); and a kernel reading
every word (peek) likewise. Run from the repository root:
python3 bench/results/2026-11-26/s40/accessed_by_probe.py"""
import json
import sys
import time

sys.path.insert(0, "tests/gpu")
from cudrv import ADVISE_SET_ACCESSED_BY, Gpu  # noqa: E402

SIZE = 512 << 20


def ms(gpu, fn):
    t = time.perf_counter()
    fn()
    gpu.sync()
    return round((time.perf_counter() - t) * 1e3, 2)


def main():
    gpu = Gpu()
    s = gpu.stream()
    out = {}
    for mode in ("plain", "accessed_by"):
        for kernel in ("bump", "peek"):
            ptr = gpu.managed(SIZE)
            if mode == "accessed_by":
                gpu.advise(ptr, SIZE, ADVISE_SET_ACCESSED_BY, True)
            gpu.prefetch(ptr, SIZE, True, s)
            gpu.bump(ptr, SIZE, s)
            gpu.sync()
            run = getattr(gpu, kernel)
            row = {"resident": ms(gpu, lambda: run(ptr, SIZE, s))}
            row["evict"] = ms(gpu, lambda: gpu.prefetch(ptr, SIZE, False, s))
            row["first_pass"] = ms(gpu, lambda: run(ptr, SIZE, s))
            row["second_pass"] = ms(gpu, lambda: run(ptr, SIZE, s))
            row["prefetch_back"] = ms(gpu, lambda: gpu.prefetch(ptr, SIZE, True, s))
            row["after_prefetch"] = ms(gpu, lambda: run(ptr, SIZE, s))
            out[mode + "." + kernel] = row
            gpu.free(ptr)
    print(json.dumps(out, indent=1))


main()
