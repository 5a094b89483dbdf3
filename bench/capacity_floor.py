"""A plan's capacity floor (umplan --json's plan.capacity_floor, docs/planner.md)
at a measured eviction bandwidth, and the least step a run's traffic allows,
for bench/suite_report.py and bench/report.py."""

FIELDS = ("kernel_ns", "window_kernel_ns", "evict_bytes")
WINDOW_FIELDS = ("evict_bytes", "kernel_ns")


def whole(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def not_whole(key):
    return f"{key} is missing or not a whole number >= 0"


def bad_field(floor):
    """What is wrong with floor, naming the field, or None: one of FIELDS
    missing or other than a whole number >= 0, or "windows" other than a
    list of objects with WINDOW_FIELDS so (absent, as umplan wrote floors
    before session 88, it is none)."""
    for k in FIELDS:
        if not isinstance(floor, dict) or not whole(floor.get(k)):
            return not_whole(k)
    windows = floor.get("windows", [])
    if not isinstance(windows, list) or not all(
            isinstance(w, dict) and all(whole(w.get(k)) for k in WINDOW_FIELDS) for w in windows):
        return "windows is not a list of windows, each with evict_bytes and kernel_ns whole numbers >= 0"
    return None


def uncovered_ns(evict_bytes, kernel_ns, dtoh_gbps):
    """What of a window's evictions its kernels cannot cover. B / (GB/s) = ns."""
    return max(0.0, evict_bytes / dtoh_gbps - kernel_ns)


def floor_ms(floor, dtoh_gbps):
    """The floor at dtoh_gbps: the kernels' time plus what of the
    evictions they cannot cover, in the tightest window alone or in the
    disjoint windows together, whichever is more. umplan picked the
    windows at the bandwidth it planned with; every window's evictions
    must happen, and disjoint ones one after another, so the ones it
    names still give a floor at another bandwidth, if not always the
    highest."""
    one = uncovered_ns(floor["evict_bytes"], floor["window_kernel_ns"], dtoh_gbps)
    apart = sum(uncovered_ns(w["evict_bytes"], w["kernel_ns"], dtoh_gbps) for w in floor.get("windows", []))
    return (floor["kernel_ns"] + max(one, apart)) / 1e6


def least_ms(ideal_ms, floor, dtoh_mb, htod_mb, calib):
    """The least step a run's traffic allows in any order: ideal's, the
    floor's (floor_ms; None where none was kept), or both directions' time
    added, since the driver migrates one way at a time (docs/benchmarks.md,
    "One migration at a time"). MB / (GB/s) = ms."""
    return max(ideal_ms, floor or 0, dtoh_mb / calib["dtoh_gbps"] + htod_mb / calib["htod_gbps"])
