"""A plan's capacity floor (umplan --json's plan.capacity_floor, docs/planner.md)
at a measured eviction bandwidth, and the least step a run's traffic allows,
for bench/suite_report.py and bench/report.py."""

FIELDS = ("kernel_ns", "window_kernel_ns", "evict_bytes")


def whole(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def bad_field(floor):
    """The first of FIELDS that floor lacks or holds other than a whole
    number >= 0, or None."""
    for k in FIELDS:
        if not isinstance(floor, dict) or not whole(floor.get(k)):
            return k
    return None


def floor_ms(floor, dtoh_gbps):
    """The floor at dtoh_gbps: the kernels' time plus what of its window's
    evictions they cannot cover. umplan picked the window at the bandwidth
    it planned with; any window's figure is a floor (every window's
    evictions must happen), so the one it names still is at another
    bandwidth, if not always the highest."""
    uncovered = floor["evict_bytes"] / dtoh_gbps - floor["window_kernel_ns"]   # B / (GB/s) = ns
    return (floor["kernel_ns"] + max(0.0, uncovered)) / 1e6


def least_ms(ideal_ms, floor, dtoh_mb, htod_mb, calib):
    """The least step a run's traffic allows in any order: ideal's, the
    floor's (floor_ms; None where none was kept), or both directions' time
    added, since the driver migrates one way at a time (docs/benchmarks.md,
    "One migration at a time"). MB / (GB/s) = ms."""
    return max(ideal_ms, floor or 0, dtoh_mb / calib["dtoh_gbps"] + htod_mb / calib["htod_gbps"])
