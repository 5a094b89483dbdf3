"""Probe (session 24): what does a GEMM pay for an operand kept in host memory, mapped for the
GPU, in passes over that operand? The planner prices a kernel's use of a host tensor as one pass
(plan/host.h) and keeps tensors used by more than 3 kernels off the host because a GEMM reads an
operand once per output tile. ViT-B/16 MLP shapes at batch 64 (12608 tokens, 768 -> 3072), fp32:
each operand in managed memory, resident or on the host (preferred location host, accessed by
the GPU); CUDA-event medians of 20 runs. Prints one JSON object."""
import json
import statistics
import sys

import torch

sys.path.insert(0, "tests/gpu")
from cudrv import ADVISE_SET_ACCESSED_BY, ADVISE_SET_PREFERRED_LOCATION, Gpu  # noqa: E402

gpu = Gpu()
stream = gpu.stream()


class Managed:
    """A torch view of size bytes of managed memory (kept alive with the tensor)."""

    def __init__(self, shape):
        self.size = 4 * shape[0] * shape[1]
        self.ptr = gpu.managed(self.size)
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (self.ptr, False),
                                         "version": 3, "strides": None}

    def tensor(self):
        t = torch.as_tensor(self, device="cuda")
        t.normal_()
        torch.cuda.synchronize()
        return t

    def to_host(self):
        gpu.advise(self.ptr, self.size, ADVISE_SET_PREFERRED_LOCATION, False)
        gpu.advise(self.ptr, self.size, ADVISE_SET_ACCESSED_BY, True)
        gpu.prefetch(self.ptr, self.size, False, stream)
        gpu.sync()


def timed(fn, reps=20):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


M, K, N = 64 * 197, 768, 3072
ops = {
    "pass over x (x * 2)": ("x", lambda x, w, dy: x * 2),
    "pass over w (w * 2)": ("w", lambda x, w, dy: w * 2),
    "forward x @ w (x: activation)": ("x", lambda x, w, dy: x @ w),
    "weight grad dy^T @ x (x: activation)": ("x", lambda x, w, dy: dy.t() @ x),
    "forward x @ w (w: weight)": ("w", lambda x, w, dy: x @ w),
    "input grad dy @ w^T (w: weight)": ("w", lambda x, w, dy: dy @ w.t()),
}
out = {"shapes": {"x": [M, K], "w": [K, N], "dy": [M, N]}, "ms": {}}
for name, (which, fn) in ops.items():
    row = {}
    for where in ("resident", "host"):
        bufs = {"x": Managed((M, K)), "w": Managed((K, N)), "dy": Managed((M, N))}
        ts = {k: v.tensor() for k, v in bufs.items()}
        if where == "host":
            bufs[which].to_host()
        row[where] = round(timed(lambda: fn(ts["x"], ts["w"], ts["dy"])), 3)
        del ts
        for b in bufs.values():
            gpu.free(b.ptr)
    row["extra"] = round(row["host"] - row["resident"], 3)
    out["ms"][name] = row
out["x_mb"] = round(4 * M * K / 1e6, 1)
out["w_mb"] = round(4 * K * N / 1e6, 1)
one_pass = {"x": out["ms"]["pass over x (x * 2)"]["extra"], "w": out["ms"]["pass over w (w * 2)"]["extra"]}
for name, (which, _) in ops.items():
    out["ms"][name]["passes"] = round(out["ms"][name]["extra"] / one_pass[which], 2) if one_pass[which] > 0 else None
print(json.dumps(out, indent=1))
