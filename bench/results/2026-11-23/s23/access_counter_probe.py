"""Scratch probe (session 23): does the UVM driver migrate hot pages of host-resident
managed memory to the GPU by its access counters (AccessedBy GPU, no preferred location)?"""
import glob, json, os, sys, time
sys.path.insert(0, "tests/gpu")
from cudrv import ADVISE_SET_ACCESSED_BY, ADVISE_SET_PREFERRED_LOCATION, ADVISE_UNSET_PREFERRED_LOCATION, Gpu, timed

out = {}
for p in sorted(glob.glob("/sys/module/nvidia_uvm/parameters/*")):
    try:
        out[os.path.basename(p)] = open(p).read().strip()
    except OSError as e:
        out[os.path.basename(p)] = str(e)
try:
    out["driver"] = open("/proc/driver/nvidia/version").read().splitlines()[0]
except OSError:
    pass
gpu = Gpu()
s = gpu.stream()
size, hot = 1 << 30, 64 << 20
for case in ("accessed_by", "preferred_host"):
    ptr = gpu.managed(size)
    gpu.prefetch(ptr, size, False, s); gpu.sync()
    if case == "preferred_host":
        gpu.advise(ptr, size, ADVISE_SET_PREFERRED_LOCATION, False)
    gpu.advise(ptr, size, ADVISE_SET_ACCESSED_BY, True)
    ts = []
    for i in range(60):
        ts.append(round(timed(lambda: (gpu.bump(ptr, hot, s), gpu.sync())) * 1e3, 3))
    out[case + "_ms_per_64MB_pass"] = ts
    gpu.free(ptr)
print(json.dumps(out, indent=0))
